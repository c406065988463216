// `noisefloor import probe-sheet` end to end on the released annotation sheet (seed 004
// §2.3, §2.6): 50 probe items, each released response an ok draw of its subject.
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using testing::run_cli;
using testing::TempDir;

TEST(ImportProbeSheetCli, RealSheetWithKeyBesideIt) {
  TempDir t;
  const std::string sheet = testing::data_file("missing-info-judges/annotation_sheet.md");
  const std::string store_path = t / "s.sqlite";
  auto r = run_cli("import probe-sheet " + sheet + " --store " + store_path, t.path(), testing::data_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("50 probe items, 50 released responses"), std::string::npos) << r.err;

  auto store = Store::open_existing(store_path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto n = (*store)->draw_count();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 50);
  auto study = (*store)->get_study();
  ASSERT_TRUE(study.ok());
  EXPECT_EQ(study->name, "annotation_sheet");
  EXPECT_EQ(study->spec.value("task", ""), "chat");
  EXPECT_EQ(study->spec.value("source", ""), "annotation_sheet");

  auto subjects = (*store)->subject_specs();
  ASSERT_TRUE(subjects.ok());
  ASSERT_EQ(subjects->size(), 4u);
  std::set<std::string> providers;
  for (const auto& [name, spec] : *subjects) providers.insert(spec.value("provider", ""));
  EXPECT_EQ(providers, (std::set<std::string>{"anthropic", "google", "openai", "xai"}));
  EXPECT_EQ((*subjects)["opus-4_8-high"].value("provider", ""), "anthropic");

  auto d = (*store)->get_draw({"opus-4_8-high", "A001", "truncate_last_turn", "released", 0});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->status, DrawStatus::kOk);
  EXPECT_EQ(d->cluster, "b7a82324-73ee-4996-8f71-8f455f789e90");
  EXPECT_EQ(d->content.rfind("It looks like your message got cut off", 0), 0u);
  ASSERT_TRUE(d->request.contains("messages"));
  EXPECT_EQ(d->request["messages"].back()["content"], "So, is it recommended o");
  EXPECT_EQ(d->extra.value("source", ""), "annotation_sheet");
  auto items = (*store)->items();
  ASSERT_TRUE(items.ok());
  EXPECT_EQ(items->size(), 50u);

  // Re-import: nothing duplicated, the draws are left as they were.
  auto again = run_cli("import probe-sheet " + sheet + " --store " + store_path, t.path(), testing::data_env());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("50 already in the store"), std::string::npos) << again.err;
  auto store2 = Store::open_existing(store_path);
  ASSERT_TRUE(store2.ok());
  auto n2 = (*store2)->draw_count();
  ASSERT_TRUE(n2.ok());
  EXPECT_EQ(*n2, 50);
}

TEST(ImportProbeSheetCli, WithoutAKeyTheSubjectIsBlinded) {
  TempDir t;
  const std::string sheet = testing::data_file("missing-info-judges/annotation_sheet.md");
  // A copy of the sheet in a temp dir has no key.json beside it (removed with the dir).
  testing::write_text(t / "sheet.md", testing::slurp(sheet));
  auto r = run_cli("import probe-sheet " + (t / "sheet.md") + " --store " + (t / "s.sqlite"), t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto store = Store::open_existing(t / "s.sqlite");
  ASSERT_TRUE(store.ok());
  auto subjects = (*store)->subject_specs();
  ASSERT_TRUE(subjects.ok());
  ASSERT_EQ(subjects->size(), 1u);
  EXPECT_EQ(subjects->begin()->first, "blinded");
  auto d = (*store)->get_draw({"blinded", "A050", "truncate_last_turn", "released", 0});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->cluster, "A050");
}

TEST(ImportProbeSheetCli, ErrorsNameFileLineAndField) {
  TempDir t;
  testing::write_text(t / "bad.md",
                      "## A001\n### Conversation (information partially removed)\n**USER:** Q\n**ASSISTANT:** A\n"
                      "### Assistant response\nR\n**YOUR LABEL for A001**\n");
  auto r = run_cli("import probe-sheet " + (t / "bad.md") + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(t / "bad.md" + ":4: A001:"), std::string::npos) << r.err;

  auto missing = run_cli("import probe-sheet " + (t / "none.md") + " --store " + (t / "s.sqlite"), t.path());
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("none.md"), std::string::npos) << missing.err;

  auto help = run_cli("import --help", t.path());
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("probe-sheet"), std::string::npos);
}

// The chat task end to end through `audit` (seed 004 §2.3): the shipped example and a
// probe_sheet study over the real sheet.
TEST(ChatAuditCli, ShippedExampleRunsAndStoresTheMessagesSent) {
  TempDir t;
  auto r = run_cli("audit " + std::string(NF_SOURCE_DIR) + "/examples/chat-probe.yaml --quiet --store " +
                       (t / "s.sqlite") + " --out " + (t / "out"),
                   t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(t / "out/report.md"));
  auto store = Store::open_existing(t / "s.sqlite");
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto n = (*store)->draw_count();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 8 * 2 * 2 * 3);  // items x conditions x subjects x replicates
  // c07's last turn is one sentence: cut at the word boundary nearest the middle.
  auto d = (*store)->get_draw({"sim-bold", "c07", "truncate_last_turn", "default", 0});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->status, DrawStatus::kOk);
  EXPECT_FALSE(d->content.empty());
  EXPECT_TRUE(d->outcomes.empty());
  EXPECT_EQ(d->request["messages"].back()["content"], "What cream");
  EXPECT_EQ(d->extra["condition"]["cut"], "word_boundary");
  EXPECT_EQ(d->extra["condition"]["trunc_form"], "midword");
  auto plain = (*store)->get_draw({"sim-bold", "c07", "none", "default", 0});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->request["messages"].back()["content"], "What cream should I buy?");
}

TEST(ChatAuditCli, ProbeSheetStudyClustersByPrompt) {
  TempDir t;
  testing::write_text(t / "study.yaml",
                      "name: probe\ntask: chat\n"
                      "dataset:\n  format: probe_sheet\n"
                      "  path: ${NOISEFLOOR_DATA}/missing-info-judges/annotation_sheet.md\n"
                      "subjects: [{name: sim, backend: sim, model: sim-chat}]\n");
  auto r = run_cli("audit " + (t / "study.yaml") + " --quiet --out " + (t / "out"), t.path(), testing::data_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto store = Store::open_existing(t / "out/store.sqlite");
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto n = (*store)->draw_count();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 50);
  auto d = (*store)->get_draw({"sim", "A001", "none", "default", 0});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->cluster, "b7a82324-73ee-4996-8f71-8f455f789e90");  // key.json beside the sheet
  EXPECT_EQ(d->request["messages"].back()["content"], "So, is it recommended o");
  // Truncating an already-truncated sheet is refused when the study is loaded.
  testing::write_text(t / "bad.yaml", testing::slurp(t / "study.yaml") + "conditions: [truncate_last_turn]\n");
  auto bad = run_cli("audit " + (t / "bad.yaml") + " --quiet --out " + (t / "out2"), t.path(), testing::data_env());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad.yaml:4: dataset.format: a probe_sheet holds conversations that are already truncated"),
            std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

TEST(ImportProbeSheetCli, AFileWithoutProbeSectionsIsRefused) {
  testing::TempDir t;
  const std::string not_a_sheet = t / "README.md";
  testing::write_text(not_a_sheet, "# Some project\n\nNothing to see here.\n");
  auto r = testing::run_cli("import probe-sheet " + not_a_sheet + " --key '' --store " + (t / "s.sqlite"), t.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("README.md: no probe items"), std::string::npos) << r.err;
}

TEST(ImportProbeSheetCli, AStoreOfAnotherTaskIsRefused) {
  testing::TempDir t;
  const std::string store_path = t / "mcq.sqlite";
  {
    auto store = Store::open(store_path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->put_study({"medqa-floor", "abc", 1, {{"task", "mcq"}}}).ok());
  }
  const std::string sheet = testing::data_file("missing-info-judges/annotation_sheet.md");
  auto r = testing::run_cli("import probe-sheet " + sheet + " --store " + store_path, t.path(), testing::data_env());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("holds the 'mcq' study 'medqa-floor'"), std::string::npos) << r.err;
  auto store = Store::open_existing(store_path);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*(*store)->draw_count(), 0);
}

}  // namespace
}  // namespace nf
