// The envelope analysis (seed 003 §4, App. F) on a hand-built 3-model grid whose pairwise
// signs are known by construction, with tau_R and the Type-II variance partition checked
// against scipy/statsmodels (tests/reference/gen_envelope.py -> envelope_grid.json).
#include "metrics/envelope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace nf {
namespace {

nlohmann::json golden() {
  std::ifstream in(std::string(NF_SOURCE_DIR) + "/tests/reference/envelope_grid.json");
  EXPECT_TRUE(in.good()) << "missing tests/reference/envelope_grid.json";
  return nlohmann::json::parse(in);
}

std::vector<EnvelopeCell> cells_of(const nlohmann::json& c) {
  std::vector<EnvelopeCell> out;
  for (const auto& r : c["cells"])
    out.push_back({r["model"].get<std::string>(), r["config"].get<std::string>(), r["score"].get<double>(), 10,
                   std::nullopt});
  return out;
}

const nlohmann::json& pair_of(const nlohmann::json& j, const std::string& a, const std::string& b) {
  for (const auto& p : j["pairs"])
    if (p["a"] == a && p["b"] == b) return p;
  ADD_FAILURE() << "no pair " << a << " " << b;
  static nlohmann::json none;
  return none;
}

EnvelopeOptions quick() {
  EnvelopeOptions o;
  o.resamples = 200;
  return o;
}

// Signs by construction (gen_envelope.py GRID):
//   config          A    B    C    ordering
//   t1, k=0        .80  .60  .40   A > B > C
//   t1, k=3        .70  .70  .50   A = B > C
//   t1, k=5        .75  .65  .55   A > B > C
//   t2, k=0        .50  .60  .30   B > A > C
//   t2, k=3        .45  .55  .65   C > B > A
//   t2, k=5        .60  .40  .50   A > C > B
TEST(Envelope, HandBuiltGridGivesKnownCountsAndOrderings) {
  const auto g = golden()["cases"][0];
  ASSERT_EQ(g["name"], "balanced");
  auto r = envelope_analysis(cells_of(g), quick());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& j = *r;
  EXPECT_EQ(j["n_configs"], 6);
  const auto& ab = pair_of(j, "A", "B");
  EXPECT_EQ(ab["n_plus"], 3);
  EXPECT_EQ(ab["n_minus"], 2);
  EXPECT_EQ(ab["n_ties"], 1);
  EXPECT_DOUBLE_EQ(ab["rho_flip"].get<double>(), 2.0 / 6.0);  // ties stay in |C|
  EXPECT_DOUBLE_EQ(ab["strict_share"].get<double>(), 2.0 / 5.0);
  EXPECT_EQ(ab["majority"], "A > B");
  EXPECT_EQ(ab["reversing_configs"], nlohmann::json({"fewshot=0,template=t2", "fewshot=3,template=t2"}));
  EXPECT_EQ(ab["tie_configs"], nlohmann::json({"fewshot=3,template=t1"}));
  EXPECT_FALSE(ab["no_strict_reversal"].get<bool>());
  const auto& ac = pair_of(j, "A", "C");
  EXPECT_EQ(ac["n_plus"], 5);
  EXPECT_EQ(ac["n_minus"], 1);
  EXPECT_EQ(ac["n_ties"], 0);
  EXPECT_DOUBLE_EQ(ac["rho_flip"].get<double>(), 1.0 / 6.0);
  const auto& bc = pair_of(j, "B", "C");
  EXPECT_EQ(bc["n_plus"], 4);
  EXPECT_EQ(bc["n_minus"], 2);
  EXPECT_DOUBLE_EQ(bc["rho_flip"].get<double>(), 2.0 / 6.0);

  const auto& rk = j["rankings"];
  EXPECT_EQ(rk["reachable"], 4);  // A>B>C (3 configs, one by the alphabetical tie-break), B>A>C, C>B>A, A>C>B
  EXPECT_DOUBLE_EQ(rk["possible"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(rk["mismatch_rate"].get<double>(), 12.0 / 15.0);
  EXPECT_DOUBLE_EQ(rk["mismatch_null"].get<double>(), 5.0 / 6.0);
  EXPECT_EQ(rk["per_config"][2]["config"], "fewshot=3,template=t1");  // configurations sorted by id
  EXPECT_EQ(rk["per_config"][2]["ordering"], "A = B > C");
  EXPECT_EQ(rk["per_config"][2]["total_order"], "A > B > C");
  EXPECT_EQ(rk["tau_pairs"], g["tau_pairs"]);
  EXPECT_NEAR(rk["tau_r"].get<double>(), g["tau_r"].get<double>(), 1e-12);

  // Per subject: A's scores .8 .7 .75 .5 .45 .6.
  const auto& a = j["subjects"][0];
  EXPECT_NEAR(a["range"].get<double>(), 0.35, 1e-12);
  EXPECT_NEAR(a["sdi"].get<double>(), 0.35 / (3.8 / 6.0), 1e-12);
  EXPECT_NEAR(a["cfr"][0]["value"].get<double>(), 5.0 / 15.0, 1e-12);  // theta .5: 5 pass, 1 fail
  EXPECT_NEAR(a["cfr"][1]["value"].get<double>(), 9.0 / 15.0, 1e-12);  // theta .7: 3 pass, 3 fail
  EXPECT_TRUE(j["parse_clean"].contains("skipped"));
}

TEST(Envelope, VarianceSharesEqualStatsmodelsTypeII) {
  for (const auto& g : golden()["cases"]) {
    SCOPED_TRACE(g["name"].get<std::string>());
    auto r = envelope_analysis(cells_of(g), quick());
    ASSERT_TRUE(r.ok()) << r.status().message();
    const auto& v = (*r)["variance"];
    ASSERT_FALSE(v.contains("skipped")) << v.dump();
    EXPECT_FALSE(v.contains("dropped"));
    EXPECT_EQ(v["df_resid"], g["df_resid"]);
    for (const char* k : {"model", "implementation", "interaction", "residual"})
      EXPECT_NEAR(v["shares"][k].get<double>(), g["shares"][k].get<double>(), 1e-9) << k;
    EXPECT_NEAR(v["rho"].get<double>(), g["rho"].get<double>(), 1e-9);
    for (const auto& ax : v["per_axis_omega_sq"])
      EXPECT_NEAR(ax["omega_sq"].get<double>(), g["omega_sq"][ax["axis"].get<std::string>()].get<double>(), 1e-9);
    EXPECT_EQ(v["per_axis_omega_sq"].size(), 2u);
  }
}

TEST(Envelope, MissingCellLeavesPairsTheirSharedConfigurations) {
  const auto g = golden()["cases"][1];
  auto r = envelope_analysis(cells_of(g), quick());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(pair_of(*r, "A", "B")["n_configs"], 6);
  EXPECT_EQ(pair_of(*r, "A", "C")["n_configs"], 5);
  EXPECT_EQ((*r)["rankings"]["n_configs"], 5);
  EXPECT_NEAR((*r)["rankings"]["tau_r"].get<double>(), g["tau_r"].get<double>(), 1e-12);
}

TEST(Envelope, CertificateHoldsWhenOneModelAlwaysLeads) {
  std::vector<EnvelopeCell> cells;
  for (int c = 0; c < 4; ++c) {
    cells.push_back({"x", "template=t" + std::to_string(c), 0.9 - 0.1 * c, 5, 1.0});
    cells.push_back({"y", "template=t" + std::to_string(c), 0.5 - 0.1 * c, 5, c == 3 ? 0.9 : 1.0});
  }
  auto r = envelope_analysis(cells, quick());
  ASSERT_TRUE(r.ok());
  const auto& p = (*r)["pairs"][0];
  EXPECT_EQ(p["rho_flip"], 0.0);
  EXPECT_TRUE(p["no_strict_reversal"].get<bool>());
  EXPECT_EQ((*r)["rankings"]["reachable"], 1);
  EXPECT_EQ((*r)["rankings"]["tau_r"], 1.0);
  // Every bootstrap resample keeps x ahead: a degenerate range is flagged.
  EXPECT_TRUE((*r)["bootstrap"]["metrics"]["x|y.rho_flip"]["all_equal"].get<bool>());
  // Parse-clean: y parses 0.9 under t3, so t3 is excluded.
  EXPECT_EQ((*r)["parse_clean"]["n_configs"], 3);
  EXPECT_EQ((*r)["parse_clean"]["excluded_configs"], nlohmann::json({"template=t3"}));
}

TEST(Envelope, BootstrapIsSeededAndCoversThePointEstimate) {
  const auto g = golden()["cases"][0];
  auto o = quick();
  auto r1 = envelope_analysis(cells_of(g), o);
  auto r2 = envelope_analysis(cells_of(g), o);
  ASSERT_TRUE(r1.ok() && r2.ok());
  EXPECT_EQ((*r1)["bootstrap"], (*r2)["bootstrap"]);
  const auto& m = (*r1)["bootstrap"]["metrics"]["A|B.rho_flip"];
  EXPECT_LE(m["min"].get<double>(), 2.0 / 6.0);
  EXPECT_GE(m["max"].get<double>(), 2.0 / 6.0);
  EXPECT_LE(m["max"].get<double>(), 0.5);  // rho_flip is bounded by 1/2
  o.seed = 2;
  auto r3 = envelope_analysis(cells_of(g), o);
  EXPECT_NE((*r1)["bootstrap"]["metrics"], (*r3)["bootstrap"]["metrics"]);
}

TEST(Envelope, SaturatedGridDropsInteractionsAndSaysSo) {
  // One axis, one score per cell: model + axis + model:axis leaves no residual.
  std::vector<EnvelopeCell> cells;
  const double s[3][3] = {{0.9, 0.5, 0.7}, {0.6, 0.8, 0.4}, {0.3, 0.2, 0.1}};
  for (int m = 0; m < 3; ++m)
    for (int c = 0; c < 3; ++c)
      cells.push_back({std::string(1, static_cast<char>('a' + m)), "scorer" + std::to_string(c), s[m][c], 1,
                       std::nullopt});
  auto r = envelope_analysis(cells, quick());
  ASSERT_TRUE(r.ok());
  const auto& v = (*r)["variance"];
  ASSERT_TRUE(v.contains("dropped")) << v.dump();
  EXPECT_EQ(v["axes"], nlohmann::json({"config"}));
  double sum = 0;
  for (const auto& [k, x] : v["shares"].items()) sum += x.get<double>();
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_EQ(v["shares"]["interaction"], 0.0);
}

TEST(Envelope, NearZeroMeanFlagsSdi) {
  std::vector<EnvelopeCell> cells{{"a", "c1", 0.0, 1, {}}, {"a", "c2", 0.02, 1, {}},
                                  {"b", "c1", 0.5, 1, {}}, {"b", "c2", 0.4, 1, {}}};
  auto r = envelope_analysis(cells, quick());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)["subjects"][0]["sdi_unstable"].get<bool>());
  EXPECT_TRUE((*r)["subjects"][0]["sdi"].is_null());
  EXPECT_NEAR((*r)["subjects"][1]["sdi"].get<double>(), 0.1 / 0.45, 1e-12);
}

TEST(Envelope, BadInputIsRefusedWithItsName) {
  std::vector<EnvelopeCell> dup{{"a", "c1", 0.1, 1, {}}, {"a", "c1", 0.2, 1, {}}};
  auto r = envelope_analysis(dup, quick());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("appears twice"), std::string::npos);
  EXPECT_FALSE(config_axes("template=a,template=b").ok());
  EXPECT_FALSE(config_axes("template=a,,x=1").ok());
  EXPECT_EQ(config_axes("human")->at("config"), "human");
  auto o = EnvelopeOptions::from_json({{"threshold", 0.5}});
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("envelope.threshold: unknown option"), std::string::npos);
  EXPECT_FALSE(EnvelopeOptions::from_json({{"thresholds", {1.5}}}).ok());
  EXPECT_FALSE(EnvelopeOptions::from_json({{"resamples", -1}}).ok());
  EXPECT_TRUE(EnvelopeOptions::from_json({{"thresholds", {0.6}}, {"axes", {"template"}}}).ok());
}

TEST(Envelope, CellsFromOutcomeRowsCarryParseRates) {
  std::vector<OutcomeRow> rows;
  for (int i = 0; i < 4; ++i) {
    rows.push_back({"a", "template=t1", "none", "i" + std::to_string(i), "", 0, "correct", i < 3 ? 1.0 : 0.0, ""});
    rows.push_back({"a", "template=t1", "shuffle", "i" + std::to_string(i), "", 0, "correct", 1.0, ""});
  }
  std::vector<StatusCount> counts{{"a", "template=t1", "none", "ok", 4},
                                  {"a", "template=t1", "none", "parse_error", 1},
                                  {"a", "template=t1", "none", "api_error", 3}};
  auto one = envelope_cells(rows, counts, "correct", "none");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].config, "template=t1");
  EXPECT_DOUBLE_EQ((*one)[0].score, 0.75);
  EXPECT_DOUBLE_EQ(*(*one)[0].parse_rate, 4.0 / 5.0);  // api errors are not answers
  auto both = envelope_cells(rows, counts, "correct", "");
  ASSERT_TRUE(both.ok());
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[0].config, "template=t1,condition=none");
  EXPECT_FALSE((*both)[1].parse_rate.has_value());
  auto bad = envelope_cells(rows, counts, "accuracy", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("outcomes: correct"), std::string::npos);
}

// Issue 37 (tester s9 F18): the configuration bootstrap paired a resampled configuration
// with its own copy (tau = 1, no mismatch, no verdict flip), so on a 2-configuration grid
// the tau_R range reached 1 although the only pair of configurations gives -1. Hand
// enumeration of the 2-configuration bootstrap: the 4 equally likely index draws are
// (c1,c1), (c2,c2) (one distinct configuration: pairwise metrics undefined) and (c1,c2),
// (c2,c1) (the original pair: tau = -1, mismatch = 1, CFR_A at 0.6 = 1, CFR_B = 0). So every
// defined resample equals the estimate, and about half the resamples are defined.
TEST(Envelope, BootstrapPairsOnlyDistinctConfigurations) {
  std::vector<EnvelopeCell> cells{{"A", "c1", 0.8, 10, std::nullopt},
                                  {"B", "c1", 0.6, 10, std::nullopt},
                                  {"A", "c2", 0.5, 10, std::nullopt},
                                  {"B", "c2", 0.7, 10, std::nullopt}};
  EnvelopeOptions o;
  o.resamples = 1000;
  o.thresholds = {0.6};
  auto r = envelope_analysis(cells, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ((*r)["rankings"]["tau_r"].get<double>(), -1.0);
  const auto& m = (*r)["bootstrap"]["metrics"];
  for (const char* name : {"tau_r", "mismatch_rate", "A.cfr_0.6", "B.cfr_0.6"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(m.contains(name)) << m.dump();
    const auto& x = m[name];
    // Binomial(1000, 1/2): 400..600 is more than 6 standard deviations (15.8) wide.
    EXPECT_GT(x["defined"].get<int64_t>(), 400);
    EXPECT_LT(x["defined"].get<int64_t>(), 600);
    EXPECT_TRUE(x["all_equal"].get<bool>()) << x.dump();
  }
  EXPECT_DOUBLE_EQ(m["tau_r"]["min"].get<double>(), -1.0);
  EXPECT_DOUBLE_EQ(m["tau_r"]["max"].get<double>(), -1.0);  // was 1: a configuration against its copy
  EXPECT_DOUBLE_EQ(m["mismatch_rate"]["min"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(m["A.cfr_0.6"]["min"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(m["B.cfr_0.6"]["max"].get<double>(), 0.0);
  // Range and SDI are not pairwise: every resample defines them.
  EXPECT_EQ(m["A.range"]["defined"], 1000);
}

// A resample count with an empty tail at the level is refused (stats/resample_count.h);
// 0 (no bootstrap) stays allowed.
TEST(Envelope, TooFewResamplesAreRefused) {
  auto bad = EnvelopeOptions::from_json({{"resamples", 10}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("envelope.resamples: 10 resamples leave the tails"), std::string::npos)
      << bad.status().message();
  EXPECT_TRUE(EnvelopeOptions::from_json({{"resamples", 0}}).ok());
  EXPECT_TRUE(EnvelopeOptions::from_json({{"resamples", 40}}).ok());
  EXPECT_FALSE(EnvelopeOptions::from_json({{"resamples", 40}, {"level", 0.99}}).ok());  // needs 200
}

}  // namespace
}  // namespace nf
