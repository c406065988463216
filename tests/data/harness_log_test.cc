// Inspect and lm-eval readers: Inspect's score mapping, config ids, and mutated logs (every
// corruption is an error naming the file, never a crash or a silently different number).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "common/test_data.h"
#include "data/inspect_log.h"
#include "data/lm_eval_log.h"

namespace nf {
namespace {

using Categories = std::map<std::string, std::map<std::string, int>>;

TEST(InspectScores, MapAsInspectsValueToFloat) {
  Categories cats;
  auto one = [&](const nlohmann::json& v, const nlohmann::json& answer = nullptr) {
    auto o = inspect_score_outcomes("s", v, answer, cats);
    EXPECT_EQ(o.size(), 1u) << v.dump();
    return o.empty() ? Outcome{} : o[0];
  };
  EXPECT_EQ(one("C").value, 1.0);
  EXPECT_EQ(one("I").value, 0.0);
  EXPECT_EQ(one("P").value, 0.5);
  EXPECT_EQ(one("N").value, 0.0);
  EXPECT_EQ(one("C").label, "C");
  EXPECT_EQ(one("C", "Yes").label, "Yes");  // the answer is the label
  EXPECT_EQ(one("yes").value, 1.0);
  EXPECT_EQ(one("False").value, 0.0);
  EXPECT_EQ(one("0.75").value, 0.75);
  EXPECT_EQ(one(0.3).value, 0.3);
  EXPECT_EQ(one(true).value, 1.0);
  // Other strings are categories, stable per outcome, with the string as label.
  EXPECT_EQ(one("maybe").value, 0.0);
  EXPECT_EQ(one("unsure").value, 1.0);
  EXPECT_EQ(one("maybe").value, 0.0);
  EXPECT_EQ(one("unsure").label, "unsure");
  EXPECT_TRUE(inspect_score_outcomes("s", nullptr, nullptr, cats).empty());
  auto dict = inspect_score_outcomes("s", {{"accuracy", "C"}, {"f1", 0.5}}, nullptr, cats);
  ASSERT_EQ(dict.size(), 2u);
  EXPECT_EQ(dict[0].name, "s.accuracy");
  EXPECT_EQ(dict[0].value, 1.0);
  EXPECT_EQ(dict[1].name, "s.f1");
  auto list = inspect_score_outcomes("s", {1, 0}, nullptr, cats);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].name, "s[1]");
}

TEST(InspectScores, ConfigIdOfGenerateSettings) {
  EXPECT_EQ(harness_config_id(nlohmann::json::object()), "default");
  EXPECT_EQ(harness_config_id(nullptr), "default");
  EXPECT_EQ(harness_config_id({{"temperature", 0.5}, {"max_tokens", 100}, {"reasoning_effort", "low"}}),
            "max_tokens=100,reasoning_effort=low,temperature=0.5");
}

TEST(InspectLog, MutatedLogsAreErrorsNeverCrashes) {
  const std::string src = testing::data_file("harness-logs/log_streaming.eval");
  const std::string bytes = testing::slurp(src);
  ASSERT_GT(bytes.size(), 1000u);
  testing::TempDir t;
  std::mt19937_64 rng(15);
  Categories cats;
  int ok = 0, errors = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string m = bytes;
    if (trial % 3 == 0) {
      m.resize(rng() % m.size());  // truncated download
    } else {
      for (int k = 0; k < 1 + trial % 8; ++k) m[rng() % m.size()] = static_cast<char>(rng());
    }
    const std::string p = t / ("m" + std::to_string(trial) + ".eval");
    testing::write_text(p, m);
    auto log = read_inspect_log(p, {}, cats);
    if (log.ok()) {
      ++ok;
      // A mutation the zip CRCs did not catch still yields a well-formed log.
      for (const auto& d : log->draws) EXPECT_GE(d.replicate, 0);
    } else {
      ++errors;
      EXPECT_EQ(log.status().code(), StatusCode::kInvalidArgument) << log.status().message();
      EXPECT_NE(log.status().message().find(p), std::string::npos) << log.status().message();
    }
  }
  EXPECT_GT(errors, 100);
  EXPECT_EQ(ok + errors, 300);
}

TEST(InspectLog, MissingFileIsNotFound) {
  Categories cats;
  auto log = read_inspect_log("/nonexistent/x.eval", {}, cats);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), StatusCode::kNotFound);
  auto bad_ext = read_inspect_log(testing::data_file("harness-logs/SOURCES.md"), {}, cats);
  ASSERT_FALSE(bad_ext.ok());
  EXPECT_NE(bad_ext.status().message().find("expected .eval or .json"), std::string::npos);
}

TEST(LmEvalLog, MutatedLinesAreErrorsNeverCrashes) {
  const std::string src = std::string(NF_SOURCE_DIR) +
                          "/tests/fixtures/lm-eval/example-org__tiny-model/samples_toy_em_2024-05-01T11-00-00.000001.jsonl";
  const std::string bytes = testing::slurp(src);
  ASSERT_FALSE(bytes.empty());
  testing::TempDir t;
  std::mt19937_64 rng(16);
  int errors = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string m = bytes;
    for (int k = 0; k < 1 + trial % 5; ++k) m[rng() % m.size()] = "{}[]\",:0a \n"[rng() % 11];
    const std::string p = t / "samples_toy_em_2024-05-01T11-00-00.000001.jsonl";
    testing::write_text(p, m);
    auto log = read_lm_eval_samples(p, {"m", "", "default", ""});
    if (!log.ok()) {
      ++errors;
      EXPECT_EQ(log.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(log.status().message().find(p + ":"), std::string::npos) << log.status().message();
    }
  }
  EXPECT_GT(errors, 100);
}

}  // namespace
}  // namespace nf
