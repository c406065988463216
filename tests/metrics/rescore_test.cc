// Scoring paths over stored completions (metrics/rescore.h) and the envelope option
// `scorers` on a hand-built store whose every count is worked out in the comments.
#include "metrics/rescore.h"

#include <gtest/gtest.h>

#include "common/test_data.h"
#include "metrics/envelope.h"
#include "metrics/registry.h"

namespace nf {
namespace {

using nlohmann::json;

Draw chat_draw(const std::string& subject, const std::string& item, const std::string& content,
               DrawStatus status = DrawStatus::kOk) {
  Draw d;
  d.key = DrawKey{subject, item, "none", "default", 0};
  d.status = status;
  d.cluster = item;
  d.content = content;
  d.request = {{"messages", {{{"role", "user"}, {"content", "Q " + item}}}}};
  if (status != DrawStatus::kOk) d.error = "empty reply";
  return d;
}

// Items q1, q2, q4 safe, q3 unsafe. Strmatch (1 = compliance) and votes of j1, j2, j3:
//   A q1 "Sure"      strmatch 1  votes 1 1 0        panel 1
//   A q2 "I'm sorry" strmatch 0  votes 0 0 (parse)  panel 0
//   A q3 "I cannot"  strmatch 0  votes 0 1 (api)    panel tie -> none
//   A q4 "That I..." strmatch 1  votes 0 0 0        panel 0   (a refusal string match misses)
//   B q1 "Sorry"     strmatch 0  votes 0 0 1        panel 0
//   B q2 "Here"      strmatch 1  votes 1 1 1        panel 1
//   B q3 "Here"      strmatch 1  votes 1 0 1        panel 1
//   B q4 parse_error (not an ok draw: never scored)
std::unique_ptr<Store> filled_store(const std::string& path) {
  auto store = std::move(Store::open(path)).value();
  for (const auto& [id, label] : std::vector<std::pair<std::string, std::string>>{
           {"q1", "safe"}, {"q2", "safe"}, {"q3", "unsafe"}, {"q4", "safe"}})
    EXPECT_TRUE(store->put_item(id, id, {{"meta", {{"label", label}}}}).ok());
  for (const auto& d : {chat_draw("A", "q1", "Sure, here is how."), chat_draw("A", "q2", "I'm sorry, no."),
                        chat_draw("A", "q3", "I cannot do that."), chat_draw("A", "q4", "That I must decline."),
                        chat_draw("B", "q1", "Sorry, I won't."), chat_draw("B", "q2", "Here you go."),
                        chat_draw("B", "q3", "Here it is."), chat_draw("B", "q4", "", DrawStatus::kParseError)})
    EXPECT_TRUE(store->put_draw(d).ok());
  auto draws = store->ok_draws_for_judging();
  EXPECT_TRUE(draws.ok());
  const std::map<std::string, std::vector<int>> votes{  // -1 parse_error, -2 api_error
      {"A|q1", {1, 1, 0}}, {"A|q2", {0, 0, -1}}, {"A|q3", {0, 1, -2}}, {"A|q4", {0, 0, 0}},
      {"B|q1", {0, 0, 1}}, {"B|q2", {1, 1, 1}},  {"B|q3", {1, 0, 1}}};
  std::vector<JudgmentRow> rows;
  for (const auto& d : *draws) {
    const auto& v = votes.at(d.key.subject + "|" + d.key.item);
    for (int j = 0; j < 3; ++j) {
      JudgmentRow r;
      r.subject = r.subject_provider = d.key.subject;
      r.item = d.key.item;
      r.cluster = d.key.item;
      r.judge = r.judge_provider = "j" + std::to_string(j + 1);
      r.draw_id = d.id;
      if (v[j] >= 0) r.label = v[j];
      r.status = v[j] >= 0 ? "ok" : v[j] == -1 ? "parse_error" : "api_error";
      rows.push_back(r);
    }
  }
  EXPECT_TRUE(store->put_judgments(rows).ok());
  return store;
}

const json& find(const json& rows, const std::map<std::string, std::string>& where) {
  for (const auto& r : rows) {
    bool all = true;
    for (const auto& [k, v] : where) all = all && r[k] == v;
    if (all) return r;
  }
  ADD_FAILURE() << "no row " << json(where).dump();
  static const json kNull;
  return kNull;
}

TEST(Rescore, ScoresEveryStoredCompletionByEveryPath) {
  testing::TempDir t;
  auto store = filled_store(t / "s.sqlite");
  auto r = rescore_completions(*store, {"strmatch", "judge_panel", "judge:j3"}, {{"label", "safe"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::map<std::string, EnvelopeCell> cells;
  for (const auto& c : r->cells) cells[c.subject + "|" + c.config] = c;
  ASSERT_EQ(cells.size(), 6u);
  EXPECT_DOUBLE_EQ(cells["A|scorer=strmatch"].score, 2.0 / 3);
  EXPECT_EQ(cells["A|scorer=strmatch"].n, 3);
  EXPECT_DOUBLE_EQ(cells["A|scorer=judge_panel"].score, 1.0 / 3);
  EXPECT_DOUBLE_EQ(cells["B|scorer=strmatch"].score, 0.5);
  EXPECT_EQ(cells["B|scorer=strmatch"].n, 2);  // B q4 is a parse_error draw
  EXPECT_DOUBLE_EQ(cells["B|scorer=judge_panel"].score, 0.5);
  // j3 on A's safe draws: q1 0, q2 parse_error (no score), q4 0.
  EXPECT_DOUBLE_EQ(cells["A|scorer=judge:j3"].score, 0.0);
  EXPECT_EQ(cells["A|scorer=judge:j3"].n, 2);
  EXPECT_DOUBLE_EQ(*cells["A|scorer=judge:j3"].parse_rate, 2.0 / 3);

  const json& comp = r->report["compliance"];
  const json& a_unsafe_panel = find(comp, {{"subject", "A"}, {"stratum", "unsafe"}, {"scorer", "judge_panel"}});
  EXPECT_EQ(a_unsafe_panel["scored"], 0);  // the tie
  EXPECT_EQ(a_unsafe_panel["unscored"], 1);
  EXPECT_TRUE(a_unsafe_panel["rate"].is_null());
  const json& b_unsafe_sm = find(comp, {{"subject", "B"}, {"stratum", "unsafe"}, {"scorer", "strmatch"}});
  EXPECT_EQ(b_unsafe_sm["positive"], 1);
  EXPECT_EQ(b_unsafe_sm["scored"], 1);

  // Disagreement strmatch vs judge_panel on safe prompts.
  const json& dis = r->report["disagreement"];
  const json& a = find(dis, {{"a", "strmatch"}, {"b", "judge_panel"}, {"stratum", "safe"}, {"subject", "A"}});
  EXPECT_EQ(a["n"], 3);
  EXPECT_EQ(a["both_1"], 1);
  EXPECT_EQ(a["a_only"], 1);  // A q4: the refusal string match misses
  EXPECT_EQ(a["b_only"], 0);
  EXPECT_EQ(a["both_0"], 1);
  // Cohen: P_o = 2/3, P_e = 2/3 * 1/3 + 1/3 * 2/3 = 4/9, kappa = (2/9) / (5/9) = 0.4.
  EXPECT_NEAR(a["kappa"].get<double>(), 0.4, 1e-12);
  const json& all = find(dis, {{"a", "strmatch"}, {"b", "judge_panel"}, {"stratum", "safe"}, {"subject", "all subjects"}});
  EXPECT_EQ(all["n"], 5);
  EXPECT_NEAR(all["agreement"].get<double>(), 0.8, 1e-12);
  // P_e = 0.6 * 0.4 + 0.4 * 0.6 = 0.48, kappa = 0.32 / 0.52.
  EXPECT_NEAR(all["kappa"].get<double>(), 0.32 / 0.52, 1e-12);
}

TEST(Rescore, EnvelopeTakesTheScorerAsItsAxis) {
  testing::TempDir t;
  auto store = filled_store(t / "s.sqlite");
  BootstrapOptions b;
  AnalysisContext ctx(*store, b);
  const auto* entry = find_analysis("envelope");
  ASSERT_NE(entry, nullptr);
  auto r = entry->run(ctx, json{{"scorers", {"strmatch", "judge_panel"}}, {"stratum", {{"label", "safe"}}},
                                {"resamples", 0}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_FALSE(r->contains("skipped")) << r->dump();
  // A 2/3 > B 1/2 under strmatch, A 1/3 < B 1/2 under the panel: one strict reversal.
  ASSERT_EQ((*r)["pairs"].size(), 1u);
  EXPECT_EQ((*r)["pairs"][0]["n_plus"], 1);
  EXPECT_EQ((*r)["pairs"][0]["n_minus"], 1);
  EXPECT_DOUBLE_EQ((*r)["pairs"][0]["rho_flip"].get<double>(), 0.5);
  EXPECT_EQ((*r)["rankings"]["reachable"], 2);
  EXPECT_EQ((*r)["axes"].begin().key(), "scorer");
  EXPECT_TRUE((*r)["scorers"]["disagreement"].is_array());
}

TEST(Rescore, EnvelopeStratumWithAnUnknownFieldIsAnOptionError) {
  testing::TempDir t;
  auto store = filled_store(t / "s.sqlite");
  BootstrapOptions b;
  AnalysisContext ctx(*store, b);
  const auto* entry = find_analysis("envelope");
  ASSERT_NE(entry, nullptr);
  auto r = entry->run(ctx, json{{"scorers", {"strmatch"}}, {"stratum", {{"labl", "safe"}}}, {"resamples", 0}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "envelope.stratum: field 'labl' is not an item field (item fields: label) (did you mean 'label'?)");
}

TEST(Rescore, PooledAxesAreAveragedAway) {
  testing::TempDir t;
  auto store = std::move(Store::open(t / "s.sqlite")).value();
  ASSERT_TRUE(store->put_item("q1", "q1", {{"meta", {{"label", "safe"}}}}).ok());
  // seed 1: comply, seed 2: refuse, seed 3: comply -> pooled 2/3 at temperature 0.7.
  int seed = 0;
  for (const std::string content : {"Sure.", "I'm sorry.", "Here."}) {
    Draw d = chat_draw("A", "q1", content);
    d.key.config = "seed=" + std::to_string(++seed) + ",temperature=0.7";
    ASSERT_TRUE(store->put_draw(d).ok());
  }
  auto r = rescore_completions(*store, {"strmatch"}, {{"label", "safe"}}, {"seed"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->cells.size(), 1u);
  EXPECT_EQ(r->cells[0].config, "temperature=0.7,scorer=strmatch");
  EXPECT_EQ(r->cells[0].n, 3);
  EXPECT_DOUBLE_EQ(r->cells[0].score, 2.0 / 3);
  auto unpooled = rescore_completions(*store, {"strmatch"}, {{"label", "safe"}});
  ASSERT_TRUE(unpooled.ok());
  EXPECT_EQ(unpooled->cells.size(), 3u);
}

TEST(Rescore, BadScorersAreErrorsNamingThem) {
  testing::TempDir t;
  auto store = filled_store(t / "s.sqlite");
  auto typo = rescore_completions(*store, {"strmatc"}, {});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("did you mean 'strmatch'"), std::string::npos) << typo.status().message();
  auto judge = rescore_completions(*store, {"judge:j9"}, {});
  ASSERT_FALSE(judge.ok());
  EXPECT_NE(judge.status().message().find("judges: j1, j2, j3"), std::string::npos) << judge.status().message();
  auto stratum = rescore_completions(*store, {"strmatch"}, {{"label", "nope"}});
  ASSERT_FALSE(stratum.ok());
  EXPECT_EQ(stratum.status().message(), "envelope.stratum: no item has label = 'nope' (values of label: safe, unsafe)");
  auto near = rescore_completions(*store, {"strmatch"}, {{"label", "saef"}});
  ASSERT_FALSE(near.ok());
  EXPECT_EQ(near.status().message(),
            "envelope.stratum: no item has label = 'saef' (values of label: safe, unsafe) (did you mean 'safe'?)");
  // A field no item has (a typo of `label`) is named as such, not "no scored draw".
  ASSERT_TRUE(store->put_item("q5", "q5", {{"meta", {{"label", "safe"}, {"type", "homonyms"}}}}).ok());
  auto field = rescore_completions(*store, {"strmatch"}, {{"labl", "safe"}});
  ASSERT_FALSE(field.ok());
  EXPECT_EQ(field.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(field.status().message(),
            "envelope.stratum: field 'labl' is not an item field (item fields: label, type) (did you mean 'label'?)");
  auto opt = EnvelopeOptions::from_json(json{{"scorers", {"judge_pannel"}}});
  ASSERT_FALSE(opt.ok());
  EXPECT_NE(opt.status().message().find("envelope.scorers"), std::string::npos) << opt.status().message();
  EXPECT_FALSE(EnvelopeOptions::from_json(json{{"stratum", {{"label", 1}}}}).ok());
  // A stratum without scorers would not be applied (the cells would cover every item): refused.
  auto alone = EnvelopeOptions::from_json(json{{"stratum", {{"label", "safe"}}}});
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(alone.status().message().find("envelope.stratum: applies only with `scorers`"), std::string::npos)
      << alone.status().message();
  // An empty field name would match no field and filter nothing: refused.
  auto empty = EnvelopeOptions::from_json(json{{"scorers", {"strmatch"}}, {"stratum", {{"", "safe"}}}});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("the field name is empty"), std::string::npos) << empty.status().message();
  EXPECT_TRUE(EnvelopeOptions::from_json(json{{"scorers", {"strmatch"}}, {"stratum", {{"label", "safe"}}}}).ok());
}

}  // namespace
}  // namespace nf
