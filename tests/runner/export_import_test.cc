// Export -> import round trip (store export_csv / export_jsonl -> read_long_draws ->
// import_long_draws): every outcome, value and label survives. And the mcq / vignette
// condition names the spec layer mirrors (it cannot link nf_perturb) equal the perturb
// layer's lists, so parse_study accepts exactly what the task can run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "common/test_data.h"
#include "data/draws_import.h"
#include "perturb/descriptors.h"
#include "perturb/mcq_conditions.h"
#include "runner/import.h"
#include "spec/study.h"
#include "store/store.h"

namespace nf {
namespace {

Draw make_draw(const std::string& item, int rep, double correct, const std::string& letter, double choice) {
  Draw d;
  d.key = {"m1", item, "shuffle", "temperature=0.7", rep};
  d.cluster = "c-" + item;
  d.content = "<answer>" + letter + "</answer>";
  d.outcomes = {{"correct", correct, ""}, {"choice", choice, letter}};
  return d;
}

void round_trip(const std::string& ext) {
  testing::TempDir dir;
  auto src = Store::open((std::filesystem::path(dir.path()) / "src.sqlite").string());
  ASSERT_TRUE(src.ok()) << src.status().to_string();
  ASSERT_TRUE((*src)->put_draw(make_draw("q1", 0, 1, "B", 1)).ok());
  ASSERT_TRUE((*src)->put_draw(make_draw("q1", 1, 0, "C", 2)).ok());
  ASSERT_TRUE((*src)->put_draw(make_draw("q2", 0, 0, "A", 0)).ok());
  Draw failed = make_draw("q2", 1, 0, "A", 0);  // an api_error draw carries no outcomes
  failed.status = DrawStatus::kApiError;
  failed.outcomes.clear();
  ASSERT_TRUE((*src)->put_draw(failed).ok());
  const std::string file = (std::filesystem::path(dir.path()) / ("dump" + ext)).string();
  ASSERT_TRUE((ext == ".csv" ? (*src)->export_csv(file) : (*src)->export_jsonl(file)).ok());
  auto rows = read_long_draws(file);
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  auto dst = Store::open((std::filesystem::path(dir.path()) / "dst.sqlite").string());
  ASSERT_TRUE(dst.ok());
  auto summary = import_long_draws(*rows, **dst, "round-trip");
  ASSERT_TRUE(summary.ok()) << summary.status().to_string();
  EXPECT_EQ(summary->draws, 4);  // the api_error draw too, with its status (tester s11 finding 12)
  EXPECT_EQ(summary->by_status[static_cast<size_t>(DrawStatus::kOk)], 3);
  EXPECT_EQ(summary->by_status[static_cast<size_t>(DrawStatus::kApiError)], 1);
  auto back = (*dst)->get_draw(failed.key);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->status, DrawStatus::kApiError);
  EXPECT_TRUE(back->outcomes.empty());
  auto a = (*src)->outcome_rows();
  auto b = (*dst)->outcome_rows();
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), 6u);
  ASSERT_EQ(b->size(), a->size());
  auto key = [](const OutcomeRow& r) {
    return r.subject + "|" + r.item + "|" + r.condition + "|" + r.config + "|" + std::to_string(r.replicate) + "/" +
           r.outcome;
  };
  auto sa = *a, sb = *b;
  std::sort(sa.begin(), sa.end(), [&](const auto& x, const auto& y) { return key(x) < key(y); });
  std::sort(sb.begin(), sb.end(), [&](const auto& x, const auto& y) { return key(x) < key(y); });
  for (size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(key(sa[i]), key(sb[i]));
    EXPECT_EQ(sa[i].value, sb[i].value) << key(sa[i]);
    EXPECT_EQ(sa[i].label, sb[i].label) << key(sa[i]);
    EXPECT_EQ(sa[i].cluster, sb[i].cluster) << key(sa[i]);
  }
}

TEST(ExportImport, CsvRoundTripKeepsValuesAndLabels) { round_trip(".csv"); }

TEST(ExportImport, JsonlRoundTripKeepsValuesAndLabels) { round_trip(".jsonl"); }

TEST(ExportImport, NonOkRowWithAnOutcomeIsRefusedNamingLineAndColumn) {
  testing::TempDir dir;
  const auto p = std::filesystem::path(dir.path()) / "bad.csv";
  testing::write_text(p.string(), "subject,item,cluster,condition,config,replicate,status,outcome,value,label\n"
                         "m1,q1,,none,default,0,ok,correct,1,\n"
                         "m1,q1,,none,default,1,api_error,correct,0,\n");
  auto r = read_long_draws(p.string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.csv:3: outcome: 'correct' on a row of status api_error: a draw that is "
                                     "not ok has no outcomes"),
            std::string::npos)
      << r.status().message();
}

TEST(ConditionNames, SpecMirrorsEqualThePerturbLists) {
  // parse_study validates conditions against its own copies; a study listing every
  // condition the perturb layer knows must parse, in the same order.
  testing::TempDir dir;
  const auto data = std::filesystem::path(dir.path()) / "items.jsonl";
  testing::write_text(data.string(), "{\"question\":\"q\",\"options\":{\"A\":\"x\",\"B\":\"y\"},\"answer_idx\":\"A\"}\n");
  std::string conds;
  for (const auto& c : known_mcq_conditions()) conds += (conds.empty() ? "" : ", ") + c;
  const std::string yaml = "name: t\ndataset: {path: " + data.string() +
                           "}\nsubjects: [{name: s, model: m}]\nconditions: [" + conds + "]\n";
  auto st = parse_study(yaml, (std::filesystem::path(dir.path()) / "s.yaml").string());
  ASSERT_TRUE(st.ok()) << st.status().to_string();
  EXPECT_EQ(st->conditions, known_mcq_conditions());
  // The vignette task's default conditions (no `conditions` key) are the perturb list.
  const auto vig = std::filesystem::path(dir.path()) / "v.json";
  testing::write_text(vig.string(), "{}");
  auto vs = parse_study("name: v\ntask: vignette_agent\ndataset: {format: vignettes, path: " + vig.string() +
                            "}\nsubjects: [{name: s, model: m}]\n",
                        (std::filesystem::path(dir.path()) / "v.yaml").string());
  ASSERT_TRUE(vs.ok()) << vs.status().to_string();
  EXPECT_EQ(vs->conditions, known_vignette_conditions());
}

}  // namespace
}  // namespace nf
