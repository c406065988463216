// check_cells_not_stored: a harness import into a store that already holds a log's cell
// says whether the stored draws are this run or another, also for a store written before
// draws carried their run (extra.log / extra.file instead of extra.run).
#include <gtest/gtest.h>

#include "common/test_data.h"
#include "runner/harness_import_check.h"

namespace nf {
namespace {

HarnessLog log_of(const std::string& path, const std::string& run) {
  HarnessLog log;
  log.path = path;
  log.subject = "m";
  log.condition = "t";
  log.config = "default";
  log.run_id = run;
  HarnessDraw d;
  d.item = "1";
  log.draws.push_back(d);
  return log;
}

/// The rows an import writes before its draws (subject, config, item).
void prepare(Store& store, const std::string& subject) {
  ASSERT_TRUE(store.put_subject(subject, {{"name", subject}}).ok());
  ASSERT_TRUE(store.put_config("default", nlohmann::json::object()).ok());
  ASSERT_TRUE(store.put_item("1", "1", {{"imported", true}}).ok());
}

Draw stored(int replicate, const nlohmann::json& extra) {
  Draw d;
  d.key = {"m", "1", "t", "default", replicate};
  d.status = DrawStatus::kOk;
  d.outcomes = {{"match", 1.0, ""}};
  d.extra = extra;
  return d;
}

TEST(HarnessImportCheck, SaysWhetherTheStoredCellIsThisRunOrAnother) {
  testing::TempDir t;
  auto store = Store::open(t / "s.sqlite");
  ASSERT_TRUE(store.ok()) << store.status().message();
  // An empty store, and a store holding only other cells: nothing to say.
  EXPECT_TRUE(check_cells_not_stored({log_of(t / "a.eval", "eval_id A")}, **store).ok());
  prepare(**store, "other-model");
  prepare(**store, "m");
  Draw other = stored(0, {{"run", "eval_id X"}});
  other.key.subject = "other-model";
  Status put = (*store)->put_draws({other});
  ASSERT_TRUE(put.ok()) << put.message();
  EXPECT_TRUE(check_cells_not_stored({log_of(t / "a.eval", "eval_id A")}, **store).ok());
  // Two runs stored in the cell (replicates 0 and 1).
  ASSERT_TRUE((*store)
                  ->put_draws({stored(0, {{"run", "eval_id A"}, {"log", "a.eval"}}),
                               stored(1, {{"run", "eval_id B"}, {"log", "b.eval"}})})
                  .ok());
  Status same = check_cells_not_stored({log_of(t / "b.eval", "eval_id B")}, **store);
  ASSERT_FALSE(same.ok());
  EXPECT_EQ(same.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(same.message().find("already holds this run (eval_id B) of (m, t, default)"), std::string::npos)
      << same.message();
  Status other_run = check_cells_not_stored({log_of(t / "c.eval", "eval_id C")}, **store);
  ASSERT_FALSE(other_run.ok());
  EXPECT_NE(other_run.message().find("already holds 2 draws of (m, t, default) from another run (a.eval, b.eval)"),
            std::string::npos)
      << other_run.message();
}

TEST(HarnessImportCheck, AStoreWithoutRunIdsIsMatchedByFileName) {
  testing::TempDir t;
  auto store = Store::open(t / "s.sqlite");
  ASSERT_TRUE(store.ok()) << store.status().message();
  prepare(**store, "m");
  ASSERT_TRUE((*store)->put_draws({stored(0, {{"file", "samples_t_2024.jsonl"}, {"line", 1}})}).ok());
  Status same = check_cells_not_stored({log_of("/x/samples_t_2024.jsonl", "samples_t_2024.jsonl sha256 ab")}, **store);
  ASSERT_FALSE(same.ok());
  EXPECT_NE(same.message().find("already holds this run"), std::string::npos) << same.message();
  Status other = check_cells_not_stored({log_of("/x/samples_t_2025.jsonl", "samples_t_2025.jsonl sha256 cd")}, **store);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.message().find("from another run (samples_t_2024.jsonl)"), std::string::npos) << other.message();
}

}  // namespace
}  // namespace nf
