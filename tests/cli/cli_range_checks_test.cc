// Whole-number options refuse out-of-range values at parse time with a readable bound
// (exit 2, the option named), not CLI11's "not in range 0.000000 to <300 digits>", an
// internal function name, or silent acceptance of a negative thread count.
#include <gtest/gtest.h>

#include <string>

#include "common/test_data.h"

namespace nf {
namespace {

using testing::run_cli;
using testing::TempDir;

TEST(CliRangeChecks, BadCountsAreRefusedWithAReadableBound) {
  TempDir d;
  struct Case {
    std::string args, option, bound;
  };
  const std::string study = std::string(NF_SOURCE_DIR) + "/examples/sample-floor.yaml";
  const std::string out = " --out " + (d / "o") + " --store " + (d / "s.sqlite") + " --quiet";
  const std::string an = "analyze --store " + (d / "x.sqlite") + " --out " + (d / "o");
  const Case cases[] = {
      {an + " --vote-sizes 0", "--vote-sizes", ">= 1, got '0'"},
      {an + " --vote-sizes 3,-2", "--vote-sizes", ">= 1, got '-2'"},
      {an + " --resamples 0", "--resamples", ">= 1, got '0'"},
      {"check --store " + (d / "x.sqlite") + " --resamples 0", "--resamples", ">= 1, got '0'"},
      {"run " + study + out + " --max-draws 1 --max-consecutive-api-errors -1", "--max-consecutive-api-errors",
       ">= 0, got '-1'"},
      {"run " + study + out + " --max-draws 1 --threads -1", "--threads", ">= 0, got '-1'"},
      {"audit " + study + out + " --max-draws 1 --threads -1", "--threads", ">= 0, got '-1'"},
      {"run " + study + out + " --max-draws -5", "--max-draws", ">= 0, got '-5'"},
      {an + " --resamples 2.5", "--resamples", ">= 1, got '2.5'"},
  };
  for (const auto& c : cases) {
    auto r = run_cli(c.args, d.path());
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.option), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find("must be a whole number " + c.bound), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.find("179769"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("cluster_ratio_interval"), std::string::npos) << r.err;
    EXPECT_LT(r.err.size(), 600u) << r.err;
  }
}

}  // namespace
}  // namespace nf
