// The event-loop path of run_study (issue 14 item 5: one thread drives every call over
// libcurl multi) against the thread path (one blocking worker per call in flight): the
// same draws and the same store contents, up to latencies and timestamps, on a serve-sim
// MCQ study -- with and without injected faults (429, 500, reset, truncate, slow), whose
// fault stream depends only on the request body and how often it was seen, so both paths
// meet the same faults on the same attempts.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/test_data.h"
#include "runner/runner.h"
#include "sim/sim_server.h"
#include "spec/study.h"
#include "store/store.h"
#include "util/hash.h"

namespace nf {
namespace {

std::string study_yaml(const std::string& url, int replicates, const std::string& subject_extra) {
  return "name: loop\nseed: 7\ndataset:\n  format: medqa\n  path: " + std::string(NF_SOURCE_DIR) +
         "/data/sample-mcq.jsonl\nsubjects:\n  - name: http\n    backend: openai\n    base_url: " + url +
         "\n    model: sim-mcq-1\n    concurrency: 8\n" + subject_extra +
         "conditions: [none, remove_context]\nconfigs:\n  temperature: [0, 0.7]\nreplicates: " + std::to_string(replicates) +
         "\n";
}

// Drops what differs between two runs of the same draw: latencies, store timestamps and
// ids, the server's Date header, and the reply's `created` time.
void strip_volatile(nlohmann::json& j) {
  if (j.is_object()) {
    for (const char* k : {"latency_ms", "created_at", "created", "id", "date", "draw_id"}) j.erase(k);
    for (auto& [k, v] : j.items()) strip_volatile(v);
  } else if (j.is_array()) {
    for (auto& v : j) strip_volatile(v);
  }
}

// Every stored draw as JSON, keyed by its draw key, volatile fields dropped; the raw reply
// is compared parsed (its `created` differs), or as text when it is not JSON.
std::map<std::string, nlohmann::json> stored_draws(Store& store) {
  std::ostringstream out;
  EXPECT_TRUE(store.export_jsonl(out).ok());
  std::map<std::string, nlohmann::json> draws;
  std::istringstream in(out.str());
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json d = nlohmann::json::parse(line);
    for (const char* raw : {"raw_response", "response"}) {
      if (d.contains(raw) && d[raw].is_string()) {
        auto parsed = nlohmann::json::parse(d[raw].get<std::string>(), nullptr, false);
        if (!parsed.is_discarded()) d[raw] = parsed;
      }
    }
    strip_volatile(d);
    const std::string key = d.value("subject", "") + "|" + d.value("item", "") + "|" + d.value("condition", "") + "|" +
                            d.value("config", "") + "|" + std::to_string(d.value("replicate", -1));
    EXPECT_EQ(draws.count(key), 0u) << key;
    draws[key] = d;
  }
  return draws;
}

struct PathRun {
  RunSummary sum;
  std::map<std::string, nlohmann::json> draws;
};

PathRun run_path(const std::string& yaml, const std::string& dir, const std::string& name, bool event_loop) {
  PathRun out;
  auto study = parse_study(yaml, dir + "/s.yaml");
  EXPECT_TRUE(study.ok()) << study.status().message();
  if (!study.ok()) return out;
  auto store = Store::open(dir + "/" + name + ".sqlite");
  EXPECT_TRUE(store.ok()) << store.status().message();
  if (!store.ok()) return out;
  RunOptions ro;
  ro.progress = false;
  ro.use_cache = false;
  ro.event_loop = event_loop;
  auto sum = run_study(*study, **store, ro);
  EXPECT_TRUE(sum.ok()) << sum.status().message();
  if (!sum.ok()) return out;
  out.sum = *sum;
  out.draws = stored_draws(**store);
  return out;
}

void expect_same(const PathRun& loop, const PathRun& threads) {
  EXPECT_TRUE(loop.sum.event_loop);
  EXPECT_FALSE(threads.sum.event_loop);
  EXPECT_EQ(loop.sum.planned, threads.sum.planned);
  EXPECT_EQ(loop.sum.executed, threads.sum.executed);
  EXPECT_EQ(loop.sum.ok, threads.sum.ok);
  EXPECT_EQ(loop.sum.parse_error, threads.sum.parse_error);
  EXPECT_EQ(loop.sum.api_error, threads.sum.api_error);
  EXPECT_EQ(loop.sum.refused, threads.sum.refused);
  ASSERT_EQ(loop.draws.size(), threads.draws.size());
  for (const auto& [key, d] : threads.draws) {
    auto it = loop.draws.find(key);
    ASSERT_NE(it, loop.draws.end()) << key;
    EXPECT_EQ(it->second, d) << key << "\nevent loop: " << it->second.dump() << "\nthreads:    " << d.dump();
  }
}

TEST(EventLoop, SameDrawsAndStoreContentsAsTheThreadPath) {
  auto server = SimServer::start(SimParams{.seed = 2, .spread = 0.4, .parse_error_rate = 0.1});
  ASSERT_TRUE(server.ok()) << server.status().message();
  testing::TempDir d;
  const std::string yaml = study_yaml((*server)->base_url(), 3, "    logprobs: 3\n");
  const PathRun threads = run_path(yaml, d.path(), "threads", false);
  const PathRun loop = run_path(yaml, d.path(), "loop", true);
  const int64_t planned = 24 * 2 * 2 * 3;
  ASSERT_EQ(threads.sum.planned, planned);
  EXPECT_EQ(threads.sum.executed, planned);
  EXPECT_EQ(threads.sum.api_error, 0);
  EXPECT_GT(threads.sum.ok, 0);
  expect_same(loop, threads);
  // The draws carry what the comparison is about: outcomes, the request, option probs.
  const auto& any = loop.draws.begin()->second;
  EXPECT_TRUE(any.contains("request")) << any.dump();
  EXPECT_TRUE(any.contains("extra")) << any.dump();
  if (::testing::Test::HasFailure()) return;
  std::printf("one stored draw as compared: %s\n", any.dump().substr(0, 3000).c_str());
}

TEST(EventLoop, InjectedFaultsEndTheSameWayOnBothPaths) {
  FaultOptions faults;
  faults.fail_rate = 0.4;
  faults.kinds = {"429", "500", "reset", "truncate", "slow"};
  faults.retry_after = "0";  // no throttle window: what a draw meets depends on its body only
  faults.slow_ms = 30;
  auto server = SimServer::start(SimParams{.seed = 2}, 0, faults);
  ASSERT_TRUE(server.ok()) << server.status().message();
  testing::TempDir d;
  // 2 retries: 0.4^3 of the draws exhaust them (api_error), the rest succeed on a retry.
  const std::string yaml = study_yaml((*server)->base_url(), 1, "    max_retries: 2\n    adaptive_429: false\n");
  const PathRun threads = run_path(yaml, d.path(), "threads", false);
  // The server's fault stream counts how often it saw each body: a second server for the
  // second run sees every body afresh.
  auto server2 = SimServer::start(SimParams{.seed = 2}, 0, faults);
  ASSERT_TRUE(server2.ok()) << server2.status().message();
  const std::string yaml2 = study_yaml((*server2)->base_url(), 1, "    max_retries: 2\n    adaptive_429: false\n");
  const PathRun loop = run_path(yaml2, d.path(), "loop", true);
  const int64_t planned = 24 * 2 * 2 * 1;
  ASSERT_EQ(threads.sum.planned, planned);
  EXPECT_EQ(threads.sum.executed, planned);
  EXPECT_GT(threads.sum.api_error, 0) << "no draw exhausted its retries: were faults injected?";
  EXPECT_GT(threads.sum.ok, threads.sum.api_error);
  // The base URL (port) differs between the two servers: compare without it.
  auto unport = [&](PathRun r, const std::string& url) {
    for (auto& [k, v] : r.draws) {
      std::string text = v.dump();
      for (size_t at = text.find(url); at != std::string::npos; at = text.find(url)) text.replace(at, url.size(), "URL");
      v = nlohmann::json::parse(text);
    }
    return r;
  };
  const PathRun a = unport(loop, (*server2)->base_url());
  const PathRun b = unport(threads, (*server)->base_url());
  expect_same(a, b);
  // Retries happened on both paths alike (attempts are part of the compared draws).
  int64_t retried = 0;
  for (const auto& [k, v] : a.draws) retried += v.value("attempts", 1) > 1;
  EXPECT_GT(retried, 0);
}

// The response cache keys of the event loop (from the request it dumped once for the
// wire) are the thread path's (from the request it builds again): a cache written by one
// path serves every draw of the other. And cache_key_text is the documented formula.
TEST(EventLoop, ResponseCacheKeysAreTheThreadPaths) {
  const DrawKey key{"s", "item-1", "none", "t0.7", 3};
  const nlohmann::json body = {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "caf\u00e9 \"q\"\n"}}}},
                               {"seed", 12}, {"temperature", 0.7}};
  const std::string formula = sha256_hex("openai:http://h/v1\n" + body.dump() + "\n" + key.to_string());
  EXPECT_EQ(cache_key("openai:http://h/v1", body, key), formula);
  EXPECT_EQ(cache_key_text("openai:http://h/v1", body.dump(), key), formula);

  auto server = SimServer::start(SimParams{.seed = 2});
  ASSERT_TRUE(server.ok()) << server.status().message();
  testing::TempDir d;
  auto study = parse_study(study_yaml((*server)->base_url(), 1, ""), d.path() + "/s.yaml");
  ASSERT_TRUE(study.ok()) << study.status().message();
  const std::string path = d.path() + "/c.sqlite";
  const int64_t planned = 24 * 2 * 2;
  for (bool event_loop : {false, true}) {
    auto store = Store::open(path);
    ASSERT_TRUE(store.ok()) << store.status().message();
    RunOptions ro;
    ro.progress = false;
    ro.event_loop = event_loop;
    auto sum = run_study(*study, **store, ro);
    ASSERT_TRUE(sum.ok()) << sum.status().message();
    EXPECT_EQ(sum->event_loop, event_loop);
    EXPECT_EQ(sum->executed, planned);
    // The first run (threads) fills the cache; the second (the loop) is served from it.
    EXPECT_EQ(sum->cached, event_loop ? planned : 0) << (event_loop ? "event loop" : "threads");
    store->reset();
    // Keep the cache, drop the draws: the next run makes every draw again.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, "PRAGMA foreign_keys = ON; DELETE FROM draws", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
}

// The committing thread's group window (runner.cc): a draw arriving while the committer
// waits out the window of an earlier one shares its transaction. One call in flight and a
// server that answers every request 5 ms late: without the window each draw is committed
// alone (the commit takes well under 5 ms); with it the draws of each window share one.
TEST(GroupCommit, DrawsArrivingWithinTheWindowShareATransaction) {
  FaultOptions faults;
  faults.fail_rate = 1.0;
  faults.kinds = {"slow"};  // the correct reply, slow_ms late
  faults.slow_ms = 5;
  auto server = SimServer::start(SimParams{.seed = 2}, 0, faults);
  ASSERT_TRUE(server.ok()) << server.status().message();
  testing::TempDir d;
  auto study = parse_study(study_yaml((*server)->base_url(), 1, ""), d.path() + "/s.yaml");
  ASSERT_TRUE(study.ok()) << study.status().message();
  auto store = Store::open(d.path() + "/g.sqlite");
  ASSERT_TRUE(store.ok()) << store.status().message();
  std::vector<size_t> groups;
  RunOptions ro;
  ro.progress = false;
  ro.use_cache = false;
  ro.threads = 1;
  ro.commit_group = [&](const std::vector<std::pair<const Draw*, const std::vector<Store::CacheEntry>*>>& group,
                        std::vector<Status>* statuses) {
    groups.push_back(group.size());
    return (*store)->put_draw_group(group, statuses);
  };
  auto sum = run_study(*study, **store, ro);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  const int64_t planned = 24 * 2 * 2;
  EXPECT_EQ(sum->executed, planned);
  EXPECT_EQ(sum->api_error, 0);
  EXPECT_EQ(static_cast<int64_t>(stored_draws(**store).size()), planned);
  size_t total = 0, largest = 0;
  for (size_t g : groups) total += g, largest = std::max(largest, g);
  EXPECT_EQ(total, static_cast<size_t>(planned));
  EXPECT_GE(largest, 2u) << "every draw was committed alone: " << groups.size() << " groups";
  EXPECT_LT(groups.size(), static_cast<size_t>(planned)) << groups.size() << " groups of " << planned << " draws";
}


// The stored request is the bytes the event loop sent (Draw::request_text), not a second
// dump of the request: byte for byte the thread path's (which the store dumps), for calls
// made and for draws served from the response cache, on a dataset with non-ASCII text,
// quotes, backslashes and newlines in its prompts.
std::map<std::string, std::string> stored_request_bytes(const std::string& path) {
  std::map<std::string, std::string> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT subject, item, condition, config, replicate, request FROM draws", -1, &st,
                               nullptr),
            SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::string key;
    for (int c = 0; c < 5; ++c) key += std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, c))) + "|";
    out[key] = std::string(reinterpret_cast<const char*>(sqlite3_column_blob(st, 5)),
                           static_cast<size_t>(sqlite3_column_bytes(st, 5)));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

TEST(EventLoop, StoredRequestBytesAreTheThreadPaths) {
  auto server = SimServer::start(SimParams{.seed = 3});
  ASSERT_TRUE(server.ok()) << server.status().message();
  testing::TempDir d;
  {
    std::ofstream data(d / "mcq.jsonl");
    data << R"({"id": "u1", "question": "Caf\u00e9 au lait spots \u2014 a \"quoted\" sign\\n and a\nnewline: which?", )"
         << R"("options": {"A": "NF1 \u00e9", "B": "NF2", "C": "TSC \t tab", "D": "\u6c49\u5b57"}, "answer_idx": "A"})"
         << "\n"
         << R"({"id": "u2", "question": "Plain ASCII question?", "options": {"A": "a", "B": "b"}, "answer_idx": "B"})"
         << "\n";
  }
  const std::string yaml = "name: bytes\nseed: 5\ndataset:\n  format: medqa\n  path: " + (d / "mcq.jsonl") +
                           "\nsubjects:\n  - name: http\n    backend: openai\n    base_url: " +
                           (*server)->base_url() +
                           "\n    model: sim-mcq-1\n    concurrency: 4\nconditions: [none, shuffle]\nconfigs:\n"
                           "  temperature: [0, 0.7]\nreplicates: 2\n";
  auto study = parse_study(yaml, d / "s.yaml");
  ASSERT_TRUE(study.ok()) << study.status().message();
  std::map<std::string, std::map<std::string, std::string>> runs;
  // threads (cache written), the loop served from that cache, the loop without a cache.
  for (const auto& [name, event_loop, cache] :
       std::vector<std::tuple<std::string, bool, bool>>{{"threads", false, true}, {"loop-cached", true, true},
                                                        {"loop", true, false}}) {
    const std::string path = d / (cache ? "cached.sqlite" : name + ".sqlite");
    {
      auto store = Store::open(path);
      ASSERT_TRUE(store.ok()) << store.status().message();
      RunOptions ro;
      ro.progress = false;
      ro.event_loop = event_loop;
      ro.use_cache = cache;
      auto sum = run_study(*study, **store, ro);
      ASSERT_TRUE(sum.ok()) << sum.status().message();
      EXPECT_EQ(sum->event_loop, event_loop);
      EXPECT_EQ(sum->executed, 2 * 2 * 2 * 2) << name;
      EXPECT_EQ(sum->cached, name == "loop-cached" ? 16 : 0) << name;
    }
    runs[name] = stored_request_bytes(path);
    if (name == "threads") {  // keep the cache, drop the draws: the loop's run is served from it
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
      EXPECT_EQ(sqlite3_exec(db, "PRAGMA foreign_keys = ON; DELETE FROM draws", nullptr, nullptr, nullptr), SQLITE_OK);
      sqlite3_close(db);
    }
  }
  const auto& ref = runs["threads"];
  ASSERT_EQ(ref.size(), 16u);
  bool saw_non_ascii = false;
  for (const auto& [key, bytes] : ref) {
    // The reference is the store's own dump of the request (compact, UTF-8 kept).
    EXPECT_EQ(bytes, nlohmann::json::parse(bytes).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    saw_non_ascii = saw_non_ascii || bytes.find("\xc3\xa9") != std::string::npos;
    for (const char* other : {"loop-cached", "loop"}) {
      auto it = runs[other].find(key);
      ASSERT_NE(it, runs[other].end()) << other << " " << key;
      EXPECT_EQ(it->second, bytes) << other << " " << key;
    }
  }
  EXPECT_TRUE(saw_non_ascii);
}

}  // namespace
}  // namespace nf
