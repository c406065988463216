// The envelope analysis on published labels (issue 11 "Must show"): the XSTest v2 labels
// of 5 models x 3 scorers on the 250 safe prompts, converted at test time by
// scripts/xstest-to-long (read in place, never committed), imported with `import draws`
// and analysed with `analyze --analysis envelope`; checked against an independent pandas /
// scipy count of the same files (tests/reference/xstest_envelope_ref.py) and against the
// counts the issue cites (gpt4 under the human label 229/250, llama2orig under string
// match 129/250).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "common/test_data.h"

namespace nf {
namespace {

struct Envelope {
  nlohmann::json section;  // results.json analyses.envelope
  nlohmann::json ref;      // the reference's object for this variant
};

Envelope run_variant(const testing::TempDir& t, const std::string& config, const std::string& ref_key) {
  const std::string xs = testing::data_file("xstest");
  const std::string src = NF_SOURCE_DIR;
  const std::string csv = t / (ref_key + ".csv");
  const std::string conv = "python3 " + src + "/scripts/xstest-to-long " + xs + " " + csv + " --config " + config +
                           " 2>" + (t / "conv.err");
  EXPECT_EQ(std::system(conv.c_str()), 0) << testing::slurp(t / "conv.err");
  const std::string store = t / (ref_key + ".sqlite");
  auto imp = testing::run_cli("import draws " + csv + " --store " + store, t.path());
  EXPECT_EQ(imp.exit_code, 0) << imp.err;
  auto an = testing::run_cli("analyze --store " + store + " --out " + (t / ref_key) +
                                 " --analysis 'envelope={\"resamples\": 200}'",
                             t.path());
  EXPECT_EQ(an.exit_code, 0) << an.err;
  const auto results = nlohmann::json::parse(testing::slurp(t / (ref_key + "/results.json")));
  const std::string refcmd = "/usr/bin/python3 " + src + "/tests/reference/xstest_envelope_ref.py " + xs + " >" +
                             (t / "ref.json") + " 2>" + (t / "ref.err");
  EXPECT_EQ(std::system(refcmd.c_str()), 0) << testing::slurp(t / "ref.err");
  const auto ref = nlohmann::json::parse(testing::slurp(t / "ref.json"));
  return {results["analyses"]["envelope"], ref[ref_key]};
}

/// Compares cells, pairs, reachable orderings and tau_R with the reference.
void expect_matches_reference(const Envelope& e) {
  ASSERT_FALSE(e.section.contains("skipped")) << e.section.dump();
  std::map<std::pair<std::string, std::string>, std::pair<double, int64_t>> cells;
  for (const auto& s : e.section["subjects"])
    for (const auto& c : s["cells"])
      cells[{s["subject"].get<std::string>(), c["config"].get<std::string>()}] = {c["score"].get<double>(),
                                                                                   c["n"].get<int64_t>()};
  ASSERT_EQ(cells.size(), e.ref["cells"].size());
  for (const auto& c : e.ref["cells"]) {
    auto it = cells.find({c["model"].get<std::string>(), c["config"].get<std::string>()});
    ASSERT_NE(it, cells.end()) << c.dump();
    EXPECT_EQ(it->second.second, c["n"].get<int64_t>()) << c.dump();
    EXPECT_EQ(std::lround(it->second.first * static_cast<double>(it->second.second)), c["full"].get<int64_t>())
        << c.dump();
  }
  ASSERT_EQ(e.section["pairs"].size(), e.ref["pairs"].size());
  for (size_t i = 0; i < e.ref["pairs"].size(); ++i) {
    const auto& p = e.section["pairs"][i];
    const auto& r = e.ref["pairs"][i];
    EXPECT_EQ(p["a"], r["a"]);
    EXPECT_EQ(p["b"], r["b"]);
    EXPECT_EQ(p["n_plus"], r["n_plus"]) << p["a"] << " " << p["b"];
    EXPECT_EQ(p["n_minus"], r["n_minus"]) << p["a"] << " " << p["b"];
    EXPECT_EQ(p["n_ties"], r["n_ties"]) << p["a"] << " " << p["b"];
    const double c = e.ref["n_configs"].get<double>();
    EXPECT_DOUBLE_EQ(p["rho_flip"].get<double>(),
                     std::min(r["n_plus"].get<double>(), r["n_minus"].get<double>()) / c);
  }
  EXPECT_EQ(e.section["rankings"]["reachable"], e.ref["reachable"]);
  EXPECT_NEAR(e.section["rankings"]["tau_r"].get<double>(), e.ref["tau_r"].get<double>(), 1e-12);
}

TEST(EnvelopePublished, XstestScorersGiveOneOrderingAndTheCitedCounts) {
  testing::TempDir t;
  const auto e = run_variant(t, "scorer", "scorer");
  expect_matches_reference(e);
  EXPECT_EQ(e.section["n_configs"], 3);
  // The counts the issue cites, from the published files.
  int cited = 0;
  for (const auto& s : e.section["subjects"])
    for (const auto& c : s["cells"]) {
      const long full = std::lround(c["score"].get<double>() * 250);
      if (s["subject"] == "gpt4" && c["config"] == "scorer=human") {
        EXPECT_EQ(full, 229);
        ++cited;
      }
      if (s["subject"] == "llama2orig" && c["config"] == "scorer=strmatch") {
        EXPECT_EQ(full, 129);
        ++cited;
      }
    }
  EXPECT_EQ(cited, 2);
  // Changing the scorer alone never reverses a pair here: the certificate holds for all 10.
  for (const auto& p : e.section["pairs"]) EXPECT_TRUE(p["no_strict_reversal"].get<bool>()) << p.dump();
  EXPECT_EQ(e.section["rankings"]["mismatch_rate"], 0.0);
  EXPECT_DOUBLE_EQ(e.section["rankings"]["mismatch_null"].get<double>(), 1.0 - 1.0 / 120.0);
}

TEST(EnvelopePublished, XstestTypeByScorerGivesFlips) {
  testing::TempDir t;
  const auto e = run_variant(t, "type,scorer", "type_scorer");
  expect_matches_reference(e);
  EXPECT_EQ(e.section["n_configs"], 30);
  int flipped = 0;
  for (const auto& p : e.section["pairs"]) flipped += p["no_strict_reversal"].get<bool>() ? 0 : 1;
  EXPECT_GT(flipped, 0);
  EXPECT_GT(e.section["rankings"]["reachable"].get<int>(), 1);
  EXPECT_LT(e.section["rankings"]["tau_r"].get<double>(), 1.0);
  // Two axes: the variance partition keeps the two-way interactions.
  EXPECT_FALSE(e.section["variance"].contains("skipped"));
}

// BBQ: UnifiedQA-11B under three prompt formats, categories as subjects (one published
// model), ambiguous contexts. Cell counts equal a direct pandas count of the same files.
TEST(EnvelopePublished, BbqPromptFormatsReorderCategories) {
  testing::TempDir t;
  const std::string bbq = testing::data_file("bbq");
  const std::string src = NF_SOURCE_DIR;
  const std::string csv = t / "bbq.csv";
  ASSERT_EQ(std::system(("python3 " + src + "/scripts/bbq-to-long " + bbq + " " + csv + " 2>" + (t / "e")).c_str()), 0)
      << testing::slurp(t / "e");
  auto imp = testing::run_cli("import draws " + csv + " --store " + (t / "s.sqlite"), t.path());
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  auto an = testing::run_cli("analyze --store " + (t / "s.sqlite") + " --out " + (t / "out") +
                                 " --analysis 'envelope={\"condition\": \"ambig\", \"parse_outcome\": \"parsed\", "
                                 "\"resamples\": 100}'",
                             t.path());
  ASSERT_EQ(an.exit_code, 0) << an.err;
  const auto e = nlohmann::json::parse(testing::slurp(t / "out/results.json"))["analyses"]["envelope"];
  ASSERT_FALSE(e.contains("skipped")) << e.dump();
  EXPECT_EQ(e["outcome"], "correct");
  EXPECT_EQ(e["n_configs"], 3);
  EXPECT_EQ(e["n_subjects"], 6);
  // Direct count: gold = the option whose normalised text equals the prediction's.
  const std::string py =
      "import glob,json,re,os\n"
      "def n(s):\n s=re.sub(r'[^a-z0-9 ]','',s.lower().strip()); s=re.sub(r'^the ','',s); return ' '.join(s.split())\n"
      "out={}\n"
      "for p in sorted(glob.glob(os.path.join('" + bbq + "','unifiedqa_preds_*.jsonl'))):\n"
      " c=os.path.basename(p)[16:-6]\n"
      " for l in open(p):\n"
      "  d=json.loads(l)\n"
      "  if d['context_condition']!='ambig': continue\n"
      "  for f in ('race','qonly','arc'):\n"
      "   m=[i for i in range(3) if n(d['ans%d'%i])==n(d['unifiedqa-t5-11b_pred_'+f])]\n"
      "   k=c+'|format='+f; a=out.setdefault(k,[0,0,0]); a[2]+=1\n"
      "   if len(m)==1: a[1]+=1; a[0]+=int(m[0]==d['label'])\n"
      "print(json.dumps(out))\n";
  testing::write_text(t / "count.py", py);
  ASSERT_EQ(std::system(("/usr/bin/python3 " + (t / "count.py") + " >" + (t / "count.json")).c_str()), 0);
  const auto ref = nlohmann::json::parse(testing::slurp(t / "count.json"));
  int checked = 0;
  for (const auto& s : e["subjects"])
    for (const auto& c : s["cells"]) {
      const auto& r = ref[s["subject"].get<std::string>() + "|" + c["config"].get<std::string>()];
      EXPECT_EQ(c["n"], r[1]) << s["subject"] << " " << c["config"];
      EXPECT_EQ(std::lround(c["score"].get<double>() * c["n"].get<double>()), r[0].get<long>());
      EXPECT_NEAR(c["parse_rate"].get<double>(), r[1].get<double>() / r[2].get<double>(), 1e-12);
      ++checked;
    }
  EXPECT_EQ(checked, 18);
  EXPECT_GT(e["rankings"]["reachable"].get<int>(), 1);  // the format alone reorders categories
  EXPECT_FALSE(e["parse_clean"].contains("skipped"));
}

}  // namespace
}  // namespace nf
