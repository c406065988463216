#include "runner/runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <random>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "backend/anthropic.h"
#include "backend/http.h"
#include "backend/openai.h"
#include "core/draw_seed.h"
#include "data/bbq.h"
#include "data/chat.h"
#include "data/medqa.h"
#include "data/vignettes.h"
#include "runner/progress.h"
#include "runner/resume_check.h"
#include "runner/task_registry.h"
#include "sim/sim.h"
#include "task/mcq_task.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/strings.h"

namespace nf {

std::vector<PlannedDraw> plan_draws(const Study& study, const std::vector<TaskItem>& items,
                                    const std::vector<Config>& configs) {
  std::vector<PlannedDraw> plan;
  plan.reserve(study.subjects.size() * configs.size() * study.conditions.size() * items.size() *
               static_cast<size_t>(study.replicates));
  for (size_t s = 0; s < study.subjects.size(); ++s)
    for (size_t c = 0; c < configs.size(); ++c)
      for (const auto& cond : study.conditions)
        for (size_t i = 0; i < items.size(); ++i)
          for (int r = 0; r < study.replicates; ++r)
            plan.push_back({{study.subjects[s].name, items[i].id, cond, configs[c].id, r}, s, i, c});
  return plan;
}

std::optional<int64_t> request_seed(const Config& config, uint64_t study_seed, const DrawKey& key) {
  return draw_request_seed(config.seed, study_seed, key);
}

std::string cache_key(const std::string& backend_identity, const nlohmann::json& request_body, const DrawKey& key) {
  return cache_key_text(backend_identity, request_body.dump(), key);
}

std::string cache_key_text(const std::string& backend_identity, std::string_view request_body_text, const DrawKey& key) {
  std::string text;
  const std::string k = key.to_string();
  text.reserve(backend_identity.size() + request_body_text.size() + k.size() + 2);
  text.append(backend_identity).append("\n").append(request_body_text).append("\n").append(k);
  return sha256_hex(text);
}

Result<std::unique_ptr<Backend>> make_backend(const SubjectSpec& subject, const std::atomic<bool>* abandon) {
  if (subject.backend == "sim") {
    auto params = SimParams::from_json(subject.sim);
    if (!params.ok()) return params.status().with_context(fmt::format("subject '{}': sim", subject.name));
    return std::unique_ptr<Backend>(std::make_unique<SimBackend>(*params));
  }
  if (subject.backend == "openai" || subject.backend == "anthropic") {
    OpenAiOptions o;
    o.base_url = subject.base_url;
    o.timeout_s = subject.timeout_s;
    o.connect_timeout_s = subject.connect_timeout_s;
    o.max_retries = subject.max_retries;
    o.retry_after_cap_s = subject.retry_after_cap_s;
    o.rpm = subject.rpm;
    o.tpm = subject.tpm;
    o.max_in_flight = std::max(1, subject.concurrency);
    o.adaptive = subject.adaptive_429;  // study key adaptive_429 (docs/backends.md)
    o.jitter_seed = fnv1a64(subject.name);
    o.abandon = abandon;
    if (!subject.api_key_env.empty()) {
      const char* key = std::getenv(subject.api_key_env.c_str());
      if (key == nullptr)
        return InvalidArgument(fmt::format(
            "{}: environment variable {} is not set (subject '{}'; export it, or drop api_key_env for a server "
            "that needs no key, such as noisefloor serve-sim)",
            subject.api_key_env_where.empty() ? "api_key_env" : subject.api_key_env_where, subject.api_key_env,
            subject.name));
      o.api_key = key;
    }
    if (subject.backend == "anthropic") return std::unique_ptr<Backend>(std::make_unique<AnthropicBackend>(o));
    return std::unique_ptr<Backend>(std::make_unique<OpenAiBackend>(o));
  }
  return InvalidArgument(fmt::format("subject '{}': unknown backend '{}' (expected sim, openai or anthropic)",
                                     subject.name, subject.backend));
}

namespace {

// True if a draw's error says the server answered and refused the request itself (e.g. a
// prompt longer than its context): "HTTP 4xx: ..." (backend/http.cc) other than 408 and
// 429, also behind a multi-turn task's "turn N: " prefix (task/fhir_agent_task.cc; tester
// s11 finding 5).
bool server_refused_request(std::string_view error) {
  if (error.rfind("turn ", 0) == 0) {
    size_t p = 5;
    while (p < error.size() && error[p] >= '0' && error[p] <= '9') ++p;
    if (p > 5 && error.substr(p, 2) == ": ") error.remove_prefix(p + 2);
  }
  return error.rfind("HTTP 4", 0) == 0 && error.rfind("HTTP 408", 0) != 0 && error.rfind("HTTP 429", 0) != 0;
}

nlohmann::json subject_to_json(const SubjectSpec& sub) {
  return {{"name", sub.name},
          {"provider", sub.provider},
          {"backend", sub.backend},
          {"model", sub.model},
          {"base_url", strip_url_userinfo(sub.base_url)},
          {"api_key_env", sub.api_key_env},
          {"sim", sub.sim},
          {"extra_body", sub.extra_body},
          {"concurrency", sub.concurrency},
          {"timeout_s", sub.timeout_s},
          {"connect_timeout_s", sub.connect_timeout_s},
          {"max_retries", sub.max_retries},
          {"retry_after_cap_s", sub.retry_after_cap_s},
          {"rpm", sub.rpm},
          {"tpm", sub.tpm},
          {"logprobs", sub.logprobs},
          {"adaptive_429", sub.adaptive_429}};
}

}  // namespace

nlohmann::json study_to_json(const Study& s) {
  nlohmann::json j;
  j["name"] = s.name;
  j["seed"] = s.seed;
  j["task"] = s.task;
  j["dataset"] = {{"format", s.dataset.format}, {"path", s.dataset.path}, {"limit", s.dataset.limit}};
  j["subjects"] = nlohmann::json::array();
  for (const auto& sub : s.subjects) j["subjects"].push_back(subject_to_json(sub));
  if (s.judge.enabled) {
    nlohmann::json panel = nlohmann::json::array();
    for (const auto& judge : s.judge.panel) panel.push_back(subject_to_json(judge));
    j["judge"] = {{"criterion", s.judge.criterion},
                  {"temperature", s.judge.temperature},
                  {"top_p", s.judge.top_p},
                  {"seed", s.judge.seed ? nlohmann::json(*s.judge.seed) : nlohmann::json(nullptr)},
                  {"max_tokens", s.judge.max_tokens},
                  {"panel", std::move(panel)}};
  }
  j["conditions"] = s.conditions;
  j["configs"] = nlohmann::json::array();
  for (const auto& c : expand_configs(s.axes)) j["configs"].push_back(c.to_json());
  j["replicates"] = s.replicates;
  j["analyses"] = nlohmann::json::array();
  for (const auto& a : s.analyses) j["analyses"].push_back({{"name", a.name}, {"options", a.options}});
  j["bootstrap"] = {{"resamples", s.bootstrap.resamples}, {"seed", s.bootstrap.seed}, {"level", s.bootstrap.level}};
  return j;
}

nlohmann::json effective_extra_body(const SubjectSpec& subject) {
  nlohmann::json body = subject.extra_body.is_object() ? subject.extra_body : nlohmann::json::object();
  if ((subject.backend == "openai" || subject.backend == "sim") && subject.logprobs > 0) {  // sim: sim_mcq_logprobs
    body["logprobs"] = true;
    body["top_logprobs"] = subject.logprobs;
  }
  return body;
}

namespace {

// `git -C dir rev-parse HEAD`, or "" outside a work tree (or without git).
std::string git_commit_of(const std::string& dir) {
  const std::string cmd = "git -C '" + dir + "' rev-parse HEAD 2>/dev/null";
  if (dir.find('\'') != std::string::npos) return "";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "";
  char buf[128] = {0};
  std::string out;
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.size() == 40 ? out : "";
}

}  // namespace

nlohmann::json provenance_card(const Study& study) {
  nlohmann::json card;
  card["tool"] = "noisefloor";
  card["tool_version"] = NOISEFLOOR_VERSION;
  card["study_sha256"] = sha256_hex(study.source_text);
  std::string dir = study.source_path;
  const size_t slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  const std::string commit = git_commit_of(dir.empty() ? "/" : dir);
  card["study_git_commit"] = commit.empty() ? nlohmann::json(nullptr) : nlohmann::json(commit);
  // Hashed while read through a small buffer (util/hash.h sha256_file_hex): the task has read the
  // whole file already; a second whole-file buffer was ~5% of the start-up's CPU.
  auto data_sha = sha256_file_hex(study.dataset.path);
  card["datasets"] = nlohmann::json::array(
      {{{"path", study.dataset.path}, {"sha256", data_sha.ok() ? nlohmann::json(*data_sha) : nlohmann::json(nullptr)}}});
  if (study.dataset.format == "probe_sheet") {  // the key.json read beside the sheet
    if (const std::string key = probe_sheet_key_path(study.dataset.path); !key.empty()) {
      auto kd = read_file(key);
      card["datasets"].push_back(
          {{"path", key}, {"sha256", kd.ok() ? nlohmann::json(sha256_hex(*kd)) : nlohmann::json(nullptr)}});
    }
  }
  card["backends"] = nlohmann::json::array();
  for (const auto& sub : study.subjects) {
    card["backends"].push_back({{"subject", sub.name},
                                {"backend", sub.backend},
                                {"url", sub.base_url.empty() ? nlohmann::json(nullptr)
                                                             : nlohmann::json(strip_url_userinfo(sub.base_url))}});
  }
  return card;
}

Result<std::unique_ptr<Task>> make_task(const Study& study) {
  const TaskFactory* make = find_task_factory(study.task);
  if (make == nullptr) {
    std::vector<std::string> names;
    for (const auto& r : task_registry()) names.push_back(r.name);
    return InvalidArgument(fmt::format("task: unknown task '{}' (expected {})", study.task, join(names, ", ")));
  }
  return (*make)(study);
}

namespace {

// A request body as the store writes it and the backends send it (compact; invalid
// UTF-8 replaced, never thrown).
std::string dump_request(const nlohmann::json& body) {
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json response_to_json(const ChatResponse& r) {
  return {{"kind", static_cast<int>(r.kind)},       {"content", r.content},
          {"finish_reason", r.finish_reason},       {"served_model", r.served_model},
          {"system_fingerprint", r.system_fingerprint}, {"prompt_tokens", r.prompt_tokens},
          {"completion_tokens", r.completion_tokens}, {"latency_ms", r.latency_ms},
          {"http_status", r.http_status},           {"raw_body", r.raw_body},
          {"headers", r.headers},                   {"logprobs", r.logprobs}};
}

ChatResponse response_from_json(const nlohmann::json& j) {
  ChatResponse r;
  r.kind = static_cast<ResponseKind>(j.value("kind", 0));
  r.content = j.value("content", "");
  r.finish_reason = j.value("finish_reason", "");
  r.served_model = j.value("served_model", "");
  r.system_fingerprint = j.value("system_fingerprint", "");
  r.prompt_tokens = j.value("prompt_tokens", int64_t{-1});
  r.completion_tokens = j.value("completion_tokens", int64_t{-1});
  r.latency_ms = j.value("latency_ms", 0.0);
  r.http_status = j.value("http_status", 0);
  r.raw_body = j.value("raw_body", "");
  if (auto h = j.find("headers"); h != j.end() && h->is_object()) {
    for (const auto& [k, v] : h->items())
      if (v.is_string()) r.headers[k] = v.get<std::string>();
  }
  if (auto l = j.find("logprobs"); l != j.end()) r.logprobs = *l;
  r.attempts = 0;  // no call was made
  return r;
}

}  // namespace

namespace {

// The `run --refresh` record in the store's meta table (RunSummary::Refresh): {id,
// started_at, study_hash, finished_at (null until every planned draw was refreshed)}.
constexpr const char* kRefreshMetaKey = "refresh";

struct RefreshRecord {
  std::string id;
  int64_t started_at = 0;
  std::string study_hash;
  std::optional<int64_t> finished_at;
};

Result<std::optional<RefreshRecord>> read_refresh_record(Store& store) {
  NF_ASSIGN_OR_RETURN(auto text, store.meta_value(kRefreshMetaKey));
  if (!text) return std::optional<RefreshRecord>();
  const auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string() || !j.contains("started_at") ||
      !j["started_at"].is_number_integer())
    return DataLoss(fmt::format("store meta '{}' is not a refresh record: {}", kRefreshMetaKey, *text));
  RefreshRecord r;
  r.id = j["id"].get<std::string>();
  r.started_at = j["started_at"].get<int64_t>();
  r.study_hash = j.value("study_hash", "");
  if (j.contains("finished_at") && j["finished_at"].is_number_integer()) r.finished_at = j["finished_at"].get<int64_t>();
  return std::optional<RefreshRecord>(std::move(r));
}

Status write_refresh_record(Store& store, const RefreshRecord& r) {
  const nlohmann::json j = {{"id", r.id},
                            {"started_at", r.started_at},
                            {"study_hash", r.study_hash},
                            {"finished_at", r.finished_at ? nlohmann::json(*r.finished_at) : nlohmann::json(nullptr)}};
  return store.set_meta_value(kRefreshMetaKey, j.dump());
}

// A fresh refresh id: the start time and 64 random bits (two refreshes started in one
// second never share an id, so draws of an earlier one never count for a later one).
std::string new_refresh_id(int64_t now) {
  std::random_device rd;
  const uint64_t r = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return fmt::format("{}-{:016x}", now, r);
}

// The study record, items, subjects and configs (what analyses read besides the draws).
Status record_study(const Study& study, const std::vector<TaskItem>& items, const std::vector<Config>& configs,
                    Store& store, bool progress) {
  StudyRecord rec{study.name, sha256_hex(study.source_text), static_cast<int64_t>(study.seed), study_to_json(study)};
  rec.spec["provenance"] = provenance_card(study);
  NF_ASSIGN_OR_RETURN(auto prev_hash, store.put_study(rec));
  if (!prev_hash.empty() && prev_hash != rec.hash && progress)
    std::fprintf(stderr, "note: the study file changed since this store was last written; resuming by draw key\n");
  {
    std::vector<ItemRow> rows;
    rows.reserve(items.size());
    for (const auto& it : items) rows.push_back({it.id, it.cluster, it.data});
    NF_RETURN_IF_ERROR(store.put_items(rows));  // one transaction, not one per item
  }
  for (size_t s = 0; s < study.subjects.size(); ++s) {
    NF_RETURN_IF_ERROR(store.put_subject(study.subjects[s].name, study_to_json(study)["subjects"][s]));
  }
  for (const auto& c : configs) NF_RETURN_IF_ERROR(store.put_config(c.id, c.to_json()));
  return Status::Ok();
}

}  // namespace

std::string refresh_note(const RunSummary::Refresh& r, const std::string& study_path) {
  const std::time_t t = static_cast<std::time_t>(r.started_at);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
  if (!r.finished)
    return fmt::format(
        "a `run --refresh` started {} did not finish: {} of {} planned draws still hold answers from before it (or "
        "none), so the store mixes old and new answers; run `noisefloor run {} --refresh` again to finish it: it "
        "re-runs only those {}",
        when, r.left, r.planned, study_path, r.left);
  if (r.resumed) return fmt::format("the `run --refresh` started {} is complete: every planned draw refreshed", when);
  return "";
}

Result<RunSummary> run_study(const Study& study, Store& store, const RunOptions& options) {
  Clock& clock = options.clock ? *options.clock : real_clock();
  if (study.subjects.empty() || study.dataset.path.empty())
    return FailedPrecondition(fmt::format(
        "{}: the study has no {} (a judging-only study): there are no draws to run; score the stored "
        "draws with `noisefloor judge {}`",
        study.source_path, study.subjects.empty() ? "subjects" : "dataset", study.source_path));
  NF_ASSIGN_OR_RETURN(auto task, make_task(study));
  const auto& items = task->items();
  if (items.empty()) return InvalidArgument(fmt::format("{}: dataset has no items", study.dataset.path));
  const auto configs = expand_configs(study.axes);

  // Set at the end of a stop's grace (below): every HTTP call still in flight is cut and
  // its draw abandoned, never stored (RunOptions::stop_grace_s). Outlives the backends.
  std::atomic<bool> abandon{false};
  std::vector<std::unique_ptr<Backend>> backends;
  for (const auto& s : study.subjects) {
    NF_ASSIGN_OR_RETURN(auto b, make_backend(s, &abandon));
    backends.push_back(std::move(b));
  }
  // Each backend's identity (cache keys, each draw's `extra`), built once, not per draw.
  std::vector<std::string> identities;
  for (const auto& b : backends) identities.push_back(b->identity());
  // Validates every (item, condition) before any call is made.
  NF_RETURN_IF_ERROR(task->prepare(study.conditions, study.seed));

  // Before the records are overwritten: were the stored draws made under this study?
  // (--refresh draws them all again, so it needs no check.)
  if (options.record_study) NF_RETURN_IF_ERROR(check_store_holds_this_study(study, store));
  if (options.record_study && !options.refresh)
    NF_RETURN_IF_ERROR(check_stored_draws_match(study, items, configs, store));
  if (options.record_study) NF_RETURN_IF_ERROR(record_study(study, items, configs, store, options.progress));

  const auto plan = plan_draws(study, items, configs);
  std::unordered_set<std::string> done, wanted;
  const bool feed = static_cast<bool>(options.next_keys);
  std::unordered_map<std::string, const PlannedDraw*> by_key;  // feed mode: key -> plan entry
  if (feed) {
    by_key.reserve(plan.size());
    for (const auto& p : plan) by_key.emplace(p.key.to_string(), &p);
  } else if (options.keys == nullptr) {
    NF_ASSIGN_OR_RETURN(done, store.finished_keys());
  } else {
    for (const auto& k : *options.keys) wanted.insert(k.to_string());
  }
  std::vector<const PlannedDraw*> todo;
  const bool use_cache = options.use_cache && !options.refresh;
  std::vector<nlohmann::json> extra_bodies;
  for (const auto& sub : study.subjects) extra_bodies.push_back(effective_extra_body(sub));
  RunSummary sum;
  sum.planned = static_cast<int64_t>(options.keys ? options.keys->size() : plan.size());
  // `run --refresh` bookkeeping (RunSummary::Refresh; tester s10 finding 13): not for a
  // worker's batches, which never refresh.
  std::optional<RefreshRecord> refresh_rec;
  std::unordered_set<std::string> refreshed;  // resumed refresh: planned draws already refreshed
  if (!feed && options.keys == nullptr) {
    NF_ASSIGN_OR_RETURN(refresh_rec, read_refresh_record(store));
    if (refresh_rec && refresh_rec->finished_at) refresh_rec.reset();
    RunSummary::Refresh info;
    const std::string hash = sha256_hex(study.source_text);
    if (options.refresh) {
      if (refresh_rec && refresh_rec->study_hash == hash) {
        info.resumed = true;
        NF_ASSIGN_OR_RETURN(refreshed, store.refreshed_keys(refresh_rec->id));
      } else {
        info.restarted = refresh_rec.has_value();
        const int64_t now = clock.unix_time_s();
        refresh_rec = RefreshRecord{new_refresh_id(now), now, hash, std::nullopt};
        NF_RETURN_IF_ERROR(write_refresh_record(store, *refresh_rec));
      }
    }
    if (refresh_rec) {
      info.started_at = refresh_rec->started_at;
      sum.refresh = info;
    }
  }
  // Every draw written while a refresh is unfinished is an answer from after it started.
  const std::string refresh_mark = refresh_rec ? refresh_rec->id : std::string();
  for (const auto& p : plan) {
    if (feed) break;
    if (options.keys && !wanted.count(p.key.to_string())) continue;
    if (options.refresh ? refreshed.count(p.key.to_string()) > 0 : done.count(p.key.to_string()) > 0)
      ++sum.already_done;
    else
      todo.push_back(&p);
  }

  if (!feed && options.keys && todo.size() != options.keys->size())
    return InvalidArgument(fmt::format("{}: {} of the {} draws to run are not in this study's plan (was the plan "
                                       "written from another version of the study file?)",
                                       study.source_path, options.keys->size() - todo.size(), options.keys->size()));
  int threads = options.threads;
  if (threads <= 0) {
    threads = 1;
    for (const auto& s : study.subjects) threads = std::max(threads, s.concurrency);
  }
  if (!feed) threads = std::max(1, std::min<int>(threads, static_cast<int>(todo.size())));

  // The event loop (below) for a single-call task whose subjects are all HTTP backends.
  // Not in feed mode (a worker's next_keys): a loop thread waiting in next_keys for other
  // workers' leases could not finish its own calls in flight, whose commits that wait needs
  // (a deadlock at the end of the plan); the worker threads there wait one at a time.
  bool loop_path = options.event_loop && task->single_call() && !feed;
  for (const auto& b : backends) loop_path = loop_path && dynamic_cast<AsyncChatSource*>(b.get()) != nullptr;

  std::atomic<size_t> next{0};
  std::atomic<int64_t> executed{0};
  std::atomic<bool> failed{false};
  std::mutex mu;  // guards sum counters and `error`
  Status error;
  const double t0 = clock.now_s();

  // Counts one committed draw (caller holds `mu`).
  auto count = [&](const Draw& d, bool from_cache) {
    switch (d.status) {
      case DrawStatus::kOk: ++sum.ok; break;
      case DrawStatus::kParseError: ++sum.parse_error; break;
      case DrawStatus::kApiError:
        ++sum.api_error;
        if (sum.first_api_error.empty()) sum.first_api_error = d.error;
        if (server_refused_request(d.error)) ++sum.api_error_refused_request;
        break;
      case DrawStatus::kRefused: ++sum.refused; break;
    }
    if (from_cache) ++sum.cached;
  };

  // Finished draws waiting for the committer (below).
  struct Finished {
    Draw draw;
    std::vector<Store::CacheEntry> cache;
    bool from_cache = false;
  };
  constexpr size_t kMaxPending = 256;
  const size_t max_pending = std::max<size_t>(kMaxPending, 4 * static_cast<size_t>(threads));
  // The group window (issue 14 item 5): once a draw is waiting, the committer gathers more
  // for up to kGroupWindow (or until group_target are waiting, or the threads have ended)
  // before it writes them in one transaction. Larger groups write each B-tree page to the
  // WAL fewer times (a group of ~10 draws rewrote the same right-edge pages at every
  // commit). A SIGKILL loses at most the draws of the last window and the commit in
  // progress; they are not counted and a resume runs them. Not in feed mode (a worker
  // claims its next batch when its draws are committed).
  constexpr auto kGroupWindow = std::chrono::milliseconds(20);
  const size_t group_target = max_pending / 2;
  std::mutex qmu;  // guards queue and workers_done
  std::condition_variable q_ready, q_space;
  std::vector<Finished> queue;
  bool workers_done = false;

  // The circuit breaker (RunOptions::max_consecutive_api_errors): per subject, the draws
  // in a row (in the order they finish) that failed because the server could not be
  // reached or failed; `tripped` stops the workers as an interrupt does.
  std::mutex breaker_mu;  // guards down_streak and sum.breaker
  std::vector<int> down_streak(study.subjects.size(), 0);
  std::atomic<bool> tripped{false};
  // A draw whose last attempt found the endpoint silent (backend.h
  // ChatResponse::endpoint_silent: no HTTP response to any call for a whole timeout_s, a
  // hung server) trips the breaker at once: waiting for 16 such draws would take
  // 16 / concurrency timeouts.
  auto breaker_note = [&](const PlannedDraw& p, const TaskDrawResult& res, int64_t cached_calls) {
    if (options.max_consecutive_api_errors <= 0 || res.calls <= cached_calls) return;  // no call made
    const ChatResponse& r = res.response;
    const bool down = res.status == DrawStatus::kApiError && r.kind == ResponseKind::kApiError &&
                      (r.transport_error || r.http_status >= 500);
    std::lock_guard<std::mutex> lock(breaker_mu);
    int& streak = down_streak[p.subject_index];
    if (!down) {
      streak = 0;
      return;
    }
    ++streak;
    if (down && r.endpoint_silent && !tripped.load()) {
      sum.breaker = fmt::format("subject '{}' ({}): the server accepted the requests but sent no HTTP response to any "
                                "call for {} s (timeout_s): it hangs; last: {}",
                                study.subjects[p.subject_index].name, backends[p.subject_index]->identity(),
                                study.subjects[p.subject_index].timeout_s, res.error.empty() ? r.error : res.error);
      tripped = true;
      return;
    }
    if (streak < options.max_consecutive_api_errors || tripped.load()) return;
    sum.breaker = fmt::format("subject '{}' ({}): {} failed at the API; last: {}",
                              study.subjects[p.subject_index].name, backends[p.subject_index]->identity(),
                              streak == 1 ? std::string("a draw") : fmt::format("{} draws in a row", streak),
                              res.error.empty() ? r.error : res.error);
    tripped = true;
  };

  // A stop that abandons the draws still in flight after the grace (a signal, the
  // breaker, a failed commit); --max-draws only stops starting new ones.
  auto hard_stop = [&] { return failed.load() || tripped.load() || (options.stop && options.stop->load()); };
  auto stop_requested = [&] {
    return hard_stop() || (options.max_draws >= 0 && executed.load() >= options.max_draws);
  };
  std::atomic<int64_t> abandoned_draws{0};

  // The Draw of planned draw `p` that ended with `res` (both paths); moves the request,
  // the reply's body and text and the outcomes out of `res`. `sent_body`, when not null, is
  // res.request already dumped (the event loop's payload): moved into the draw for the
  // store (Draw::request_text), so the request is not dumped a second time.
  auto make_draw = [&](const PlannedDraw& p, TaskDrawResult& res, bool from_cache, std::string* sent_body = nullptr) {
    Draw d;
    d.key = p.key;
    d.cluster = items[p.item_index].cluster;
    // Built member by member (an initializer list makes a temporary array per pair) and
    // moved in: the same object, fewer allocations per draw.
    d.extra["condition"] = res.detail;
    d.extra["backend"] = identities[p.subject_index];
    d.extra["calls"] = res.calls;
    if (!refresh_mark.empty()) d.extra["refresh"] = refresh_mark;
    if (res.calls > 1) d.extra["transcript"] = res.transcript;
    // Provenance (issue 6 item 8): what was actually sent and what the server said.
    if (!res.response.headers.empty()) d.extra["headers"] = res.response.headers;
    if (res.request.is_object()) {
      nlohmann::json sent = nlohmann::json::object();
      for (const char* k : {"temperature", "top_p", "seed", "max_tokens", "logprobs", "top_logprobs"})
        if (auto it = res.request.find(k); it != res.request.end()) sent[k] = *it;
      d.extra["decoding_sent"] = std::move(sent);
    }
    if (!res.response.logprobs.is_null()) {
      std::vector<std::string> letters;
      const auto& data = items[p.item_index].data;
      // The SHOWN letters (A, B, ... as many as the prompt had): a remove_context draw
      // shows one more option (the appended sentinel) than the item stores.
      size_t shown = data.contains("options") && data["options"].is_object() ? data["options"].size() : 0;
      if (res.detail.is_object() && res.detail.contains("removed_chars")) ++shown;
      for (size_t k = 0; k < shown && k < 26; ++k) letters.emplace_back(1, static_cast<char>('A' + k));
      // At the token where the answer letter sits, not the first generated token (which
      // is "<" for "<answer>X</answer>"): backend/openai.h answer_token_probabilities.
      const AnswerTokenProbs at = answer_token_probabilities(res.response.logprobs, letters);
      nlohmann::json probs = nlohmann::json::object();
      for (const auto& [letter, prob] : at.probs)
        probs[letter] = prob ? nlohmann::json(*prob) : nlohmann::json(nullptr);
      d.extra["option_probs"] = probs;
      nlohmann::json where{{"position", at.position ? nlohmann::json(*at.position) : nlohmann::json(nullptr)}};
      if (at.position) {
        where["token"] = at.token;
        where["prob"] = at.token_prob ? nlohmann::json(*at.token_prob) : nlohmann::json(nullptr);
        // The letters the top list itself carried: a known option outside them is only the
        // sampled token's own probability (metrics/option_probs.h, mean_gold_prob_listed).
        where["listed"] = at.listed_letters;
      } else {
        where["note"] = at.note;
      }
      // A constrained request (grammar / guided choice) whose top list still holds other
      // tokens: the server reports the distribution before the constraint.
      bool constrained = false;
      for (const char* k : {"grammar", "guided_choice", "guided_regex", "guided_grammar", "response_format"})
        constrained = constrained || (res.request.is_object() && res.request.contains(k));
      if (constrained && at.top_has_non_letters) where["top_logprobs_ignore_constraint"] = true;
      d.extra["answer_token"] = where;
    }
    ChatResponse& resp = res.response;
    d.request = std::move(res.request);
    if (sent_body != nullptr) d.request_text = std::move(*sent_body);
    d.status = res.status;
    d.outcomes = std::move(res.outcomes);
    d.error = std::move(res.error);
    d.raw_response = std::move(resp.raw_body);
    d.content = std::move(resp.content);
    d.latency_ms = resp.latency_ms;
    d.prompt_tokens = resp.prompt_tokens;
    d.completion_tokens = resp.completion_tokens;
    d.finish_reason = std::move(resp.finish_reason);
    d.served_model = std::move(resp.served_model);
    d.system_fingerprint = std::move(resp.system_fingerprint);
    d.cached = from_cache;
    d.attempts = resp.attempts;
    return d;
  };

  // Commits (--refresh, a worker's hook) or hands a finished draw to the committer; false
  // when a commit failed (the run stops with that error).
  auto deliver = [&](Draw d, std::vector<Store::CacheEntry> new_cache, bool from_cache) -> bool {
    if (options.refresh || options.commit) {  // one transaction per draw, counted after it
      // (--refresh replaces; a worker's commit hook also marks its planned draw done). A
      // refreshed draw that failed at the API does not replace a stored answer: put_draw
      // keeps a finished draw (AlreadyExists, counted as this run's api_error) and replaces
      // only an api_error one, so a refresh against a server that is down loses nothing.
      Status st = options.commit                         ? options.commit(d, new_cache)
                  : d.status == DrawStatus::kApiError ? store.put_draw(d)
                                                        : store.replace_draw(d);
      if (!st.ok() && st.code() != StatusCode::kAlreadyExists) {
        std::lock_guard<std::mutex> lock(mu);
        error = st;
        failed = true;
        return false;
      }
      executed.fetch_add(1);
      std::lock_guard<std::mutex> lock(mu);
      count(d, from_cache);
      return true;
    }
    // Hand the draw to the committer and go on with the next call; it is counted only
    // once the transaction holding it has committed.
    std::unique_lock<std::mutex> lock(qmu);
    q_space.wait(lock, [&] { return queue.size() < max_pending; });
    queue.push_back(Finished{std::move(d), std::move(new_cache), from_cache});
    // The committer waits for the first draw of a group, then (the group window below) for
    // group_target draws: a wake-up for each draw in between would only cost a switch.
    const bool wake = queue.size() == 1 || queue.size() >= group_target;
    lock.unlock();
    if (wake) q_ready.notify_one();
    return true;
  };

  // The response cache around one call: the key (a SHA-256 over the dumped request) only
  // when the cache is read or written; a hit when the cache is read and holds the key.
  // `body_text`, when not null, is req.to_openai_json() already dumped (the event loop's).
  auto cache_lookup = [&](size_t subject_index, const ChatRequest& req, const DrawKey& key, int call_index,
                          std::string& ckey, const std::string* body_text = nullptr) -> std::optional<ChatResponse> {
    if (options.use_cache)
      ckey = (body_text ? cache_key_text(identities[subject_index], *body_text, key)
                        : cache_key(identities[subject_index], req.to_openai_json(), key)) +
             ":" + std::to_string(call_index);
    if (use_cache) {
      auto hit = store.cache_get(ckey);
      if (hit.ok() && hit->has_value()) return response_from_json(**hit);
    }
    return std::nullopt;
  };
  auto cache_keep = [&](const std::string& ckey, const ChatResponse& resp, std::vector<Store::CacheEntry>& new_cache) {
    if (options.use_cache && resp.kind == ResponseKind::kOk) {  // --refresh rewrites the cache
      if (options.refresh)
        (void)store.cache_put(ckey, response_to_json(resp));  // best effort: the draw is what counts
      else
        new_cache.push_back({ckey, response_to_json(resp)});
    }
  };
  auto context_of = [&](const PlannedDraw& p) {
    return DrawContext{p.key, configs[p.config_index], study.subjects[p.subject_index].model,
                       request_seed(configs[p.config_index], study.seed, p.key), extra_bodies[p.subject_index]};
  };

  // Feed mode: the next planned draw, pulling a new batch when this one is handed out.
  std::mutex feed_mu;
  size_t feed_pos = 0;
  bool feed_done = false;
  auto take = [&]() -> const PlannedDraw* {
    std::lock_guard<std::mutex> lock(feed_mu);
    while (feed_pos >= todo.size()) {
      if (feed_done || stop_requested()) return nullptr;
      Result<std::vector<DrawKey>> batch = options.next_keys();
      Status st = batch.status();
      if (st.ok() && batch->empty()) feed_done = true;
      todo.clear();
      feed_pos = 0;
      for (size_t i = 0; st.ok() && i < batch->size(); ++i) {
        auto it = by_key.find((*batch)[i].to_string());
        if (it == by_key.end())
          st = InvalidArgument(fmt::format("{}: draw {} is not in this study's plan (was the plan written from "
                                           "another version of the study file?)",
                                           study.source_path, (*batch)[i].to_string()));
        else todo.push_back(it->second);
      }
      if (!st.ok()) {
        std::lock_guard<std::mutex> elock(mu);
        if (!failed) error = st;
        failed = true;
        return nullptr;
      }
    }
    return todo[feed_pos++];
  };

  // The next planned draw for a worker or an event loop; nullptr when there is none (the
  // plan or --max-draws is used up, or, in feed mode, the batch source is empty or failed).
  auto next_draw = [&]() -> const PlannedDraw* {
    if (feed) return take();
    const size_t idx = next.fetch_add(1);
    if (idx >= todo.size()) return nullptr;
    if (options.max_draws >= 0 && static_cast<int64_t>(idx) >= options.max_draws) return nullptr;
    return todo[idx];
  };

  auto worker = [&] {
    while (!stop_requested()) {
      const PlannedDraw* pp = next_draw();
      if (pp == nullptr) break;
      const PlannedDraw& p = *pp;
      Backend& backend = *backends[p.subject_index];
      const DrawContext ctx = context_of(p);
      int call_index = 0;
      int64_t cached_calls = 0;
      bool cut = false;  // a call was abandoned at the end of a stop's grace
      std::vector<Store::CacheEntry> new_cache;  // committed with the draw (one transaction)
      const CallFn call = [&](const ChatRequest& req) {
        std::string ckey;
        if (auto hit = cache_lookup(p.subject_index, req, p.key, call_index++, ckey)) {
          ++cached_calls;
          return std::move(*hit);
        }
        ChatResponse resp = backend.complete(req);
        cut = cut || resp.abandoned;
        cache_keep(ckey, resp, new_cache);
        return resp;
      };
      TaskDrawResult res = task->run(p.item_index, p.key.condition, ctx, call);
      if (cut) {  // not an answer and not the server's failure: never stored (a resume runs it)
        abandoned_draws.fetch_add(1);
        continue;
      }
      const bool from_cache = res.calls > 0 && cached_calls == res.calls;
      breaker_note(p, res, cached_calls);
      if (!deliver(make_draw(p, res, from_cache), std::move(new_cache), from_cache)) break;
    }
  };

  // The event loop (issue 14 item 5): for a single-call task whose subjects are all HTTP
  // backends, one thread drives up to `limit` calls at once over libcurl multi
  // (backend/http.h ChatMulti: the same admission, retries and classification as
  // post_chat, waits as timers), builds each request with Task::begin_draw and scores
  // each reply with Task::finish_draw -- exactly what Task::run does on the thread path --
  // and hands the draws to the same committer. Draws are started in plan order.
  // RunOptions::event_loops such loops share the `threads` calls in flight.
  auto event_loop = [&](size_t limit) {
    ChatMulti multi;
    size_t in_flight = 0;
    struct Pending {
      const PlannedDraw* p;
      DrawContext ctx;
      TaskDrawResult res;
      ChatRequest req;
      std::string ckey;
      std::string body;  // res.request dumped once: the cache key's bytes and the payload sent
    };
    bool stop_loop = false;
    for (;;) {
      while (!stop_loop && in_flight < limit && !stop_requested()) {
        const PlannedDraw* pp = next_draw();
        if (pp == nullptr) break;
        const PlannedDraw& p = *pp;
        Backend& backend = *backends[p.subject_index];
        auto pend = std::make_shared<Pending>(Pending{&p, context_of(p), TaskDrawResult(), ChatRequest(), "", ""});
        std::optional<ChatRequest> req = task->begin_draw(p.item_index, p.key.condition, pend->ctx, pend->res);
        if (!req) {  // ended without a call
          breaker_note(p, pend->res, 0);
          if (!deliver(make_draw(p, pend->res, false), {}, false)) stop_loop = true;
          continue;
        }
        // The task recorded the request body it built (Task::begin_draw): dumped once, and
        // those bytes are the cache key's, the payload sent and the stored request.
        const bool have_body = pend->res.request.is_object();
        if (have_body) pend->body = dump_request(pend->res.request);
        const std::string* body = have_body ? &pend->body : nullptr;
        if (auto hit = cache_lookup(p.subject_index, *req, p.key, 0, pend->ckey, body)) {
          task->finish_draw(p.item_index, p.key.condition, *req, std::move(*hit), pend->res);
          breaker_note(p, pend->res, 1);
          if (!deliver(make_draw(p, pend->res, true, body ? &pend->body : nullptr), {}, true)) stop_loop = true;
          continue;
        }
        pend->req = std::move(*req);
        AsyncChatCall call = dynamic_cast<AsyncChatSource&>(backend).async_call(pend->req, body);
        ++in_flight;
        multi.start(std::move(call), [&, pend](ChatResponse resp) {
          --in_flight;
          const PlannedDraw& pd = *pend->p;
          std::vector<Store::CacheEntry> new_cache;
          cache_keep(pend->ckey, resp, new_cache);
          task->finish_draw(pd.item_index, pd.key.condition, pend->req, std::move(resp), pend->res);
          breaker_note(pd, pend->res, 0);
          // The transfer is over (retries included): its payload bytes go to the store.
          std::string* sent = pend->body.empty() ? nullptr : &pend->body;
          if (!deliver(make_draw(pd, pend->res, false, sent), std::move(new_cache), false)) stop_loop = true;
        });
      }
      if (multi.active() == 0) break;
      if (abandon.load()) {  // the grace is over: the calls in flight are dropped with `multi`
        abandoned_draws.fetch_add(static_cast<int64_t>(multi.active()));
        break;
      }
      multi.poll(0.1);
    }
  };

  // One committing thread (issue 14 item 5): it writes every draw that arrived since its
  // last commit in one transaction (Store::put_draw_group; the group is sized by what
  // arrived, no timer) and only then counts them (executed, ok, ...). Workers never wait
  // for a commit, only when kMaxPending draws are already waiting. A SIGKILL loses only
  // draws not yet committed (a resume reruns them); a stop (SIGINT, --max-draws) commits
  // every draw that finished before the threads end.
  auto committer = [&] {
    std::vector<Finished> batch;
    std::vector<std::pair<const Draw*, const std::vector<Store::CacheEntry>*>> group;
    std::vector<Status> statuses;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(qmu);
        q_ready.wait(lock, [&] { return !queue.empty() || workers_done; });
        if (queue.empty()) return;  // the workers have ended and everything is committed
        if (!feed)
          q_ready.wait_for(lock, kGroupWindow, [&] { return queue.size() >= group_target || workers_done; });
        batch.swap(queue);
      }
      q_space.notify_all();
      group.clear();
      for (auto& f : batch) group.emplace_back(&f.draw, &f.cache);
      const Status txn =
          options.commit_group ? options.commit_group(group, &statuses) : store.put_draw_group(group, &statuses);
      std::lock_guard<std::mutex> lock(mu);
      for (size_t i = 0; i < batch.size(); ++i) {
        const Status& st = txn.ok() ? statuses[i] : txn;
        if (!st.ok() && st.code() != StatusCode::kAlreadyExists) {
          if (!failed) error = st;
          failed = true;
          continue;
        }
        executed.fetch_add(1);  // counted only after the commit
        count(batch[i].draw, batch[i].from_cache);
      }
      batch.clear();
    }
  };

  std::optional<ProgressLine> progress;
  if (options.progress && !todo.empty())
    progress.emplace("run", "draws", sum.planned, sum.already_done, static_cast<int64_t>(todo.size()), clock, [&] {
      std::lock_guard<std::mutex> lock(mu);
      return ProgressCounts{executed.load(), sum.parse_error, sum.api_error};
    });

  std::thread commit_thread(committer);
  std::vector<std::thread> pool;
  std::atomic<int> running{0};  // worker threads or loops not yet returned
  std::mutex run_mu;
  std::condition_variable run_cv;
  auto ended = [&] {
    std::lock_guard<std::mutex> lock(run_mu);
    running.fetch_sub(1);
    run_cv.notify_all();
  };
  if (loop_path) {
    // One loop per core (at most 2 here: wrk's -t2), the calls in flight split between
    // them; the loops share the plan counter, the limiter, the breaker and the committer.
    const size_t loops = std::max<size_t>(
        1, std::min<size_t>({static_cast<size_t>(options.event_loops), static_cast<size_t>(threads)}));
    running = static_cast<int>(loops);
    for (size_t l = 0; l < loops; ++l)
      pool.emplace_back([&, l] {
        event_loop(static_cast<size_t>(threads) / loops + (l < static_cast<size_t>(threads) % loops));
        ended();
      });
  } else {
    running = threads;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        worker();
        ended();
      });
  }
  // The stop's grace (RunOptions::stop_grace_s): once a signal, the breaker or a failed
  // commit stops the run, the draws in flight have that long to finish (and be committed);
  // then every call still in flight is abandoned and its draw dropped, not stored.
  // Real time, not options.clock (a test's fake clock need not advance).
  std::optional<std::chrono::steady_clock::time_point> stop_at;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(run_mu);
      if (run_cv.wait_for(lock, std::chrono::milliseconds(20), [&] { return running.load() == 0; })) break;
    }
    if (abandon.load() || !hard_stop()) continue;
    const auto now = std::chrono::steady_clock::now();
    if (!stop_at) stop_at = now;
    if (std::chrono::duration<double>(now - *stop_at).count() >= options.stop_grace_s) abandon = true;
  }
  for (auto& t : pool) t.join();
  {
    std::lock_guard<std::mutex> lock(qmu);
    workers_done = true;
  }
  q_ready.notify_all();
  commit_thread.join();
  if (progress) progress->stop();

  if (failed) return error;
  sum.executed = executed.load();
  if (feed) {
    sum.planned = sum.executed;
    sum.interrupted = !feed_done;
  } else {
    sum.interrupted = sum.already_done + sum.executed < sum.planned;
  }
  sum.abandoned = abandoned_draws.load();
  sum.event_loop = loop_path;
  if (refresh_rec) {  // how many planned draws still hold answers from before the refresh
    NF_ASSIGN_OR_RETURN(auto now_refreshed, store.refreshed_keys(refresh_rec->id));
    int64_t left = 0;
    for (const auto& p : plan)
      if (!now_refreshed.count(p.key.to_string())) ++left;
    sum.refresh->planned = static_cast<int64_t>(plan.size());
    sum.refresh->left = left;
    if (left == 0) {
      sum.refresh->finished = true;
      refresh_rec->finished_at = clock.unix_time_s();
      NF_RETURN_IF_ERROR(write_refresh_record(store, *refresh_rec));
    }
  }
  sum.seconds = clock.now_s() - t0;
  return sum;
}

Result<nlohmann::json> run_noise_control(const Study& study) {
  const NoiseControlSpec& nc = study.noise_control;
  NF_ASSIGN_OR_RETURN(auto task, make_task(study));
  NF_RETURN_IF_ERROR(task->prepare({"none"}, study.seed));
  const size_t n_items = std::min(task->items().size(), static_cast<size_t>(std::max(1, nc.items)));
  Config greedy = expand_configs(study.axes).front();
  greedy.temperature = 0.0;
  nlohmann::json out = {{"requests", nc.requests}, {"items", n_items}, {"concurrency", nc.concurrency},
                        {"subjects", nlohmann::json::array()}};
  for (const auto& subject : study.subjects) {
    NF_ASSIGN_OR_RETURN(auto backend, make_backend(subject));
    const nlohmann::json extra = effective_extra_body(subject);
    std::atomic<int64_t> api_errors{0};
    // One greedy draw's reply text ("" and counted when the call failed).
    auto once = [&](size_t item) -> std::optional<std::string> {
      const DrawKey key{subject.name, task->items()[item].id, "none", greedy.id, 0};
      DrawContext ctx{key, greedy, subject.model, request_seed(greedy, study.seed, key), extra};
      std::optional<std::string> text;
      const CallFn call = [&](const ChatRequest& req) {
        ChatResponse r = backend->complete(req);
        if (r.kind == ResponseKind::kOk) text = r.content;
        else api_errors.fetch_add(1);
        return r;
      };
      (void)task->run(item, "none", ctx, call);
      return text;
    };
    std::vector<std::set<std::string>> serial(n_items), concurrent(n_items);
    for (size_t i = 0; i < n_items; ++i)
      for (int k = 0; k < nc.requests; ++k)
        if (auto t = once(i)) serial[i].insert(*t);
    std::mutex mu;
    std::atomic<size_t> next{0};
    const size_t total = n_items * static_cast<size_t>(nc.requests);
    std::vector<std::thread> pool;
    for (int t = 0; t < std::max(1, nc.concurrency); ++t) {
      pool.emplace_back([&] {
        for (size_t j = next.fetch_add(1); j < total; j = next.fetch_add(1)) {
          const size_t item = j % n_items;  // interleaved: every item is under load at once
          if (auto text = once(item)) {
            std::lock_guard<std::mutex> lock(mu);
            concurrent[item].insert(*text);
          }
        }
      });
    }
    for (auto& t : pool) t.join();
    nlohmann::json row = {{"subject", subject.name}, {"cells", nlohmann::json::array()}};
    size_t smax = 0, cmax = 0, snd = 0, cnd = 0;
    for (size_t i = 0; i < n_items; ++i) {
      smax = std::max(smax, serial[i].size());
      cmax = std::max(cmax, concurrent[i].size());
      snd += serial[i].size() > 1;
      cnd += concurrent[i].size() > 1;
      row["cells"].push_back({{"item", task->items()[i].id},
                              {"serial_distinct", serial[i].size()},
                              {"concurrent_distinct", concurrent[i].size()}});
    }
    row["serial_distinct_max"] = smax;
    row["concurrent_distinct_max"] = cmax;
    row["serial_nondeterministic_items"] = snd;
    row["concurrent_nondeterministic_items"] = cnd;
    row["api_errors"] = api_errors.load();
    out["subjects"].push_back(std::move(row));
  }
  return out;
}

}  // namespace nf
