// Fault: an error text in the reply ("Error: upstream unavailable") was read as option E/U.
#include <gtest/gtest.h>

#include "task/mcq.h"

namespace nf {
namespace {

TEST(RegressionErrorUpstream, ErrorTextIsNoAnswer) {
  const std::vector<std::string> letters = {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"};
  EXPECT_EQ(extract_choice("Error: upstream unavailable", letters), std::nullopt);
  EXPECT_EQ(extract_choice("ERROR: Upstream Unavailable", letters), std::nullopt);
}

}  // namespace
}  // namespace nf
