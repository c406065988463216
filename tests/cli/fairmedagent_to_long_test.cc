// scripts/fairmedagent-to-long (tester s9 finding 22.10: the README's published 374/4320 could
// not be reproduced without reading C++ test code): the shipped script's long CSV equals,
// byte for byte, the conversion the tests use (common/test_data.h), which the test
// Cli.ImportedFairMedAgentDrawsReproducePublishedFloors imports and checks against the
// published floors.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "common/test_data.h"

namespace nf {
namespace {

TEST(FairMedAgentToLong, ScriptEqualsTheTestsOwnConversion) {
  testing::TempDir d;
  const std::string out = d / "model_a.csv";
  const std::string cmd = "python3 " + NF_SOURCE_DIR + "/scripts/fairmedagent-to-long " + testing::data_dir() +
                          "/fairmedagent-floor16 " + out + " 2>" + d / "err.txt";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::slurp(d / "err.txt");
  EXPECT_EQ(testing::slurp(out), testing::fairmedagent_model_a_csv());
  EXPECT_NE(testing::slurp(d / "err.txt").find("960 rows (10 replicates x 16 vignettes x 6 outcomes)"),
            std::string::npos);
  // A missing folder is a clear error, exit 2.
  const std::string bad = "python3 " + NF_SOURCE_DIR + "/scripts/fairmedagent-to-long " + d / "nowhere" + " " + out +
                          " 2>" + d / "err2.txt";
  const int st = std::system(bad.c_str());
  EXPECT_EQ(WEXITSTATUS(st), 2);
  EXPECT_NE(testing::slurp(d / "err2.txt").find("model_a_reference_actions.json: No such file"), std::string::npos)
      << testing::slurp(d / "err2.txt");
}

}  // namespace
}  // namespace nf
