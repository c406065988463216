#include "runner/runner.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "backend/anthropic.h"
#include "backend/openai.h"
#include "core/draw_seed.h"
#include "data/bbq.h"
#include "data/chat.h"
#include "data/medqa.h"
#include "data/vignettes.h"
#include "runner/progress.h"
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
  return sha256_hex(backend_identity + "\n" + request_body.dump() + "\n" + key.to_string());
}

Result<std::unique_ptr<Backend>> make_backend(const SubjectSpec& subject) {
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
  auto data = read_file(study.dataset.path);
  card["datasets"] = nlohmann::json::array(
      {{{"path", study.dataset.path}, {"sha256", data.ok() ? nlohmann::json(sha256_hex(*data)) : nlohmann::json(nullptr)}}});
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

  std::vector<std::unique_ptr<Backend>> backends;
  for (const auto& s : study.subjects) {
    NF_ASSIGN_OR_RETURN(auto b, make_backend(s));
    backends.push_back(std::move(b));
  }
  // Validates every (item, condition) before any call is made.
  NF_RETURN_IF_ERROR(task->prepare(study.conditions, study.seed));

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
  for (const auto& p : plan) {
    if (feed) break;
    if (options.keys && !wanted.count(p.key.to_string())) continue;
    if (!options.refresh && done.count(p.key.to_string())) ++sum.already_done;
    else todo.push_back(&p);
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
  std::mutex qmu;  // guards queue and workers_done
  std::condition_variable q_ready, q_space;
  std::vector<Finished> queue;
  bool workers_done = false;

  auto stop_requested = [&] {
    return failed.load() || (options.stop && options.stop->load()) ||
           (options.max_draws >= 0 && executed.load() >= options.max_draws);
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

  auto worker = [&] {
    while (!stop_requested()) {
      const PlannedDraw* pp = nullptr;
      if (feed) {
        pp = take();
        if (pp == nullptr) break;
      } else {
        const size_t idx = next.fetch_add(1);
        if (idx >= todo.size()) break;
        if (options.max_draws >= 0 && static_cast<int64_t>(idx) >= options.max_draws) break;
        pp = todo[idx];
      }
      const PlannedDraw& p = *pp;
      const SubjectSpec& subject = study.subjects[p.subject_index];
      Backend& backend = *backends[p.subject_index];
      DrawContext ctx{p.key, configs[p.config_index], subject.model,
                      request_seed(configs[p.config_index], study.seed, p.key), extra_bodies[p.subject_index]};
      int call_index = 0;
      int64_t cached_calls = 0;
      std::vector<Store::CacheEntry> new_cache;  // committed with the draw (one transaction)
      const CallFn call = [&](const ChatRequest& req) {
        // The key (a SHA-256 over the dumped request) only when the cache is read or written.
        std::string ckey;
        if (options.use_cache)
          ckey = cache_key(backend.identity(), req.to_openai_json(), p.key) + ":" + std::to_string(call_index);
        ++call_index;
        if (use_cache) {
          auto hit = store.cache_get(ckey);
          if (hit.ok() && hit->has_value()) {
            ++cached_calls;
            return response_from_json(**hit);
          }
        }
        ChatResponse resp = backend.complete(req);
        if (options.use_cache && resp.kind == ResponseKind::kOk) {  // --refresh rewrites the cache
          if (options.refresh)
            (void)store.cache_put(ckey, response_to_json(resp));  // best effort: the draw is what counts
          else
            new_cache.push_back({ckey, response_to_json(resp)});
        }
        return resp;
      };
      TaskDrawResult res = task->run(p.item_index, p.key.condition, ctx, call);
      const bool from_cache = res.calls > 0 && cached_calls == res.calls;

      Draw d;
      d.key = p.key;
      d.cluster = items[p.item_index].cluster;
      d.request = res.request;
      d.extra = {{"condition", res.detail}, {"backend", backend.identity()}, {"calls", res.calls}};
      if (res.calls > 1) d.extra["transcript"] = res.transcript;
      // Provenance (issue 6 item 8): what was actually sent and what the server said.
      if (!res.response.headers.empty()) d.extra["headers"] = res.response.headers;
      if (res.request.is_object()) {
        nlohmann::json sent = nlohmann::json::object();
        for (const char* k : {"temperature", "top_p", "seed", "max_tokens", "logprobs", "top_logprobs"})
          if (res.request.contains(k)) sent[k] = res.request[k];
        d.extra["decoding_sent"] = sent;
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
      const ChatResponse& resp = res.response;
      d.status = res.status;
      d.outcomes = res.outcomes;
      d.error = res.error;
      d.raw_response = resp.raw_body;
      d.content = resp.content;
      d.latency_ms = resp.latency_ms;
      d.prompt_tokens = resp.prompt_tokens;
      d.completion_tokens = resp.completion_tokens;
      d.finish_reason = resp.finish_reason;
      d.served_model = resp.served_model;
      d.system_fingerprint = resp.system_fingerprint;
      d.cached = from_cache;
      d.attempts = resp.attempts;

      if (options.refresh || options.commit) {  // one transaction per draw, counted after it
        // (--refresh replaces; a worker's commit hook also marks its planned draw done)
        Status st = options.commit ? options.commit(d, new_cache) : store.replace_draw(d);
        if (!st.ok() && st.code() != StatusCode::kAlreadyExists) {
          std::lock_guard<std::mutex> lock(mu);
          error = st;
          failed = true;
          break;
        }
        executed.fetch_add(1);
        std::lock_guard<std::mutex> lock(mu);
        count(d, from_cache);
        continue;
      }
      // Hand the draw to the committer and go on with the next call; it is counted only
      // once the transaction holding it has committed.
      std::unique_lock<std::mutex> lock(qmu);
      q_space.wait(lock, [&] { return queue.size() < max_pending; });
      queue.push_back(Finished{std::move(d), std::move(new_cache), from_cache});
      lock.unlock();
      q_ready.notify_one();
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
        batch.swap(queue);
      }
      q_space.notify_all();
      group.clear();
      for (auto& f : batch) group.emplace_back(&f.draw, &f.cache);
      const Status txn = store.put_draw_group(group, &statuses);
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
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
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
