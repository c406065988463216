// runner/resume_check.h: a resumed run refuses a store whose finished draws were made
// under settings the study now sets differently (temperature of the single `default`
// config, model, sim settings, study seed, an item's answer key), and still resumes across
// operational edits (concurrency, timeouts), added replicates and --refresh.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "common/test_data.h"
#include "runner/import.h"
#include "runner/runner.h"
#include "spec/study.h"
#include "store/store.h"
#include "util/file.h"

namespace nf {
namespace {

struct Edit {
  std::string backend = "sim";
  std::string temperature = "1.0";
  std::string model = "sim-mcq-1";
  std::string seed = "7";
  std::string subject_extra;  // more subject keys, each "    key: value\n"
  int replicates = 2;
  std::string dataset = std::string(NF_SOURCE_DIR) + "/data/sample-mcq.jsonl";
};

Study study_of(const testing::TempDir& d, const Edit& e) {
  const std::string yaml = "name: resume\nseed: " + e.seed + "\ndataset:\n  format: medqa\n  path: " + e.dataset +
                           "\nsubjects:\n  - name: sim\n    backend: " + e.backend + "\n    model: " + e.model + "\n" +
                           e.subject_extra + "conditions: [none]\nconfigs:\n  temperature: [" + e.temperature +
                           "]\nreplicates: " + std::to_string(e.replicates) + "\n";
  auto study = parse_study(yaml, d / "s.yaml");
  EXPECT_TRUE(study.ok()) << study.status().message();
  return *study;
}

Result<RunSummary> run(const Study& study, Store& store, bool refresh = false) {
  RunOptions o;
  o.progress = false;
  o.threads = 2;
  o.refresh = refresh;
  return run_study(study, store, o);
}

class ResumeCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::open(d / "store.sqlite");
    ASSERT_TRUE(s.ok()) << s.status().message();
    store = std::move(*s);
    auto first = run(study_of(d, {}), *store);
    ASSERT_TRUE(first.ok()) << first.status().message();
    ASSERT_GT(first->executed, 0);
    drawn = first->executed;
  }
  // Runs `e` into the store and expects the refusal, naming `what` and `change`; nothing
  // new is stored and the store's records still describe the first study.
  void expect_refused(const Edit& e, const std::string& what, const std::string& change) {
    auto r = run(study_of(d, e), *store);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().message();
    const std::string m = r.status().message();
    EXPECT_NE(m.find(what), std::string::npos) << m;
    EXPECT_NE(m.find(change), std::string::npos) << m;
    EXPECT_NE(m.find("--refresh"), std::string::npos) << m;
    EXPECT_NE(m.find("new store"), std::string::npos) << m;
    EXPECT_EQ(*store->draw_count(), drawn);
    auto specs = store->subject_specs();
    ASSERT_TRUE(specs.ok());
    EXPECT_EQ((*specs)["sim"]["model"], "sim-mcq-1");
  }
  testing::TempDir d;
  std::unique_ptr<Store> store;
  int64_t drawn = 0;
};

TEST_F(ResumeCheck, TheSameStudyResumesWithNothingToDo) {
  auto r = run(study_of(d, {}), *store);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->executed, 0);
  EXPECT_EQ(r->already_done, drawn);
}

TEST_F(ResumeCheck, AnEditedSingleTemperatureIsRefused) {
  Edit e;
  e.temperature = "0";
  expect_refused(e, "of config 'default' made with temperature 1.0; the study now says 0.0", "temperature");
}

TEST_F(ResumeCheck, AnotherModelIsRefused) {
  Edit e;
  e.model = "sim-mcq-2";
  expect_refused(e, "of subject 'sim'", "model 'sim-mcq-1'; the study now says 'sim-mcq-2'");
}

TEST_F(ResumeCheck, AnotherSimSettingIsRefused) {
  Edit e;
  e.subject_extra = "    sim: {spread: 3.0}\n";
  expect_refused(e, "of subject 'sim' made with sim", "the study now says");
}

TEST_F(ResumeCheck, AnotherStudySeedIsRefused) {
  Edit e;
  e.seed = "8";
  expect_refused(e, "of this study", "study seed 7; the study now says 8");
}

TEST_F(ResumeCheck, AnEditedAnswerKeyIsRefusedNamingTheItem) {
  // The sample dataset with the first item's answer changed (another letter).
  auto text = read_file(std::string(NF_SOURCE_DIR) + "/data/sample-mcq.jsonl");
  ASSERT_TRUE(text.ok());
  auto first = nlohmann::json::parse(text->substr(0, text->find('\n')));
  const std::string old_answer = first["answer_idx"];
  first["answer_idx"] = old_answer == "A" ? "B" : "A";
  Edit e;
  e.dataset = d / "edited.jsonl";
  {
    std::ofstream out(e.dataset);
    out << first.dump() << "\n" << text->substr(text->find('\n') + 1);
  }
  // Items without an id field are named medqa-<line>.
  expect_refused(e, "of item 'medqa-1' made with answer '" + old_answer + "'", "--refresh");
}

TEST_F(ResumeCheck, OperationalEditsAndMoreReplicatesResume) {
  Edit e;
  e.subject_extra = "    concurrency: 3\n    timeout_s: 9\n    max_retries: 1\n";
  e.replicates = 3;
  auto r = run(study_of(d, e), *store);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->already_done, drawn);
  EXPECT_EQ(r->executed, drawn / 2);  // the third replicate of each draw
}

TEST_F(ResumeCheck, RefreshDrawsEverythingAgainAndThenTheNewStudyResumes) {
  Edit e;
  e.temperature = "0";
  auto r = run(study_of(d, e), *store, /*refresh=*/true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->executed, drawn);
  auto again = run(study_of(d, e), *store);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->executed, 0);
}

TEST_F(ResumeCheck, ARefreshThatFailsAtTheApiKeepsTheStoredAnswers) {
  // The same subject name pointed at a port nothing listens on: every refreshed call fails.
  Edit e;
  e.backend = "openai";
  e.subject_extra = "    base_url: http://127.0.0.1:1/v1\n    max_retries: 0\n    timeout_s: 2\n";
  auto before = store->status_counts();
  ASSERT_TRUE(before.ok());
  (void)run(study_of(d, e), *store, /*refresh=*/true);  // fails at the API, however it ends
  auto after = store->status_counts();
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), before->size());
  for (size_t i = 0; i < after->size(); ++i) {
    EXPECT_EQ((*after)[i].status, (*before)[i].status);
    EXPECT_EQ((*after)[i].count, (*before)[i].count);
  }
  EXPECT_EQ(*store->draw_count(), drawn);
}

TEST(ResumeCheckFresh, AStoreWithoutDrawsOrStudyPasses) {
  testing::TempDir d;
  auto s = Store::open(d / "store.sqlite");
  ASSERT_TRUE(s.ok());
  RunOptions o;
  o.progress = false;
  o.max_draws = 0;
  ASSERT_TRUE(run_study(study_of(d, {}), **s, o).ok());  // records written, nothing drawn
  Edit e;
  e.temperature = "0";
  auto r = run(study_of(d, e), **s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->executed, 0);
}

}  // namespace
}  // namespace nf

// Tester s11 finding 7: `run` into a store of imported draws, or of another study (even
// with --refresh, which the old refusal suggested), mixed the two; the report then called
// the complete run "partial" and counted foreign items in its coverage.
namespace nf {
namespace {

TEST(StoreOfAnotherStudy, ImportedDrawsAreRefusedEvenWithRefresh) {
  testing::TempDir d;
  {
    std::ofstream csv(d / "imported.csv");
    csv << "subject,item,condition,config,replicate,outcome,value\nm,q1,none,default,0,correct,1\n"
           "m,q1,none,default,1,correct,0\n";
  }
  auto s = Store::open(d / "mix.sqlite");
  ASSERT_TRUE(s.ok());
  auto imported = import_long_draws_file(d / "imported.csv", **s, "imported");
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  for (bool refresh : {false, true}) {
    auto r = run(study_of(d, {}), **s, refresh);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(r.status().message().find("holds 2 draws written by an import"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("new store"), std::string::npos);
    EXPECT_EQ(*(*s)->draw_count(), 2);
  }
}

TEST(StoreOfAnotherStudy, AnotherStudysDrawsAreRefusedEvenWithRefresh) {
  testing::TempDir d;
  auto s = Store::open(d / "mix.sqlite");
  ASSERT_TRUE(s.ok());
  auto first = run(study_of(d, {}), **s);
  ASSERT_TRUE(first.ok()) << first.status().message();
  const int64_t drawn = *(*s)->draw_count();
  auto other = study_of(d, {});
  other.name = "other";
  for (bool refresh : {false, true}) {
    auto r = run(other, **s, refresh);
    ASSERT_FALSE(r.ok());
    const std::string m = r.status().message();
    EXPECT_NE(m.find("of another study, 'resume' (this one is 'other')"), std::string::npos) << m;
    EXPECT_NE(m.find("put back `name: resume`"), std::string::npos) << m;
    EXPECT_EQ(m.find("draw them all again with --refresh"), std::string::npos) << m;  // not offered: it mixes too
    EXPECT_EQ(*(*s)->draw_count(), drawn);
  }
  // The same study still resumes and refreshes.
  EXPECT_TRUE(run(study_of(d, {}), **s).ok());
  EXPECT_TRUE(run(study_of(d, {}), **s, true).ok());
}

}  // namespace
}  // namespace nf
