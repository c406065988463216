// The Store contract, run against both implementations: SqliteStore (always) and PgStore
// (when NOISEFLOOR_PG_URL names a server; scripts/with-postgres). Then the shared-plan
// operations (claims, leases, commit-once) that only the PostgreSQL store offers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>
#include <unordered_set>

#include "common/pg.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace nf {
namespace {

using store_test::sample_draw;

// One store of the kind under test, fresh per test.
class StoreContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgresql") {
      NF_SKIP_WITHOUT_PG();
      pg_ = std::make_unique<testing::PgSchema>();
      location_ = pg_->url();
    } else {
      dir_ = std::make_unique<store_test::ScratchDir>();
      location_ = dir_->path("s.sqlite");
    }
    auto s = Store::open(location_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
  }
  std::unique_ptr<store_test::ScratchDir> dir_;
  std::unique_ptr<testing::PgSchema> pg_;
  std::string location_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreContract, KindMatchesTheUrl) {
  EXPECT_EQ(store_->kind(), GetParam() == "postgresql" ? "PostgreSQL store" : "SQLite store");
}

TEST_P(StoreContract, DrawRoundTripsByteForByte) {
  Draw d = sample_draw("m", "q1", "none", "default", 0);
  d.raw_response = std::string("raw \xff\xfe bytes\0 with NUL", 24);  // not UTF-8, with a NUL
  d.content = "caf\xc3\xa9";
  d.latency_ms = 12.5;
  d.prompt_tokens = 7;
  d.finish_reason = "stop";
  d.served_model = "served";
  d.attempts = 2;
  d.outcomes = {{"correct", 1.0, ""}, {"choice", 0.1 + 0.2, "B"}};
  d.extra = {{"permutation", {2, 0, 1}}};
  ASSERT_TRUE(store_->put_draw(d).ok());
  auto got = store_->get_draw(d.key);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->raw_response, d.raw_response);
  EXPECT_EQ(got->content, d.content);
  EXPECT_EQ(got->cluster, d.cluster);
  EXPECT_EQ(got->request, d.request);
  EXPECT_EQ(got->extra, d.extra);
  EXPECT_EQ(got->latency_ms, 12.5);
  EXPECT_EQ(got->prompt_tokens, 7);
  EXPECT_EQ(got->completion_tokens, -1);
  EXPECT_EQ(got->attempts, 2);
  ASSERT_EQ(got->outcomes.size(), 2u);
  EXPECT_EQ(got->outcomes[0].name, "correct");  // in the order written
  EXPECT_EQ(got->outcomes[1].value, 0.1 + 0.2);  // the exact double
  EXPECT_EQ(got->outcomes[1].label, "B");
  EXPECT_EQ(store_->get_draw({"m", "q9", "none", "default", 0}).status().code(), StatusCode::kNotFound);
}

TEST_P(StoreContract, ExtremeOutcomeValuesAndCacheEntriesRoundTripExactly) {
  Draw d = sample_draw("m", "q1", "none", "default", 0);
  const double inf = std::numeric_limits<double>::infinity();
  d.outcomes = {{"a", inf, ""},
                {"b", -inf, ""},
                {"c", std::numeric_limits<double>::denorm_min(), "x"},
                {"d", std::numeric_limits<double>::max(), ""},
                {"e", 1.0 / 3.0, "quote \" and , comma"}};
  ASSERT_TRUE(store_->put_draw_with_cache(d, {{"k1", {{"content", "a\"b"}}}, {"k2", {{"n", 0.1}}}}).ok());
  auto got = store_->get_draw(d.key);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->outcomes.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(got->outcomes[i].name, d.outcomes[i].name);
    EXPECT_EQ(got->outcomes[i].value, d.outcomes[i].value) << d.outcomes[i].name;
    EXPECT_EQ(got->outcomes[i].label, d.outcomes[i].label);
  }
  EXPECT_EQ((**store_->cache_get("k1"))["content"], "a\"b");
  EXPECT_EQ((**store_->cache_get("k2"))["n"], 0.1);
  // A second write of the key writes nothing, cache entries included.
  EXPECT_EQ(store_->put_draw_with_cache(d, {{"k3", {{"n", 1}}}}).code(), StatusCode::kAlreadyExists);
  EXPECT_FALSE(store_->cache_get("k3")->has_value());
}

TEST_P(StoreContract, DuplicateKeyIsAlreadyExistsAndApiErrorIsReplaced) {
  Draw d = sample_draw("m", "q1", "none", "default", 0);
  ASSERT_TRUE(store_->put_draw(d).ok());
  EXPECT_EQ(store_->put_draw(d).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(*store_->count_key(d.key), 1);
  Draw failed = sample_draw("m", "q2", "none", "default", 0);
  failed.status = DrawStatus::kApiError;
  failed.outcomes.clear();
  ASSERT_TRUE(store_->put_draw(failed).ok());
  auto keys = store_->finished_keys();
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->size(), 1u) << "api_error draws are retried on resume";
  ASSERT_TRUE(store_->put_draw(sample_draw("m", "q2", "none", "default", 0)).ok());
  EXPECT_EQ(*store_->count_key(failed.key), 1);
  EXPECT_EQ(store_->get_draw(failed.key)->status, DrawStatus::kOk);
  EXPECT_EQ(*store_->draw_count(), 2);
}

TEST_P(StoreContract, InvalidDrawsAreRejectedAndNothingIsWritten) {
  Draw neg = sample_draw("m", "q1", "none", "default", 0);
  neg.key.replicate = -1;
  EXPECT_EQ(store_->put_draw(neg).code(), StatusCode::kInvalidArgument);
  Draw nan = sample_draw("m", "q1", "none", "default", 0);
  nan.outcomes[0].value = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(store_->put_draw(nan).code(), StatusCode::kInvalidArgument);
  Draw twice = sample_draw("m", "q1", "none", "default", 0);
  twice.outcomes[1].name = twice.outcomes[0].name;
  EXPECT_EQ(store_->put_draw(twice).code(), StatusCode::kInvalidArgument);
  // put_draws is all or nothing.
  std::vector<Draw> batch = {sample_draw("m", "q1", "none", "default", 0), nan};
  EXPECT_EQ(store_->put_draws(batch).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*store_->draw_count(), 0);
}

TEST_P(StoreContract, OutcomeRowsAreOrderedByteWiseAndCachedDrawsCanBeLeftOut) {
  // "B" < "a" byte-wise (a locale collation would put "a" first).
  for (const char* item : {"a", "B", "c"})
    for (int r = 0; r < 2; ++r) ASSERT_TRUE(store_->put_draw(sample_draw("m", item, "none", "default", r)).ok());
  Draw cached = sample_draw("m", "d", "none", "default", 0);
  cached.cached = true;
  ASSERT_TRUE(store_->put_draw(cached).ok());
  auto rows = store_->outcome_rows();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 14u);
  EXPECT_EQ((*rows)[0].item, "B");
  EXPECT_EQ((*rows)[0].outcome, "o0");
  EXPECT_EQ((*rows)[0].cluster, "cl-B");
  EXPECT_EQ((*rows)[1].replicate, 1);
  EXPECT_EQ((*rows)[1].value, 1.0);  // (1 + 0) % 2
  EXPECT_EQ(store_->outcome_rows(false)->size(), 12u);
  auto frame = store_->outcome_frame();
  ASSERT_TRUE(frame.ok());
  EXPECT_EQ(frame->size(), 14u);
  EXPECT_EQ(frame->dict.items.size(), 4u);
  auto items_counts = store_->status_counts();
  ASSERT_TRUE(items_counts.ok());
  ASSERT_EQ(items_counts->size(), 1u);
  EXPECT_EQ((*items_counts)[0].count, 7);
}

// analyze reads the status counts and the answers (for the parse rate by reply language)
// in one pass (Store::status_counts_and_answers; issue 14): the same counts as
// status_counts(), in its order, and the same answers as for_each_answer(), in id order.
// Draws of different cells and statuses interleave, so the counts switch key from row to row.
TEST_P(StoreContract, StatusCountsAndAnswersInOnePassEqualTheTwoReads) {
  struct Spec {
    const char* subject;
    const char* item;
    const char* condition;
    const char* config;
    DrawStatus status;
    const char* content;
  };
  const std::vector<Spec> specs = {
      {"m", "a", "none", "default", DrawStatus::kOk, "A"},
      {"m", "a", "none", "default", DrawStatus::kParseError, "\xe7\xad\x94"},
      {"B", "a", "none", "default", DrawStatus::kOk, ""},  // "B" < "m" < "m2" byte-wise
      {"m", "b", "none", "default", DrawStatus::kApiError, ""},
      {"m", "b", "shuffle", "default", DrawStatus::kOk, "B"},
      {"m2", "a", "none", "t1", DrawStatus::kRefused, "no"},
      {"m", "c", "none", "default", DrawStatus::kOk, "C"},
      {"m", "c", "none", "default", DrawStatus::kApiError, ""},
      {"m", "d", "none", "default", DrawStatus::kOk, ""},
  };
  // The expected counts, kept independently of either store read.
  std::map<std::tuple<std::string, std::string, std::string, std::string>, int64_t> expected;
  std::vector<std::string> expected_answers;
  int replicate = 0;
  for (const Spec& sp : specs) {
    Draw d = sample_draw(sp.subject, sp.item, sp.condition, sp.config, replicate++);
    d.status = sp.status;
    d.content = sp.content;
    if (sp.status != DrawStatus::kOk) d.outcomes.clear();
    ASSERT_TRUE(store_->put_draw(d).ok()) << d.key.to_string();
    const std::string status = sp.status == DrawStatus::kOk           ? "ok"
                               : sp.status == DrawStatus::kParseError ? "parse_error"
                               : sp.status == DrawStatus::kApiError   ? "api_error"
                                                                      : "refused";
    ++expected[{sp.subject, sp.config, sp.condition, status}];
    if (sp.status != DrawStatus::kApiError)
      expected_answers.push_back(std::string(sp.subject) + "|" + sp.config + "|" + status + "|" + sp.content);
  }
  std::vector<std::string> answers;
  auto one_pass = store_->status_counts_and_answers(
      [&](std::string_view subject, std::string_view config, std::string_view status, std::string_view content) {
        answers.push_back(std::string(subject) + "|" + std::string(config) + "|" + std::string(status) + "|" +
                          std::string(content));
      });
  ASSERT_TRUE(one_pass.ok()) << one_pass.status().message();
  EXPECT_EQ(answers, expected_answers);  // id order = insertion order
  ASSERT_EQ(one_pass->size(), expected.size());
  size_t i = 0;
  for (const auto& [k, n] : expected) {  // the map's order: subject, config, condition, status
    const StatusCount& c = (*one_pass)[i++];
    EXPECT_EQ(std::tie(c.subject, c.config, c.condition, c.status), k);
    EXPECT_EQ(c.count, n) << c.subject << " " << c.config << " " << c.condition << " " << c.status;
  }
  auto two_reads = store_->status_counts();
  ASSERT_TRUE(two_reads.ok());
  ASSERT_EQ(two_reads->size(), one_pass->size());
  for (size_t j = 0; j < two_reads->size(); ++j) {
    const StatusCount &a = (*two_reads)[j], &b = (*one_pass)[j];
    EXPECT_EQ(std::tie(a.subject, a.config, a.condition, a.status, a.count),
              std::tie(b.subject, b.config, b.condition, b.status, b.count));
  }
  std::vector<std::string> read_answers;
  ASSERT_TRUE(store_
                  ->for_each_answer([&](const std::string& subject, const std::string& config,
                                        const std::string& status, const std::string& content) {
                    read_answers.push_back(subject + "|" + config + "|" + status + "|" + content);
                  })
                  .ok());
  EXPECT_EQ(read_answers, answers);
}

TEST_P(StoreContract, StudyItemsSubjectsCacheAndServedModels) {
  StudyRecord rec{"s", "hash1", 7, {{"name", "s"}}};
  auto first = store_->put_study(rec);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(*first, "");
  rec.hash = "hash2";
  EXPECT_EQ(*store_->put_study(rec), "hash1");
  auto study = store_->get_study();
  ASSERT_TRUE(study.ok());
  EXPECT_EQ(study->hash, "hash2");
  EXPECT_EQ(study->seed, 7);
  ASSERT_TRUE(store_->put_item("b", "", {{"q", 1}}).ok());
  ASSERT_TRUE(store_->put_item("B", "k", {{"q", 2}}).ok());
  ASSERT_TRUE(store_->put_item("b", "k2", {{"q", 3}}).ok());  // upsert
  auto items = store_->items();
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[0].item, "B");
  EXPECT_EQ((*items)[1].cluster, "k2");
  EXPECT_EQ((*items)[1].data["q"], 3);
  ASSERT_TRUE(store_->put_subject("m", {{"backend", "sim"}}).ok());
  EXPECT_EQ(store_->subject_specs()->at("m")["backend"], "sim");
  EXPECT_FALSE(store_->cache_get("k")->has_value());
  ASSERT_TRUE(store_->cache_put("k", {{"content", "x"}}).ok());
  ASSERT_TRUE(store_->cache_put("k", {{"content", "y"}}).ok());
  EXPECT_EQ((**store_->cache_get("k"))["content"], "y");
  Draw d = sample_draw("m", "b", "none", "default", 0);
  d.served_model = "m-2024";
  ASSERT_TRUE(store_->put_draw_with_cache(d, {{"k2", {{"content", "z"}}}}).ok());
  EXPECT_EQ((**store_->cache_get("k2"))["content"], "z");
  EXPECT_EQ(store_->served_models()->at("m"), std::vector<std::string>{"m-2024"});
}

TEST_P(StoreContract, ExportsEqualTheSqliteExportOfTheSameDraws) {
  store_test::ScratchDir ref_dir;
  auto ref = Store::open(ref_dir.path("ref.sqlite"));
  ASSERT_TRUE(ref.ok());
  std::vector<Draw> draws;
  for (const char* item : {"b", "A", "a,b"})
    for (const char* config : {"temperature=0.7", "temperature=0,top_p=0.9"})
      for (int r = 0; r < 2; ++r) draws.push_back(sample_draw("m", item, "none", config, r));
  draws[1].outcomes[0].value = 0.1 + 0.2;
  draws[2].status = DrawStatus::kApiError;
  draws[2].outcomes.clear();
  draws[3].raw_response = "\xff not utf-8";
  ASSERT_TRUE(store_->put_draws(draws).ok());
  ASSERT_TRUE((*ref)->put_draws(draws).ok());
  std::ostringstream csv, ref_csv, jsonl, ref_jsonl;
  ASSERT_TRUE(store_->export_csv(csv).ok());
  ASSERT_TRUE((*ref)->export_csv(ref_csv).ok());
  EXPECT_EQ(csv.str(), ref_csv.str());
  ASSERT_TRUE(store_->export_jsonl(jsonl).ok());
  ASSERT_TRUE((*ref)->export_jsonl(ref_jsonl).ok());
  auto without_time = [](const std::string& text) {
    std::vector<nlohmann::json> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      j.erase("created_at");
      out.push_back(std::move(j));
    }
    return out;
  };
  const auto got = without_time(jsonl.str()), want = without_time(ref_jsonl.str());
  ASSERT_EQ(got.size(), 12u);
  EXPECT_EQ(got, want);
}

TEST_P(StoreContract, ReplaceDrawOverwritesAnyStatus) {
  Draw d = sample_draw("m", "q1", "none", "default", 0);
  ASSERT_TRUE(store_->put_draw(d).ok());
  d.content = "second";
  ASSERT_TRUE(store_->replace_draw(d).ok());
  EXPECT_EQ(store_->get_draw(d.key)->content, "second");
  EXPECT_EQ(*store_->draw_count(), 1);
}

// ---- judgments and human labels (schema v2 on SQLite, v2 on PostgreSQL) --------------

JudgmentRow vote(const std::string& subject, const std::string& item, const std::string& judge,
                 std::optional<int> label) {
  JudgmentRow r;
  r.subject = subject;
  r.subject_provider = "openai";
  r.item = item;
  r.cluster = "p-" + item;
  r.judge = judge;
  r.judge_provider = judge;
  r.label = label;
  r.status = label ? "ok" : "api_error";
  return r;
}

// `run --refresh` keeps its record in meta and finds the draws it marked (runner.h
// RunSummary::Refresh; tester s10 finding 13): the same answers from both stores.
TEST_P(StoreContract, MetaValuesAndRefreshedKeys) {
  auto unset = store_->meta_value("refresh");
  ASSERT_TRUE(unset.ok()) << unset.status().message();
  EXPECT_FALSE(unset->has_value());
  ASSERT_TRUE(store_->set_meta_value("refresh", "{\"id\": \"r1\"}").ok());
  ASSERT_TRUE(store_->set_meta_value("refresh", "{\"id\": \"r2\"}").ok());  // an upsert
  auto set = store_->meta_value("refresh");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->value_or(""), "{\"id\": \"r2\"}");
  for (const char* own : {"schema_version", "created_by", "tool_version", ""})
    EXPECT_EQ(store_->set_meta_value(own, "x").code(), StatusCode::kInvalidArgument) << own;
  auto version = store_->meta_value("schema_version");
  ASSERT_TRUE(version.ok());
  EXPECT_NE(version->value_or("x"), "x");

  Draw a = sample_draw("m", "q1", "none", "default", 0);
  a.extra = {{"refresh", "r2"}};
  Draw b = sample_draw("m", "q2", "none", "default", 0);
  b.extra = {{"refresh", "r1"}};
  Draw c = sample_draw("m", "q3", "none", "default", 0);  // no mark
  Draw e = sample_draw("m", "q4", "none", "default", 0);  // marked, but failed at the API
  e.extra = {{"refresh", "r2"}};
  e.status = DrawStatus::kApiError;
  e.error = "down";
  e.outcomes.clear();
  for (const Draw* d : {&a, &b, &c, &e}) ASSERT_TRUE(store_->put_draw(*d).ok()) << d->key.to_string();
  auto keys = store_->refreshed_keys("r2");
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_EQ(*keys, (std::unordered_set<std::string>{a.key.to_string()}));
  auto none = store_->refreshed_keys("r3");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(StoreContract, JudgmentsRoundTripInByteOrder) {
  JudgmentRow b = vote("gpt", "2", "xai", 0);
  b.settings = {{"temperature", 0}, {"model", "grok-4"}};
  b.raw_response = std::string("{\"verdict\": 0} \xff\x00 raw", 21);  // the judge's bytes, not UTF-8, a NUL
  b.created_at = 1700000000;
  JudgmentRow upper = vote("gpt", "B", "openai", 1);  // "B" < "a" byte-wise
  upper.cluster = "";                                  // the item is its own cluster
  ASSERT_TRUE(store_->put_judgments({b, vote("gpt", "1", "openai", 1), vote("gpt", "1", "xai", std::nullopt),
                                     vote("gpt", "a", "openai", 0), upper})
                  .ok());
  auto rows = store_->judgments();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 5u);
  std::vector<std::string> order;
  for (const auto& r : *rows) order.push_back(r.item + "/" + r.judge);
  EXPECT_EQ(order, (std::vector<std::string>{"1/openai", "1/xai", "2/xai", "B/openai", "a/openai"}));
  EXPECT_EQ((*rows)[0].label, 1);
  EXPECT_EQ((*rows)[0].subject_provider, "openai");
  EXPECT_FALSE((*rows)[1].label.has_value());
  EXPECT_EQ((*rows)[1].status, "api_error");
  EXPECT_EQ((*rows)[2].settings["model"], "grok-4");
  EXPECT_EQ((*rows)[2].raw_response, b.raw_response);
  EXPECT_EQ((*rows)[2].cluster, "p-2");
  EXPECT_EQ((*rows)[2].created_at, 1700000000);
  EXPECT_FALSE((*rows)[2].draw_id.has_value());
  EXPECT_GT((*rows)[0].created_at, 1700000000);  // set by the store
  EXPECT_EQ((*rows)[3].cluster, "B");
  EXPECT_EQ(*store_->judgment_count(), 5);
}

TEST_P(StoreContract, DuplicateJudgmentIsAlreadyExistsAndTheBatchWritesNothing) {
  ASSERT_TRUE(store_->put_judgments({vote("gpt", "1", "openai", 1)}).ok());
  Status s = store_->put_judgments({vote("gpt", "9", "openai", 1), vote("gpt", "1", "openai", 0)});
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists) << s.message();
  EXPECT_NE(s.message().find("judgment (subject gpt, item 1, judge openai, draw none) is already stored with status ok"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(*store_->judgment_count(), 1);  // the batch was rolled back
  // An api_error judgment is replaced when the judge is asked again (resumable judging).
  ASSERT_TRUE(store_->put_judgments({vote("gpt", "2", "xai", std::nullopt)}).ok());
  ASSERT_TRUE(store_->put_judgments({vote("gpt", "2", "xai", 1)}).ok());
  auto rows = store_->judgments();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].status, "ok");
  EXPECT_EQ((*rows)[1].label, 1);
}

TEST_P(StoreContract, InvalidJudgmentsAndHumanLabelsAreRejectedWithTheSameWords) {
  JudgmentRow r = vote("gpt", "1", "xai", 1);
  r.label.reset();
  Status st = store_->put_judgments({r});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("an ok judgment needs a label"), std::string::npos) << st.message();
  st = store_->put_judgments({vote("gpt", "1", "xai", 2)});
  EXPECT_NE(st.message().find("label must be 0 or 1, got 2"), std::string::npos) << st.message();
  r = vote("gpt", "1", "xai", 1);
  r.status = "refused";
  EXPECT_EQ(store_->put_judgments({r}).code(), StatusCode::kInvalidArgument);
  r = vote("gpt", "1", "", 1);
  EXPECT_EQ(store_->put_judgments({vote("gpt", "0", "xai", 1), r}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*store_->judgment_count(), 0);
  st = store_->put_human_labels({{"R1", "gpt", "3", 5}});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("(rater R1, subject gpt, item 3): label must be 0 or 1, got 5"), std::string::npos)
      << st.message();
  EXPECT_EQ(store_->put_human_labels({{"", "gpt", "3", 1}}).code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreContract, HumanLabelsRoundTripAndADuplicateWritesNothing) {
  ASSERT_TRUE(store_->put_human_labels({{"O", "gpt", "3", 1}, {"G", "gpt", "3", 0}, {"O", "gpt", "B", 0}}).ok());
  Status s = store_->put_human_labels({{"R1", "gpt", "3", 1}, {"O", "gpt", "3", 0}});
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists) << s.message();
  EXPECT_NE(s.message().find("human label (rater O, subject gpt, item 3) is already stored"), std::string::npos)
      << s.message();
  auto rows = store_->human_labels();
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 3u);  // the failed batch wrote nothing
  EXPECT_EQ((*rows)[0].rater, "G");
  EXPECT_EQ((*rows)[0].label, 0);
  EXPECT_EQ((*rows)[1].item, "3");  // ordered by rater, subject, item byte-wise
  EXPECT_EQ((*rows)[2].item, "B");
  EXPECT_EQ((*rows)[2].label, 0);
}

TEST_P(StoreContract, JudgingReadsJudgmentsOfDrawsAndRefreshReplacesThem) {
  Draw a = sample_draw("gpt", "1", "none", "c", 0), b = sample_draw("gpt", "1", "shuffle", "c", 1);
  a.content = "answer \xff a";  // judged as stored, byte for byte
  a.request = {{"messages", {{{"role", "user"}, {"content", "q"}}}}};
  Draw failed = sample_draw("gpt", "2", "none", "c", 0);
  failed.status = DrawStatus::kApiError;
  failed.outcomes.clear();
  ASSERT_TRUE(store_->put_draws({a, failed, b}).ok());
  auto judgeable = store_->ok_draws_for_judging();
  ASSERT_TRUE(judgeable.ok()) << judgeable.status().message();
  ASSERT_EQ(judgeable->size(), 2u);  // ok draws only, in id order
  EXPECT_EQ((*judgeable)[0].key.to_string(), a.key.to_string());
  EXPECT_EQ((*judgeable)[0].content, a.content);
  EXPECT_EQ((*judgeable)[0].request, a.request);
  EXPECT_EQ((*judgeable)[0].cluster, a.cluster);
  EXPECT_LT((*judgeable)[0].id, (*judgeable)[1].id);
  const int64_t ida = (*judgeable)[0].id, idb = (*judgeable)[1].id;

  JudgmentRow ja = vote("gpt", "1|r0", "xai", 1), jb = vote("gpt", "1|r1", "xai", std::nullopt);
  ja.draw_id = ida;
  jb.draw_id = idb;
  JudgmentRow imported = vote("gpt", "1", "google", 1);  // no draw: an import
  ASSERT_TRUE(store_->put_judgments({ja, jb, imported}).ok());
  EXPECT_EQ(store_->put_judgments({ja}).code(), StatusCode::kAlreadyExists);  // same judge, same draw
  auto status = store_->judgment_status_by_draw();
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ(*status, (std::map<std::pair<int64_t, std::string>, std::string>{{{ida, "xai"}, "ok"},
                                                                             {{idb, "xai"}, "api_error"}}));
  auto conditions = store_->judged_draw_conditions();
  ASSERT_TRUE(conditions.ok()) << conditions.status().message();
  EXPECT_EQ(*conditions, (std::map<int64_t, std::string>{{ida, "none"}, {idb, "shuffle"}}));

  // `judge --refresh`: the same judge's judgment of the same draw is replaced, whatever its
  // status; an import is replaced by (subject, item, judge).
  JudgmentRow again = ja;
  again.label = 0;
  JudgmentRow imported_again = imported;
  imported_again.label = 0;
  ASSERT_TRUE(store_->replace_judgments({again, imported_again}).ok());
  auto rows = store_->judgments();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  for (const auto& r : *rows) {
    if (r.judge == "google" || r.draw_id == ida) {
      EXPECT_EQ(r.label, 0) << r.item;
    }
  }
  // `run --refresh` replaces draw a: its judgment goes with it, the others stay.
  ASSERT_TRUE(store_->replace_draw(sample_draw("gpt", "1", "none", "c", 0)).ok());
  rows = store_->judgments();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  for (const auto& r : *rows) EXPECT_NE(r.item, "1|r0");
  EXPECT_EQ(store_->judged_draw_conditions()->size(), 1u);
}

TEST_P(StoreContract, SharedPlanIsPostgresqlOnly) {
  const std::vector<DrawKey> keys = {{"m", "q1", "none", "default", 0}};
  Status st = store_->plan_draw_keys(keys);
  if (GetParam() == "sqlite") {
    EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
    EXPECT_NE(st.message().find("SQLite store"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("plan_draw_keys"), std::string::npos) << st.message();
    EXPECT_EQ(store_->claim_draws("w", 1, 10).status().code(), StatusCode::kUnimplemented);
  } else {
    EXPECT_TRUE(st.ok()) << st.message();
  }
}

INSTANTIATE_TEST_SUITE_P(BothStores, StoreContract, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// ---- the shared plan (PostgreSQL) --------------------------------------------------------

std::vector<DrawKey> plan_keys(int n) {
  std::vector<DrawKey> keys;
  for (int i = 0; i < n; ++i) keys.push_back({"m", "q" + std::to_string(i), "none", "default", 0});
  return keys;
}

Draw draw_for(const DrawKey& k) { return sample_draw(k.subject, k.item, k.condition, k.config, k.replicate); }

TEST(PgSharedPlan, PlanIsIdempotentAndConcurrentClaimsAreDisjoint) {
  NF_SKIP_WITHOUT_PG();
  testing::PgSchema schema;
  auto a = Store::open(schema.url());
  auto b = Store::open(schema.url());
  ASSERT_TRUE(a.ok() && b.ok());
  const auto keys = plan_keys(200);
  ASSERT_TRUE((*a)->plan_draw_keys(keys).ok());
  ASSERT_TRUE((*b)->plan_draw_keys(keys).ok());  // a second worker writes nothing new
  EXPECT_EQ((*a)->plan_counts()->planned, 200);
  // Two workers claim at once, repeatedly, from separate connections.
  std::vector<DrawKey> got_a, got_b;
  auto claim_all = [](Store& s, const std::string& who, std::vector<DrawKey>* out) {
    for (;;) {
      auto c = s.claim_draws(who, 7, 30);
      ASSERT_TRUE(c.ok()) << c.status().message();
      if (c->empty()) return;
      out->insert(out->end(), c->begin(), c->end());
    }
  };
  std::thread ta([&] { claim_all(**a, "A", &got_a); });
  std::thread tb([&] { claim_all(**b, "B", &got_b); });
  ta.join();
  tb.join();
  std::set<std::string> all;
  for (const auto& k : got_a) all.insert(k.to_string());
  for (const auto& k : got_b) all.insert(k.to_string());
  EXPECT_EQ(got_a.size() + got_b.size(), 200u) << "a planned draw was claimed twice or not at all";
  EXPECT_EQ(all.size(), 200u);
  EXPECT_EQ((*a)->plan_counts()->leased, 200);
}

TEST(PgSharedPlan, ExpiredLeasesReturnToThePoolAndADrawIsStoredOnce) {
  NF_SKIP_WITHOUT_PG();
  testing::PgSchema schema;
  auto s = Store::open(schema.url());
  ASSERT_TRUE(s.ok());
  Store& st = **s;
  ASSERT_TRUE(st.plan_draw_keys(plan_keys(3)).ok());
  auto dead = st.claim_draws("dead", 3, 0.3);
  ASSERT_EQ(dead->size(), 3u);
  EXPECT_TRUE(st.claim_draws("live", 3, 30)->empty()) << "leased draws must not be handed out";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto live = st.claim_draws("live", 3, 30);
  ASSERT_EQ(live->size(), 3u) << "expired leases must return to the pool";
  // The live worker commits two; the dead one wakes up and commits the same key: stored once.
  ASSERT_TRUE(st.put_claimed_draw(draw_for((*live)[0]), {}).ok());
  ASSERT_TRUE(st.put_claimed_draw(draw_for((*live)[1]), {}).ok());
  EXPECT_EQ(st.put_claimed_draw(draw_for((*dead)[0]), {}).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(*st.count_key((*live)[0]), 1);
  auto counts = st.plan_counts();
  EXPECT_EQ(counts->done, 2);
  ASSERT_TRUE(st.put_claimed_draw(draw_for((*live)[2]), {}).ok());
  EXPECT_EQ(st.plan_counts()->done, 3);
  EXPECT_TRUE(st.claim_draws("live", 3, 30)->empty());
  EXPECT_EQ(*st.draw_count(), 3);
  EXPECT_EQ(schema.query("SELECT max(claims) FROM planned_draws"), "2");
}

TEST(PgSharedPlan, RenewedLeasesDoNotExpireAndApiErrorsReopenOnReplan) {
  NF_SKIP_WITHOUT_PG();
  testing::PgSchema schema;
  auto s = Store::open(schema.url());
  ASSERT_TRUE(s.ok());
  Store& st = **s;
  const auto keys = plan_keys(2);
  ASSERT_TRUE(st.plan_draw_keys(keys).ok());
  ASSERT_EQ(st.claim_draws("w", 2, 0.4)->size(), 2u);
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ASSERT_TRUE(st.renew_leases("w", 0.4).ok());
  }
  EXPECT_TRUE(st.claim_draws("other", 2, 30)->empty()) << "a renewed lease expired";
  Draw failed = draw_for(keys[0]);
  failed.status = DrawStatus::kApiError;
  failed.outcomes.clear();
  ASSERT_TRUE(st.put_claimed_draw(failed, {}).ok());
  ASSERT_TRUE(st.put_claimed_draw(draw_for(keys[1]), {}).ok());
  EXPECT_EQ(st.plan_counts()->done, 2);
  // A restarted worker re-plans: the api_error draw is open again, the ok one is not.
  ASSERT_TRUE(st.plan_draw_keys(keys).ok());
  EXPECT_EQ(st.plan_counts()->done, 1);
  auto again = st.claim_draws("w2", 5, 30);
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].item, keys[0].item);
  ASSERT_TRUE(st.put_claimed_draw(draw_for(keys[0]), {}).ok());  // replaces the api_error draw
  EXPECT_EQ(st.get_draw(keys[0])->status, DrawStatus::kOk);
  EXPECT_EQ(*st.draw_count(), 2);
}

// The schema itself holds the judgment rules (not only the C++ checks): a second writer in
// another language gets the same guarantees as on SQLite.
TEST(PgJudgmentSchema, UniqueKeyCoalescesDrawIdAndAnOkVoteNeedsALabel) {
  NF_SKIP_WITHOUT_PG();
  testing::PgSchema schema;
  auto s = Store::open(schema.url());
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE((*s)->put_draws({sample_draw("m", "q1", "none", "c", 0), sample_draw("m", "q1", "none", "c", 1)}).ok());
  auto insert = [&](const std::string& draw_id, const std::string& status, const std::string& label) {
    std::string error;
    schema.query("INSERT INTO judgments(subject, subject_provider, item, cluster, judge, judge_provider, label, status, "
                 "draw_id, raw_response, settings, created_at) VALUES ('m', 'p', 'q1', 'q1', 'j', 'p', " +
                     label + ", '" + status + "', " + draw_id + ", '', '{}', 1) RETURNING id",
                 &error);
    return error;
  };
  EXPECT_EQ(insert("NULL", "ok", "1"), "");
  EXPECT_NE(insert("NULL", "ok", "0").find("judgments_key"), std::string::npos) << "(subject, item, judge) of an import";
  EXPECT_EQ(insert("1", "ok", "1"), "");
  EXPECT_EQ(insert("2", "api_error", "NULL"), "");  // another draw of the same (subject, item)
  EXPECT_NE(insert("1", "parse_error", "NULL").find("judgments_key"), std::string::npos);
  EXPECT_NE(insert("NULL", "ok", "NULL").find("check constraint"), std::string::npos) << "ok without a label";
  EXPECT_NE(insert("NULL", "ok", "2").find("check constraint"), std::string::npos);
  EXPECT_NE(insert("NULL", "refused", "1").find("check constraint"), std::string::npos);
  EXPECT_EQ(*(*s)->judgment_count(), 3);
  std::string error;
  schema.query("INSERT INTO human_labels VALUES ('O', 'm', 'q1', 1), ('O', 'm', 'q1', 0) RETURNING 1", &error);
  EXPECT_NE(error.find("human_labels_pkey"), std::string::npos) << error;
}

// A store written by the first PostgreSQL build (schema v1: no judgments) is migrated in
// place on open, draws and plan intact; a store from a newer build is refused.
TEST(PgSchemaVersion, V1StoreMigratesToV2AndANewerOneIsRefused) {
  NF_SKIP_WITHOUT_PG();
  testing::PgSchema schema;
  {
    auto s = Store::open(schema.url());
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->put_draw(sample_draw("m", "q1", "none", "c", 0)).ok());
    ASSERT_TRUE((*s)->plan_draw_keys({{"m", "q1", "none", "c", 0}, {"m", "q2", "none", "c", 0}}).ok());
  }
  // Back to v1 as the first build left it: no v2 tables, version 1, no tool_version.
  std::string error;
  schema.query("DROP TABLE judgments; DROP TABLE human_labels; UPDATE meta SET value = '1' WHERE key = "
               "'schema_version'; DELETE FROM meta WHERE key = 'tool_version'; SELECT 1",
               &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(schema.query("SELECT to_regclass('judgments') IS NULL"), "t");
  {
    auto s = Store::open(schema.url());
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(schema.query("SELECT value FROM meta WHERE key = 'schema_version'"), "2");
    EXPECT_EQ(schema.query("SELECT value FROM meta WHERE key = 'tool_version'"), NOISEFLOOR_VERSION);
    EXPECT_EQ(*(*s)->draw_count(), 1);
    EXPECT_EQ((*s)->plan_counts()->planned, 2);
    EXPECT_EQ((*s)->plan_counts()->done, 1);
    ASSERT_TRUE((*s)->put_judgments({vote("m", "q1", "j", 1)}).ok());
    ASSERT_TRUE((*s)->put_human_labels({{"O", "m", "q1", 1}}).ok());
  }
  // The migrated store has the tables a new store has, column for column.
  testing::PgSchema fresh;
  ASSERT_TRUE(Store::open(fresh.url()).ok());
  const std::string columns =
      "SELECT string_agg(table_name || '.' || column_name || ':' || data_type || ':' || is_nullable, ',' ORDER BY "
      "table_name, ordinal_position) FROM information_schema.columns WHERE table_schema = current_schema()";
  const std::string indexes =
      "SELECT string_agg(indexname || ':' || indexdef, ',' ORDER BY indexname) FROM pg_indexes WHERE schemaname = "
      "current_schema()";
  EXPECT_EQ(schema.query(columns), fresh.query(columns));
  auto strip = [](std::string defs, const std::string& name) {
    for (size_t at = defs.find(name + "."); at != std::string::npos; at = defs.find(name + ".")) defs.erase(at, name.size() + 1);
    return defs;
  };
  EXPECT_EQ(strip(schema.query(indexes), schema.name()), strip(fresh.query(indexes), fresh.name()));
  // A newer build's store is refused, not written.
  schema.query("UPDATE meta SET value = '99' WHERE key = 'schema_version' RETURNING 1");
  auto newer = Store::open(schema.url());
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(newer.status().message().find("schema version 99 is newer than this build's (2)"), std::string::npos)
      << newer.status().message();
}

TEST(PgStoreOpen, UnreachableServerIsUnavailableAndThePasswordIsMasked) {
  auto s = Store::open("postgresql://nf:secret@127.0.0.1:1/none?connect_timeout=2");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.status().message().find("secret"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("cannot connect to PostgreSQL"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace nf
