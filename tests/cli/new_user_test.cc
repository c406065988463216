// Issue 12 item 6: what a new user ran into, one test per fix.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_data.h"

namespace nf {
namespace {

using testing::CmdResult;
using testing::run_cli;
using testing::TempDir;

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

std::string local_study(const std::string& subject) {
  return "name: local\nseed: 1\ntask: mcq\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
         "/data/sample-mcq.jsonl\n  id_field: id\nsubjects:\n" + subject +
         "conditions: [none]\nconfigs:\n  temperature: [0.7]\nreplicates: 2\nanalyses:\n  floor: {}\n";
}

// The README's old flow-map subject: the error names the line and says to quote ${...}.
TEST(NewUser, UnquotedEnvVarInFlowMapSaysQuoteIt) {
  TempDir d;
  testing::write_text(d / "s.yaml", local_study("  - {name: local, backend: openai, base_url: ${SIM_URL}, model: m}\n"));
  CmdResult r = run_cli("audit " + d / "s.yaml" + " --quiet --out " + d / "out", d.path(), "SIM_URL=http://127.0.0.1:9/v1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "s.yaml:")) << r.err;
  EXPECT_TRUE(has(r.err, "quote it")) << r.err;
}

// A missing API key names file:line:key and says serve-sim needs none.
TEST(NewUser, MissingApiKeyNamesFileLineAndKey) {
  TempDir d;
  testing::write_text(d / "s.yaml", local_study("  - name: local\n    backend: openai\n    base_url: http://127.0.0.1:9/v1\n"
                                                "    model: m\n    api_key_env: NF_TEST_KEY_THAT_IS_NOT_SET\n"));
  CmdResult r = run_cli("audit " + d / "s.yaml" + " --quiet --out " + d / "out", d.path(),
                        "env -u NF_TEST_KEY_THAT_IS_NOT_SET");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "s.yaml:13: subjects[0].api_key_env")) << r.err;
  EXPECT_TRUE(has(r.err, "NF_TEST_KEY_THAT_IS_NOT_SET is not set")) << r.err;
  EXPECT_TRUE(has(r.err, "serve-sim")) << r.err;
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

// A majority vote of 3 needs 6 replicates: a warning at load naming file:line:key (the
// study still runs; the report repeats the warning above the empty rows).
TEST(NewUser, VoteSizeLargerThanReplicatesAllowWarnsAtLoad) {
  TempDir d;
  std::string study = local_study("  - name: sim\n    backend: sim\n    model: sim-mcq-1\n");
  study.replace(study.find("replicates: 2"), 13, "replicates: 4");
  study += "  majority_floor: {vote_sizes: [3]}\n";
  testing::write_text(d / "s.yaml", study);
  CmdResult r = run_cli("audit " + d / "s.yaml" + " --quiet --out " + d / "out", d.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.err, "warning: "));
  EXPECT_TRUE(has(r.err, "s.yaml:18: analyses.majority_floor.vote_sizes: vote size 3 needs at least 6 replicates"))
      << r.err;
  EXPECT_TRUE(has(testing::slurp(d / "out/report.md"), "**Warning:** vote size 3 needs at least 6 replicates"));
}

// With the default analyses and 4 replicates there is no majority vote of 3 (no 0/0 table).
TEST(NewUser, DefaultAnalysesWithFourReplicatesSkipTheMajorityVote) {
  TempDir d;
  std::string study = local_study("  - name: sim\n    backend: sim\n    model: sim-mcq-1\n");
  study.replace(study.find("replicates: 2"), 13, "replicates: 4");
  study = study.substr(0, study.find("analyses:"));
  testing::write_text(d / "s.yaml", study);
  CmdResult r = run_cli("audit " + d / "s.yaml" + " --quiet --out " + d / "out", d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = testing::slurp(d / "out/report.md");
  EXPECT_TRUE(has(md, "## Instability floor")) << md;
  EXPECT_FALSE(has(md, "0/0")) << md;
  EXPECT_FALSE(has(md, "## Majority-vote floor")) << md;
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

// The released missing-info votes (seed 004) hold 2 null votes: reported as missing votes,
// never as API errors to be retried; importing the directory twice skips what is stored.
TEST(NewUser, ImportedNullVotesAreMissingNotApiErrorsAndReimportSkips) {
  TempDir d;
  const std::string dir = testing::data_file("missing-info-judges");
  CmdResult a = run_cli("import missing-info " + dir + " --store " + d / "mi.sqlite", d.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  CmdResult b = run_cli("import missing-info " + dir + " --store " + d / "mi.sqlite", d.path());
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_TRUE(has(b.err, "800 votes and 150 human labels already in the store, left unchanged")) << b.err;
  CmdResult an = run_cli("analyze --store " + d / "mi.sqlite" + " --out " + d / "out", d.path());
  ASSERT_EQ(an.exit_code, 0) << an.err;
  const std::string md = testing::slurp(d / "out/report.md");
  EXPECT_TRUE(has(md, "Votes: 798 (not votes: 2: 0 parse errors, 0 API errors, 2 missing votes)")) << md;
  EXPECT_FALSE(has(md, "retried by the next")) << md;
  // The judge sections read in one direction (appropriate), and the same-provider effect has
  // one name in the README, the report and results.json.
  const std::string judge_sections = md.substr(md.find("## Judge panel"));
  EXPECT_FALSE(has(judge_sections, "nappropriate-confident rate (")) << judge_sections;
  EXPECT_FALSE(has(judge_sections, "| judge inappropriate |")) << judge_sections;
  EXPECT_TRUE(has(md, "### Same-provider effect")) << md;
  const auto j = nlohmann::json::parse(testing::slurp(d / "out/results.json"));
  EXPECT_TRUE(j["analyses"]["judge_panel"].contains("same_provider_effect"));
  EXPECT_FALSE(j["analyses"]["judge_panel"].contains("self_preference"));
  EXPECT_TRUE(has(testing::slurp(std::string(NF_SOURCE_DIR) + "/README.md"), "same-provider effect"));
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

// `export --format csv` without --out writes to stdout (as the README's command table says),
// rows in draw-key order, the temperature axis as a numeric column.
TEST(NewUser, ExportCsvToStdoutInDrawKeyOrderWithNumericConfigColumns) {
  TempDir d;
  std::string study = local_study("  - name: sim\n    backend: sim\n    model: sim-mcq-1\n");
  study.replace(study.find("temperature: [0.7]"), 18, "temperature: [0, 0.7]");
  testing::write_text(d / "s.yaml", study);
  CmdResult a = run_cli("audit " + d / "s.yaml" + " --quiet --out " + d / "out" + " --store " + d / "s.sqlite", d.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  CmdResult e = run_cli("export --store " + d / "s.sqlite" + " --format csv", d.path());
  ASSERT_EQ(e.exit_code, 0) << e.err;
  std::istringstream in(e.out);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header, "subject,item,cluster,condition,config,replicate,status,outcome,value,label,temperature");
  std::vector<std::string> keys;
  int rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 11u) << line;
    EXPECT_EQ(f[10], f[4] == "temperature=0" ? "0" : "0.7") << line;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s\x01%s\x01%s\x01%s\x01%06d", f[0].c_str(), f[1].c_str(), f[3].c_str(), f[4].c_str(),
                  std::stoi(f[5]));
    keys.push_back(buf);
  }
  EXPECT_EQ(rows, 24 * 2 * 2 * 2);  // items x configs x replicates x outcomes (correct, choice)
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

// Top-level help lists every kind `import` accepts (read from `import --help`, so a new
// kind without a help entry fails here); run --help does not promise a report.
TEST(NewUser, HelpListsEveryImportKindAndRunHelpPromisesNoReport) {
  TempDir d;
  CmdResult imp = run_cli("import --help", d.path());
  const auto at = imp.out.find("what FILE holds: ");
  ASSERT_NE(at, std::string::npos) << imp.out;
  std::string list = imp.out.substr(at + 17, imp.out.find('\n', at) - at - 17);
  std::vector<std::string> kinds;
  for (size_t s = 0; s < list.size();) {
    size_t e = list.find(" | ", s);
    kinds.push_back(list.substr(s, e == std::string::npos ? std::string::npos : e - s));
    if (e == std::string::npos) break;
    s = e + 3;
  }
  ASSERT_GE(kinds.size(), 5u) << list;
  CmdResult top = run_cli("--help", d.path());
  const auto line_at = top.out.find("  import ");
  ASSERT_NE(line_at, std::string::npos) << top.out;
  const std::string line = top.out.substr(line_at, top.out.find('\n', line_at) - line_at);
  for (const auto& k : kinds) EXPECT_TRUE(has(line, k)) << k << " missing from: " << line;
  CmdResult run = run_cli("run --help", d.path());
  EXPECT_TRUE(has(run.out, "run writes no report")) << run.out;
}

}  // namespace
}  // namespace nf

namespace nf {
namespace {

// One rule for relative paths (docs/study.md): a study-relative path resolves against the
// study file's folder, a relative ${VAR} value against the working directory; the error
// says which rule applied.
TEST(NewUser, RelativePathRulesAreStatedInTheError) {
  TempDir d;
  std::filesystem::create_directories(d / "sub");
  std::string study = local_study("  - name: sim\n    backend: sim\n    model: sim-mcq-1\n");
  const auto at = study.find(std::string(NF_SOURCE_DIR) + "/data/sample-mcq.jsonl");
  std::string env_study = study, rel_study = study;
  env_study.replace(at, std::string(NF_SOURCE_DIR).size() + 22, "${NF_TEST_DIR}/items.jsonl");
  rel_study.replace(at, std::string(NF_SOURCE_DIR).size() + 22, "items.jsonl");
  testing::write_text(d / "sub/env.yaml", env_study);
  testing::write_text(d / "sub/rel.yaml", rel_study);
  // items.jsonl exists in d (the working directory), not in d/sub (the study's folder).
  testing::write_text(d / "items.jsonl", testing::slurp(std::string(NF_SOURCE_DIR) + "/data/sample-mcq.jsonl"));
  CmdResult env = run_cli("audit sub/env.yaml --quiet --out out1", d.path(), "cd " + d.path() + " && NF_TEST_DIR=.");
  EXPECT_EQ(env.exit_code, 0) << env.err;
  CmdResult rel = run_cli("audit sub/rel.yaml --quiet --out out2", d.path(), "cd " + d.path() + " &&");
  EXPECT_EQ(rel.exit_code, 2) << rel.err;
  EXPECT_TRUE(has(rel.err, "sub/items.jsonl")) << rel.err;
  EXPECT_TRUE(has(rel.err, "resolves against the study file's directory")) << rel.err;
}

}  // namespace
}  // namespace nf
