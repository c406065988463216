// Tester s10 finding 13 (the run side): an interrupted `run --refresh` left the store half
// old / half new and a plain resume called it complete. The refresh now records itself in
// the store (meta "refresh") and marks every draw it writes; the next run says how many
// planned draws still hold answers from before it, and `run --refresh` of the same study
// resumes it, re-running only those.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/test_data.h"
#include "runner/runner.h"
#include "spec/study.h"
#include "store/store.h"

namespace nf {
namespace {

// The first 8 items of sample-mcq.jsonl x 2 replicates x 1 config x condition none: 16 planned draws.
std::string study_text(const std::string& comment = "") {
  return "name: r\nseed: 5\ntask: mcq\ndataset:\n  format: medqa\n  limit: 8\n  path: " + std::string(NF_SOURCE_DIR) +
         "/data/sample-mcq.jsonl\nsubjects:\n  - name: s\n    backend: sim\n    model: sim-mcq-1\n"
         "conditions: [none]\nconfigs:\n  temperature: [0.7]\nreplicates: 2\n" + comment;
}

Result<RunSummary> run(const Study& study, Store& store, bool refresh, int64_t max_draws = -1) {
  RunOptions o;
  o.progress = false;
  o.refresh = refresh;
  o.max_draws = max_draws;
  o.threads = 1;  // --max-draws stops exactly there
  return run_study(study, store, o);
}

// The refresh id each stored draw carries ("" = none).
std::multiset<std::string> marks(Store& store, const Study& study) {
  std::multiset<std::string> out;
  auto items = store.items();
  EXPECT_TRUE(items.ok());
  const auto configs = expand_configs(study.axes);
  for (const auto& it : *items)
    for (int rep = 0; rep < study.replicates; ++rep) {
      auto d = store.get_draw(DrawKey{"s", it.item, "none", configs[0].id, rep});
      EXPECT_TRUE(d.ok()) << d.status().to_string();
      if (d.ok()) out.insert(d->extra.value("refresh", ""));
    }
  return out;
}

TEST(RefreshResume, AnInterruptedRefreshIsSaidAndResumedWhereItStopped) {
  testing::TempDir t;
  auto study = parse_study(study_text(), t / "r.yaml");
  ASSERT_TRUE(study.ok()) << study.status().to_string();
  auto store = std::move(Store::open(t / "s.sqlite")).value();

  auto first = run(*study, *store, false);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  ASSERT_EQ(first->planned, 16);
  EXPECT_EQ(first->executed, 16);
  EXPECT_FALSE(first->refresh.has_value());  // no refresh ever started: nothing to say

  // A refresh stopped after 6 of 16 draws.
  auto cut = run(*study, *store, true, 6);
  ASSERT_TRUE(cut.ok()) << cut.status().to_string();
  EXPECT_EQ(cut->executed, 6);
  ASSERT_TRUE(cut->refresh.has_value());
  EXPECT_FALSE(cut->refresh->resumed);
  EXPECT_FALSE(cut->refresh->finished);
  EXPECT_EQ(cut->refresh->planned, 16);
  EXPECT_EQ(cut->refresh->left, 10);
  const auto after_cut = marks(*store, *study);
  EXPECT_EQ(after_cut.count(""), 10u);

  // A plain resume finds every draw stored, runs nothing, and says the refresh is unfinished.
  auto plain = run(*study, *store, false);
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  EXPECT_EQ(plain->executed, 0);
  EXPECT_EQ(plain->already_done, 16);
  ASSERT_TRUE(plain->refresh.has_value());
  EXPECT_FALSE(plain->refresh->finished);
  EXPECT_EQ(plain->refresh->left, 10);
  EXPECT_EQ(plain->refresh->started_at, cut->refresh->started_at);
  const std::string note = refresh_note(*plain->refresh, "r.yaml");
  EXPECT_NE(note.find("did not finish: 10 of 16 planned draws still hold answers from before it"), std::string::npos)
      << note;
  EXPECT_NE(note.find("run `noisefloor run r.yaml --refresh` again to finish it"), std::string::npos) << note;

  // `run --refresh` again resumes it: only the 10 unrefreshed draws run.
  auto resumed = run(*study, *store, true);
  ASSERT_TRUE(resumed.ok()) << resumed.status().to_string();
  ASSERT_TRUE(resumed->refresh.has_value());
  EXPECT_TRUE(resumed->refresh->resumed);
  EXPECT_EQ(resumed->already_done, 6);
  EXPECT_EQ(resumed->executed, 10);
  EXPECT_TRUE(resumed->refresh->finished);
  EXPECT_EQ(resumed->refresh->left, 0);
  EXPECT_NE(refresh_note(*resumed->refresh, "r.yaml").find("is complete"), std::string::npos);
  const auto after = marks(*store, *study);
  EXPECT_EQ(after.count(""), 0u);
  EXPECT_EQ(std::set<std::string>(after.begin(), after.end()).size(), 1u);  // one refresh id throughout

  // Finished: a plain run has nothing to say, and the next --refresh re-runs everything.
  auto quiet = run(*study, *store, false);
  ASSERT_TRUE(quiet.ok());
  EXPECT_FALSE(quiet->refresh.has_value());
  auto again = run(*study, *store, true);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->refresh->resumed);
  EXPECT_EQ(again->executed, 16);
  EXPECT_TRUE(again->refresh->finished);
  const auto fresh = marks(*store, *study);
  EXPECT_EQ(std::set<std::string>(fresh.begin(), fresh.end()).size(), 1u);
  EXPECT_NE(*fresh.begin(), *after.begin());  // a new id: the old marks do not count for it
}

// Draws a plain run adds while a refresh is unfinished are answers from after it started:
// they carry its mark and do not count as left.
TEST(RefreshResume, DrawsAPlainRunAddsDuringAnUnfinishedRefreshCountAsRefreshed) {
  testing::TempDir t;
  auto study = parse_study(study_text(), t / "r.yaml");
  ASSERT_TRUE(study.ok());
  auto store = std::move(Store::open(t / "s.sqlite")).value();
  ASSERT_TRUE(run(*study, *store, false, 8).ok());  // 8 of 16 stored
  auto cut = run(*study, *store, true, 4);           // 4 of them refreshed
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->refresh->left, 12);  // 4 old answers + 8 never stored
  auto plain = run(*study, *store, false);  // stores the 8 missing draws
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->executed, 8);
  ASSERT_TRUE(plain->refresh.has_value());
  EXPECT_EQ(plain->refresh->left, 4);
  auto resumed = run(*study, *store, true);
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(resumed->executed, 4);
  EXPECT_TRUE(resumed->refresh->finished);
}

// An unfinished refresh of another version of the study file is not resumed: the new
// refresh re-runs every planned draw (its plan may differ).
TEST(RefreshResume, AChangedStudyFileStartsTheRefreshAnew) {
  testing::TempDir t;
  auto study = parse_study(study_text(), t / "r.yaml");
  ASSERT_TRUE(study.ok());
  auto store = std::move(Store::open(t / "s.sqlite")).value();
  ASSERT_TRUE(run(*study, *store, false).ok());
  ASSERT_TRUE(run(*study, *store, true, 5).ok());
  auto edited = parse_study(study_text("# edited\n"), t / "r.yaml");
  ASSERT_TRUE(edited.ok());
  auto r = run(*edited, *store, true);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->refresh->restarted);
  EXPECT_FALSE(r->refresh->resumed);
  EXPECT_EQ(r->executed, 16);
  EXPECT_TRUE(r->refresh->finished);
}

// The meta record is the store's (both stores implement it; PostgreSQL in the contract
// suite); keys the store owns are not writable.
TEST(RefreshResume, MetaValuesRoundTripAndTheStoresOwnKeysAreRefused) {
  testing::TempDir t;
  auto store = std::move(Store::open(t / "s.sqlite")).value();
  auto none = store->meta_value("refresh");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(store->set_meta_value("refresh", "{\"id\":\"x\"}").ok());
  auto v = store->meta_value("refresh");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->value_or(""), "{\"id\":\"x\"}");
  const Status st = store->set_meta_value("schema_version", "99");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  auto sv = store->meta_value("schema_version");
  ASSERT_TRUE(sv.ok());
  EXPECT_NE(sv->value_or(""), "99");
}

}  // namespace
}  // namespace nf
