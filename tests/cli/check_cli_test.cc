// `noisefloor check`: CI gates through the real binary. A study whose flip rate does not
// clear its floor exits 1 naming the cell; one whose flip rate does exits 0; bad rules exit 2.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "common/test_data.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::TempDir;

/// A two-arm descriptor study in the long format (our own numbers): 20 vignettes x 4
/// replicates of `admit` under the reference and one descriptor arm. Vignettes 0-5 are
/// noisy under both arms (0,1,0,1), so the floor is 6 x 4 / (20 x 6) = 0.2; the others
/// are constant at v % 2 under the reference. With `effect` the descriptor arm takes the
/// opposite action on those 14 vignettes (flip rate (14 x 16 + 6 x 8) / 320 = 0.85); without it the arm repeats the
/// reference (flip rate 6 x 8 / 320 = 0.15, below the floor).
std::string two_arm_csv(bool effect) {
  std::ostringstream csv;
  csv << "subject,item,cluster,condition,config,replicate,outcome,value\n";
  for (int v = 0; v < 20; ++v)
    for (const char* cond : {"ref_white_man_private", "race_black_man_private"})
      for (int r = 0; r < 4; ++r) {
        int value = v < 6 ? r % 2 : v % 2;
        if (effect && v >= 6 && std::string(cond) == "race_black_man_private") value = 1 - value;
        csv << "m,v" << v << ",v" << v << "," << cond << ",default," << r << ",admit," << value << "\n";
      }
  return csv.str();
}

TEST(CheckCli, FlipRateThatDoesNotClearItsFloorFailsNamingTheCell) {
  TempDir t;
  for (const bool effect : {false, true}) {
    const std::string name = effect ? "effect" : "null";
    testing::write_text(t / (name + ".csv"), two_arm_csv(effect));
    CmdResult imp = run_cli("import draws " + (t / (name + ".csv")) + " --store " + (t / (name + ".sqlite")), t.path());
    ASSERT_EQ(imp.exit_code, 0) << imp.err;
  }
  CmdResult null_run = run_cli("check --store " + (t / "null.sqlite") + " --flip-clears-floor", t.path());
  EXPECT_EQ(null_run.exit_code, 1) << null_run.out << null_run.err;
  EXPECT_NE(null_run.out.find("FAIL rule 1 flip_rate_clears_floor: subject=m config=default "
                              "condition=race_black_man_private action=admit: flip rate 0.15 <= floor upper bound"),
            std::string::npos)
      << null_run.out;
  EXPECT_NE(null_run.out.find("1 failed"), std::string::npos);
  CmdResult effect_run = run_cli("check --store " + (t / "effect.sqlite") + " --flip-clears-floor -v", t.path());
  EXPECT_EQ(effect_run.exit_code, 0) << effect_run.out << effect_run.err;
  EXPECT_NE(effect_run.out.find("pass rule 1 flip_rate_clears_floor: subject=m config=default "
                                "condition=race_black_man_private action=admit: flip rate 0.85 > floor upper bound"),
            std::string::npos)
      << effect_run.out;
  EXPECT_NE(effect_run.out.find("0 failed"), std::string::npos);
}

TEST(CheckCli, GatesOnTheRealInspectEvalSet) {
  TempDir t;
  std::string logs;
  for (const char* id : {"jKN69eAYYpZFAZhRgMAztp", "CuCFPdqnwXupUkxp69nJ2a", "J5EskSJVsBD9iRd47twk8x"})
    logs += " " + testing::data_file(std::string("harness-logs/2025-09-15T15-04-34-04-00_popularity_") + id + ".eval");
  ASSERT_EQ(run_cli("import inspect" + logs + " --store " + (t / "s.sqlite"), t.path()).exit_code, 0);
  // Claude's floor is 6/100 (sample 5 varies); the others never vary.
  CmdResult pooled = run_cli("check --store " + (t / "s.sqlite") + " --max-pooled-floor 0.05", t.path());
  EXPECT_EQ(pooled.exit_code, 1);
  EXPECT_NE(pooled.out.find("FAIL rule 1 max_pooled_floor: subject=anthropic/claude-sonnet-4-20250514 config=default "
                            "condition=popularity outcome=pooled: pooled floor 0.06 > 0.05"),
            std::string::npos)
      << pooled.out;
  EXPECT_EQ(run_cli("check --store " + (t / "s.sqlite") + " --max-pooled-floor 0.1 --max-parse-error-rate 0", t.path()).exit_code,
            0);
  // Claude vs Gemini: |0.66 - 0.70| = 0.04 does not clear Claude's floor upper bound; Gemini
  // vs GPT-5 (0.70 - 0.60, both floors 0) does.
  CmdResult acc = run_cli("check --store " + (t / "s.sqlite") + " --accuracy-difference-clears-floor", t.path());
  EXPECT_EQ(acc.exit_code, 1);
  EXPECT_NE(acc.out.find("FAIL rule 1 accuracy_difference_clears_floor: a=anthropic/claude-sonnet-4-20250514 "
                         "b=google/gemini-2.5-pro config=default condition=popularity outcome=match"),
            std::string::npos)
      << acc.out;
  // Gemini and GPT-5 never vary: their floor intervals are [0, 0], which is not a certainty;
  // the gate bounds such a floor by the Wilson bound on 0 of their 10 items varying (0.2775),
  // so their 0.10 difference (one item in ten) does not clear it (tester s11 finding 6).
  EXPECT_NE(acc.out.find("google/gemini-2.5-pro: the Wilson bound for 0 of 10 clusters varying"), std::string::npos)
      << acc.out;
  EXPECT_NE(acc.out.find("FAIL rule 1 accuracy_difference_clears_floor: a=google/gemini-2.5-pro b=openai/gpt-5 "
                         "config=default condition=popularity outcome=match: |accuracy difference| 0.1 <= larger floor "
                         "upper bound 0.2775"),
            std::string::npos)
      << acc.out;
  testing::write_text(t / "rules.yaml",
                      "rules:\n"
                      "  - rule: accuracy_difference_clears_floor\n"
                      "    a: google/gemini-2.5-pro\n"
                      "    b: openai/gpt-5\n"
                      "  - {rule: min_clusters, min: 10}\n");
  CmdResult undecided = run_cli("check --store " + (t / "s.sqlite") + " --rules " + (t / "rules.yaml"), t.path());
  EXPECT_EQ(undecided.exit_code, 1) << undecided.out << undecided.err;
  EXPECT_NE(undecided.out.find("2 rule(s), 10 cell(s) checked, 1 failed"), std::string::npos) << undecided.out;
  // The same gates on a results.json written by analyze.
  ASSERT_EQ(run_cli("analyze --store " + (t / "s.sqlite") + " --out " + (t / "out"), t.path()).exit_code, 0);
  const CmdResult from_json =
      run_cli("check --results " + (t / "out/results.json") + " --rules " + (t / "rules.yaml"), t.path());
  EXPECT_EQ(from_json.exit_code, 1);
  EXPECT_EQ(from_json.out, undecided.out);
}

TEST(CheckCli, BadRulesExitTwo) {
  TempDir t;
  testing::write_text(t / "d.csv", two_arm_csv(false));
  ASSERT_EQ(run_cli("import draws " + (t / "d.csv") + " --store " + (t / "s.sqlite"), t.path()).exit_code, 0);
  testing::write_text(t / "typo.yaml", "rules:\n  - rule: max_pooled_flor\n    max: 0.1\n");
  CmdResult a = run_cli("check --store " + (t / "s.sqlite") + " --rules " + (t / "typo.yaml"), t.path());
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.err.find("typo.yaml:2: rule: unknown rule 'max_pooled_flor' (did you mean"), std::string::npos) << a.err;
  testing::write_text(t / "none.yaml", "rules:\n  - {rule: max_pooled_floor, max: 0.1, subject: nobody}\n");
  CmdResult b = run_cli("check --store " + (t / "s.sqlite") + " --rules " + (t / "none.yaml"), t.path());
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("matched no cell"), std::string::npos) << b.err;
  EXPECT_EQ(run_cli("check --store " + (t / "s.sqlite"), t.path()).exit_code, 2);  // no rules at all
  EXPECT_EQ(run_cli("check --store " + (t / "missing.sqlite") + " --max-parse-rate 0.1", t.path()).exit_code, 2);
}

}  // namespace
}  // namespace nf

// Tester s11 finding 18: `check` passed (exit 0) on a store whose plan was 13% run: the
// cells that would fail were never drawn.
namespace nf {
namespace {

TEST(CheckCli, APartialPlanFailsUnlessAllowed) {
  TempDir t;
  CmdResult part = run_cli("run " + std::string(NF_SOURCE_DIR) + "/examples/sample-floor.yaml --store " +
                               (t / "part.sqlite") + " --max-draws 150 --quiet",
                           t.path());
  ASSERT_EQ(part.exit_code, 0) << part.err;
  CmdResult gate = run_cli("check --store " + (t / "part.sqlite") + " --max-pooled-floor 0.99", t.path());
  EXPECT_EQ(gate.exit_code, 1) << gate.out << gate.err;
  EXPECT_NE(gate.out.find("FAIL plan: partial: 150 of 1152 planned draws stored (13.0%); 6 of 8 planned cells have "
                          "no draws"),
            std::string::npos)
      << gate.out;
  EXPECT_NE(gate.out.find("0 failed, plan partial"), std::string::npos) << gate.out;
  CmdResult allowed =
      run_cli("check --store " + (t / "part.sqlite") + " --max-pooled-floor 0.99 --allow-partial", t.path());
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  EXPECT_NE(allowed.out.find("note plan: partial: 150 of 1152"), std::string::npos) << allowed.out;
  // Finished, the same gate passes without the flag.
  ASSERT_EQ(run_cli("run " + std::string(NF_SOURCE_DIR) + "/examples/sample-floor.yaml --store " + (t / "part.sqlite") +
                        " --quiet",
                    t.path())
                .exit_code,
            0);
  CmdResult full = run_cli("check --store " + (t / "part.sqlite") + " --max-pooled-floor 0.99", t.path());
  EXPECT_EQ(full.exit_code, 0) << full.out << full.err;
  EXPECT_EQ(full.out.find("plan"), std::string::npos) << full.out;
}

}  // namespace
}  // namespace nf
