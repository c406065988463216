// util/strings.h: the progress-line duration format shared by `run` and `judge`.
#include "util/strings.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace nf {
namespace {

TEST(FormatDuration, MinutesSecondsThenHours) {
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(9.4), "0:09");
  EXPECT_EQ(format_duration(9.6), "0:10");
  EXPECT_EQ(format_duration(61), "1:01");
  EXPECT_EQ(format_duration(3599), "59:59");
  EXPECT_EQ(format_duration(3600), "1:00:00");
  EXPECT_EQ(format_duration(3600 + 5 * 60 + 7), "1:05:07");
  EXPECT_EQ(format_duration(26 * 3600 + 59 * 60 + 59), "26:59:59");
}

TEST(FormatDuration, UnknownEta) {
  EXPECT_EQ(format_duration(-1), "--:--");
  EXPECT_EQ(format_duration(NAN), "--:--");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "--:--");
}

TEST(DidYouMean, SuggestsOnlyCloseNames) {
  EXPECT_EQ(did_you_mean("flor", {"floor", "fairness"}), " (did you mean 'floor'?)");
  EXPECT_EQ(did_you_mean("zzzzzz", {"floor", "fairness"}), "");
}

// Byte-wise order, as SQLite's BINARY collation: upper case before lower, "a" before "a2".
TEST(SortedRanks, ByteWiseOrderOfDictionaryEntries) {
  EXPECT_EQ(sorted_ranks({"b", "a2", "B", "a"}), (std::vector<uint32_t>{3, 2, 0, 1}));
  EXPECT_TRUE(sorted_ranks({}).empty());
}

}  // namespace
}  // namespace nf
