// Issue 37: five misleading numbers of tester s9, end to end through the real binary.
//   F2  an MCQ pooled floor averaged `correct` with `choice` (two outcomes of the same draws);
//       `check --max-pooled-floor` passed on the average.
//   F11 the majority-vote floor at an even R' dropped ties silently; paired_subjects too.
//   F15 `--resamples 1` gave a "95% CI" that excludes the estimate.
//   F9  a report from part of the plan did not say so.
// The numbers are hand counts written beside each check.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "common/process.h"
#include "common/test_data.h"
#include "store/store.h"

namespace nf {
namespace {

using nlohmann::json;
using testing::CmdResult;
using testing::run_cli;
using testing::slurp;
using testing::TempDir;

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// An MCQ study store, written as `run` writes one (study record with task mcq), with two
// items x 4 replicates of one cell; the key is option 0:
//   q1 choices 0 0 1 2 -> choice 5 of C(4,2) = 6 pairs disagree; correct 1 1 0 0 -> 4 of 6
//   q2 choices 1 1 1 1 -> 0 of 6 for both
// choice floor 5/12 = 0.417, correct 4/12 = 0.333; the old pooled row: 9/24 = 0.375.
std::string mcq_store(const TempDir& t) {
  const std::string path = t / "mcq.sqlite";
  auto store = std::move(Store::open(path)).value();
  EXPECT_TRUE(store->put_study({"mcq-x", "h", 1, {{"name", "mcq-x"}, {"task", "mcq"}}}).ok());
  const int q1[] = {0, 0, 1, 2}, q2[] = {1, 1, 1, 1};
  for (const char* item : {"q1", "q2"}) {
    EXPECT_TRUE(store->put_item(item, item, json::object()).ok());
    for (int r = 0; r < 4; ++r) {
      Draw d;
      d.key = DrawKey{"sim", item, "none", "default", r};
      d.cluster = item;
      const int c = item == std::string("q1") ? q1[r] : q2[r];
      d.outcomes = {{"correct", c == 0 ? 1.0 : 0.0, ""}, {"choice", static_cast<double>(c), ""}};
      EXPECT_TRUE(store->put_draw(d).ok());
    }
  }
  return path;
}

TEST(MisleadingNumbers, McqPooledFloorIsTheChoiceFloorAndTheGateReadsIt) {
  TempDir t;
  const std::string store = mcq_store(t);
  CmdResult r = run_cli("analyze --store " + store + " --out " + (t / "o") + " --analysis floor", t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(slurp(t / "o/results.json"));
  for (const auto& row : j["analyses"]["floor"]["rows"]) {
    if (row["outcome"] == "pooled") {
      EXPECT_EQ(row["discordant"], 5);
      EXPECT_EQ(row["comparisons"], 12);
      EXPECT_EQ(row["unanimous_cells"], 1);  // q2 only (was 2: q2's choice and correct)
    }
    if (row["outcome"] == "correct") {
      EXPECT_EQ(row["discordant"], 4);  // its own row is kept
    }
  }
  const std::string md = slurp(t / "o/report.md");
  EXPECT_NE(md.find("pooled over 1 independent outcome (derived excluded: correct)"), std::string::npos) << md;

  // The gate: the choice floor 0.417 exceeds 0.4 (the old pooled 0.375 passed it).
  CmdResult fail = run_cli("check --store " + store + " --max-pooled-floor 0.4", t.path());
  EXPECT_EQ(fail.exit_code, 1) << fail.out << fail.err;
  EXPECT_NE(fail.out.find("FAIL"), std::string::npos) << fail.out;
  CmdResult pass = run_cli("check --store " + store + " --max-pooled-floor 0.42", t.path());
  EXPECT_EQ(pass.exit_code, 0) << pass.out << pass.err;
}

TEST(MisleadingNumbers, EvenVoteSizeCountsTiesAndWarnsOnce) {
  TempDir t;
  const std::string store = mcq_store(t);
  CmdResult r = run_cli("analyze --store " + store + " --out " + (t / "o") + " --vote-sizes 2", t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, "vote size 2 is even"), 1u) << r.err;
  const json j = json::parse(slurp(t / "o/results.json"));
  // correct at R' = 2: q1 (1 1 0 0): of the 3 splits into two pairs only {11} vs {00} has no
  // 1-0 tie (1 comparison, discordant); q2 (0 0 0 0): 3 comparisons, none discordant.
  bool seen = false;
  for (const auto& row : j["analyses"]["majority_floor"]["rows"]) {
    if (row["outcome"] != "correct") continue;
    seen = true;
    EXPECT_EQ(row["discordant"], 1);
    EXPECT_EQ(row["comparisons"], 4);
    EXPECT_EQ(row["possible_comparisons"], 6);
    EXPECT_EQ(row["tie_excluded"], 2);
    EXPECT_DOUBLE_EQ(row["tie_excluded_share"].get<double>(), 2.0 / 6.0);
  }
  EXPECT_TRUE(seen);
  const std::string md = slurp(t / "o/report.md");
  EXPECT_NE(md.find("| ties excluded |"), std::string::npos);
  EXPECT_NE(md.find("2 of 6 (33.3%)"), std::string::npos) << md;
  EXPECT_NE(md.find("vote size 2 is even"), std::string::npos);
  const json fig = json::parse(slurp(t / "o/figures.json"));
  bool caption = false;
  for (const auto& f : fig["figures"])
    if (f["id"] == "majority-floor-curve")
      caption = f["caption"].get<std::string>().find("Ties excluded") != std::string::npos;
  EXPECT_TRUE(caption) << fig.dump();
}

// The tester's paired_subjects case: 2 replicates, A right on items 10-19 in both draws and
// on 0-9 in one of two; B right on 0-9 only, in both draws. A's majority on 0-9 is a 1-1 tie:
// those 10 items (where B beats A in every draw) leave McNemar, which sees b = 10, c = 0.
TEST(MisleadingNumbers, PairedSubjectsSaysHowManyItemsTiesLeaveOut) {
  TempDir t;
  const std::string path = t / "p.sqlite";
  {
    auto store = std::move(Store::open(path)).value();
    for (int i = 0; i < 20; ++i) {
      const std::string item = "i" + std::to_string(i);
      ASSERT_TRUE(store->put_item(item, item, json::object()).ok());
      for (int r = 0; r < 2; ++r) {
        const double a = i >= 10 ? 1.0 : (r == 0 ? 1.0 : 0.0), b = i < 10 ? 1.0 : 0.0;
        for (const auto& [subject, v] : {std::pair<std::string, double>{"A", a}, {"B", b}}) {
          Draw d;
          d.key = DrawKey{subject, item, "none", "default", r};
          d.cluster = item;
          d.outcomes = {{"correct", v, ""}};
          ASSERT_TRUE(store->put_draw(d).ok());
        }
      }
    }
  }
  CmdResult r = run_cli("analyze --store " + path + " --out " + (t / "o") + " --analysis paired_subjects", t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(slurp(t / "o/results.json"));
  const auto& row = j["analyses"]["paired_subjects"]["rows"][0];
  EXPECT_EQ(row["b_count"], 10);
  EXPECT_EQ(row["c_count"], 0);
  EXPECT_EQ(row["undetermined"], 10);
  EXPECT_DOUBLE_EQ(row["undetermined_share"].get<double>(), 0.5);
  EXPECT_NE(r.err.find("10 of 20 items (50.0%) are left out of McNemar"), std::string::npos) << r.err;
  EXPECT_NE(slurp(t / "o/report.md").find("10 of 20 items (50.0%) are left out of McNemar"), std::string::npos);
}

TEST(MisleadingNumbers, TooFewResamplesAreRefusedEverywhere) {
  TempDir t;
  const std::string store = mcq_store(t);
  // 95%: each tail of B resamples holds 0.025 B; below B = 40 it is empty.
  for (const char* b : {"1", "39"}) {
    CmdResult r = run_cli("analyze --store " + store + " --out " + (t / "o") + " --resamples " + b, t.path());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--resamples: " + std::string(b) + " resample"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("use at least 40"), std::string::npos) << r.err;
    CmdResult c = run_cli("check --store " + store + " --max-pooled-floor 0.5 --resamples " + b, t.path());
    EXPECT_EQ(c.exit_code, 2) << c.err;
  }
  // At 99% the minimum is 200.
  CmdResult l = run_cli("analyze --store " + store + " --out " + (t / "o") + " --resamples 100 --level 0.99", t.path());
  EXPECT_EQ(l.exit_code, 2) << l.err;
  EXPECT_NE(l.err.find("use at least 200"), std::string::npos) << l.err;
  // 40 is accepted, with a warning on stderr and in the report.
  CmdResult ok = run_cli("analyze --store " + store + " --out " + (t / "o") + " --resamples 40", t.path());
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(count_of(ok.err, "40 bootstrap resamples (fewer than 1000)"), 1u) << ok.err;
  EXPECT_NE(slurp(t / "o/report.md").find("40 bootstrap resamples (fewer than 1000)"), std::string::npos);

  // The stats commands.
  const std::string ratio = std::string(NF_SOURCE_DIR) + "/data/sample-ratio.csv";
  CmdResult s = run_cli("stats cluster-bootstrap " + ratio + " --resamples 1", t.path());
  EXPECT_EQ(s.exit_code, 2) << s.out << s.err;
  EXPECT_NE(s.err.find("use at least 40"), std::string::npos) << s.err;
  CmdResult s2 = run_cli("stats cluster-bootstrap " + ratio + " --resamples 200", t.path());
  EXPECT_EQ(s2.exit_code, 0) << s2.err;
  EXPECT_NE(s2.err.find("fewer than 1000"), std::string::npos) << s2.err;
  testing::write_text(t / "r.csv", "item,r1,r2,r3\nq1,A,A,B\nq2,B,B,B\nq3,A,A,A\n");
  CmdResult f = run_cli("stats fleiss " + (t / "r.csv") + " --resamples 5", t.path());
  EXPECT_EQ(f.exit_code, 2) << f.out << f.err;
  EXPECT_NE(f.err.find("use at least 40"), std::string::npos) << f.err;

  // A study file: file, line and field.
  const std::string study = t / "s.yaml";
  testing::write_text(study,
                      "name: few\nseed: 1\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
                          "/data/sample-mcq.jsonl\nsubjects:\n  - {name: sim, backend: sim, model: sim-mcq-1}\n"
                          "replicates: 2\nbootstrap: {resamples: 10}\n");
  CmdResult y = run_cli("audit " + study + " --out " + (t / "a") + " --store " + (t / "a.sqlite"), t.path());
  EXPECT_EQ(y.exit_code, 2) << y.err;
  EXPECT_NE(y.err.find("s.yaml:9: bootstrap.resamples: 10 resamples leave the tails"), std::string::npos) << y.err;
}

// sample-floor plans 24 items x 6 replicates x 2 configs x 4 conditions = 1,152 draws in 8
// cells; --max-draws 100 stores the first 100, all in the first cell (temperature=0, none).
TEST(MisleadingNumbers, PartialPlanIsSaidAtTheTopWithTheEmptyCells) {
  TempDir t;
  const std::string study = std::string(NF_SOURCE_DIR) + "/examples/sample-floor.yaml";
  const std::string args = " --out " + (t / "o") + " --store " + (t / "s.sqlite");
  CmdResult r = run_cli("audit " + study + args + " --quiet --max-draws 100", t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, "partial: 100 of 1152 planned draws stored (8.7%)"), 1u) << r.err;
  const json j = json::parse(slurp(t / "o/results.json"));
  const json& plan = j["plan"];
  EXPECT_EQ(plan["planned_draws"], 1152);
  EXPECT_EQ(plan["stored_draws"], 100);
  EXPECT_EQ(plan["partial"], true);
  EXPECT_EQ(plan["cells_planned"], 8);
  EXPECT_EQ(plan["cells_with_draws"], 1);
  ASSERT_EQ(plan["cells_without_draws"].size(), 7u);
  EXPECT_EQ(plan["cells_without_draws"][0],
            (json{{"subject", "sim"}, {"config", "temperature=0"}, {"condition", "shuffle"}}));
  for (const char* file : {"report.md", "report.html"}) {
    const std::string text = slurp(t / (std::string("o/") + file));
    const size_t at = text.find("partial: 100 of 1152 planned draws stored (8.7%); 7 of 8 planned cells have no draws");
    EXPECT_NE(at, std::string::npos) << file;
    EXPECT_LT(at, text.find("Summary")) << file << ": said before the summary";
    EXPECT_NE(text.find("sim · temperature=0.7 · remove_context"), std::string::npos) << file;
  }
  // The rest of the plan: no longer partial.
  CmdResult full = run_cli("audit " + study + args + " --quiet", t.path());
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_EQ(full.err.find("partial:"), std::string::npos) << full.err;
  const json k = json::parse(slurp(t / "o/results.json"));
  EXPECT_EQ(k["plan"]["partial"], false);
  EXPECT_EQ(k["plan"]["stored_draws"], 1152);
  EXPECT_EQ(slurp(t / "o/report.md").find("partial:"), std::string::npos);
}

// An imported store records no plan: no `plan`, no partial line.
TEST(MisleadingNumbers, ImportedStoreHasNoPlan) {
  TempDir t;
  const std::string path = t / "i.sqlite";
  {
    auto store = std::move(Store::open(path)).value();
    ASSERT_TRUE(store->put_study({"imp", "", 0, {{"name", "imp"}, {"imported", true}}}).ok());
    ASSERT_TRUE(store->put_item("q1", "q1", json::object()).ok());
    for (int r = 0; r < 3; ++r) {
      Draw d;
      d.key = DrawKey{"A", "q1", "none", "default", r};
      d.cluster = "q1";
      d.outcomes = {{"correct", r == 0 ? 1.0 : 0.0, ""}};
      ASSERT_TRUE(store->put_draw(d).ok());
    }
  }
  CmdResult r = run_cli("analyze --store " + path + " --out " + (t / "o") + " --analysis floor", t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(json::parse(slurp(t / "o/results.json"))["plan"].is_null());
  EXPECT_EQ(slurp(t / "o/report.md").find("partial:"), std::string::npos);
}

}  // namespace
}  // namespace nf
