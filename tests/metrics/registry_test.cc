// The analysis registry (DESIGN.md "Extension points"): every analysis a study file may
// name is registered, names are unique, and an unknown name or option is refused.
#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/test_data.h"
#include "metrics/analyze.h"
#include "spec/study.h"
#include "store/store.h"

namespace nf {
namespace {

using nlohmann::json;

TEST(AnalysisRegistry, EveryStudyAnalysisIsRegisteredOnce) {
  std::set<std::string> seen;
  for (const auto& e : analysis_registry()) {
    EXPECT_TRUE(seen.insert(e.name).second) << "registered twice: " << e.name;
    EXPECT_FALSE(e.summary.empty()) << e.name;
    EXPECT_TRUE(static_cast<bool>(e.run)) << e.name;
  }
  for (const auto& name : known_analyses()) EXPECT_NE(find_analysis(name), nullptr) << name;
  EXPECT_EQ(find_analysis("flor"), nullptr);
}

// The other direction (tester s10 finding 7): every registered analysis may be listed in a
// study file's `analyses`, as `analyze --analysis NAME` runs it; option_probs was refused
// ("analyses.option_probs: unknown key") although README lists it.
TEST(AnalysisRegistry, EveryRegisteredAnalysisIsAcceptedInAStudyFile) {
  const auto& known = known_analyses();
  for (const auto& e : analysis_registry())
    EXPECT_NE(std::find(known.begin(), known.end(), e.name), known.end())
        << e.name << " is registered but a study file's analyses refuses it";
}

TEST(AnalysisRegistry, EveryAnalysisThatChecksForRowsSaysWhatItNeeds) {
  for (const auto& e : analysis_registry()) {
    if (!e.rows_key.empty()) {
      EXPECT_FALSE(e.needs.empty()) << e.name;
    }
  }
}

// Issue 32 item 1: on a store whose data an analysis cannot use, fairness gave a heading over
// no rows, option_probs an empty table (or vanished when added by default), and rerun a table
// of zeros (a `pass` outcome that is not a FHIR agent's run). Each now carries `skipped` with
// what it needs; an analysis that has data is not skipped.
TEST(AnalysisRegistry, AnalysesWithNothingToReadAreSkippedWithTheReason) {
  testing::TempDir t;
  auto store = std::move(Store::open(t / "s.sqlite")).value();
  for (const char* item : {"q1", "q2", "q3"})
    for (int rep = 0; rep < 2; ++rep) {
      Draw d;
      if (rep == 0) {
        ASSERT_TRUE(store->put_item(item, item, json::object()).ok());
      }
      d.key = DrawKey{"A", item, "none", "default", rep};
      d.cluster = item;
      d.content = "B";
      const double v = (item[1] == '1' && rep == 1) ? 0.0 : 1.0;
      d.outcomes = {{"correct", v, ""}, {"pass", v, v == 1.0 ? "pass" : "fail"}};  // e.g. an imported scorer
      ASSERT_TRUE(store->put_draw(d).ok());
    }
  AnalyzeOptions o;
  o.bootstrap.resamples = 50;
  for (const char* name : {"floor", "fairness", "option_probs", "rerun", "bbq_bias", "mcq_robustness"})
    o.analyses.push_back({name, name == std::string("option_probs") ? json{{"subjects", {"A"}}} : json::object()});
  auto res = analyze_store(*store, o);
  ASSERT_TRUE(res.ok()) << res.status().message();
  const json& an = (*res)["analyses"];
  auto skipped = [&](const char* name) {
    return an.contains(name) && an[name].contains("skipped") ? an[name]["skipped"].get<std::string>() : std::string();
  };
  EXPECT_EQ(skipped("floor"), "");
  EXPECT_EQ(skipped("mcq_robustness"), "");  // condition none: accuracy_none has rows
  EXPECT_EQ(an["floor"]["rows"].empty(), false);
  EXPECT_NE(skipped("fairness").find("nothing to analyse: the store holds no draws under a reference condition"),
            std::string::npos)
      << an["fairness"].dump();
  EXPECT_NE(skipped("option_probs").find("no ok MCQ draw of A carries option probabilities"), std::string::npos)
      << an["option_probs"].dump();
  EXPECT_NE(skipped("rerun").find("nothing to analyse: the store holds no FHIR agent draws"), std::string::npos)
      << an["rerun"].dump();
  EXPECT_TRUE(an["rerun"]["arms"].empty()) << "a table of zeros: " << an["rerun"]["arms"].dump();
  EXPECT_NE(skipped("bbq_bias"), "");
}

TEST(AnalysisRegistry, VoteSizesFlagMustAgreeWithTheStudy) {
  StudyRecord s;
  s.name = "st";
  s.spec = {{"analyses", {{{"name", "floor"}}, {{"name", "majority_floor"}, {"options", {{"vote_sizes", {3}}}}}}}};
  EXPECT_TRUE(check_vote_sizes_flag(s, {3}).ok());
  EXPECT_TRUE(check_vote_sizes_flag(s, {}).ok());
  const Status bad = check_vote_sizes_flag(s, {5, 7});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("--vote-sizes 5,7 and the study's majority_floor {\"vote_sizes\": [3]} (analyses of "
                               "study 'st') disagree"),
            std::string::npos)
      << bad.message();
  s.spec["analyses"][1]["options"] = json::object();  // the study names no vote sizes: the flag decides
  EXPECT_TRUE(check_vote_sizes_flag(s, {5}).ok());
}

}  // namespace
}  // namespace nf
