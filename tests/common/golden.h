// Loads a golden-vector file written by tests/reference/gen_*.py.
#pragma once

#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace nf::testing {

/// Parses tests/reference/<name>; a missing or malformed file fails the calling test.
inline nlohmann::json load_golden(const std::string& name) {
  std::ifstream in(std::string(NF_SOURCE_DIR) + "/tests/reference/" + name);
  EXPECT_TRUE(in.good()) << "missing golden file " << name;
  auto j = nlohmann::json::parse(in, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "malformed golden file " << name;
  return j;
}

}  // namespace nf::testing
