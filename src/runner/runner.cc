#include "runner/runner.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "backend/openai.h"
#include "backend/sim.h"
#include "data/medqa.h"
#include "task/mcq_task.h"
#include "util/hash.h"

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

std::optional<int64_t> request_seed(const Config& config, int replicate) {
  if (!config.seed) return std::nullopt;
  const uint64_t h = hash_combine(static_cast<uint64_t>(*config.seed), static_cast<uint64_t>(replicate));
  return static_cast<int64_t>(h >> 33);
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
  if (subject.backend == "openai") {
    OpenAiOptions o;
    o.base_url = subject.base_url;
    o.timeout_s = subject.timeout_s;
    if (!subject.api_key_env.empty()) {
      const char* key = std::getenv(subject.api_key_env.c_str());
      if (key == nullptr)
        return InvalidArgument(fmt::format("subject '{}': api_key_env: environment variable {} is not set",
                                           subject.name, subject.api_key_env));
      o.api_key = key;
    }
    return std::unique_ptr<Backend>(std::make_unique<OpenAiBackend>(o));
  }
  return InvalidArgument(fmt::format("subject '{}': unknown backend '{}' (expected sim or openai)", subject.name,
                                     subject.backend));
}

nlohmann::json study_to_json(const Study& s) {
  nlohmann::json j;
  j["name"] = s.name;
  j["seed"] = s.seed;
  j["task"] = s.task;
  j["dataset"] = {{"format", s.dataset.format}, {"path", s.dataset.path}, {"limit", s.dataset.limit}};
  j["subjects"] = nlohmann::json::array();
  for (const auto& sub : s.subjects) {
    j["subjects"].push_back({{"name", sub.name},
                             {"backend", sub.backend},
                             {"model", sub.model},
                             {"base_url", sub.base_url},
                             {"api_key_env", sub.api_key_env},
                             {"sim", sub.sim},
                             {"extra_body", sub.extra_body}});
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

Result<std::unique_ptr<Task>> make_task(const Study& study) {
  if (study.task == "mcq") {
    NF_ASSIGN_OR_RETURN(auto items, read_medqa_jsonl(study.dataset.path, study.dataset.limit, study.dataset.id_field,
                                                     study.dataset.cluster_field));
    return std::unique_ptr<Task>(std::make_unique<McqTask>(std::move(items)));
  }
  return InvalidArgument(fmt::format("task: unknown task '{}' (expected mcq)", study.task));
}

namespace {

nlohmann::json response_to_json(const ChatResponse& r) {
  return {{"kind", static_cast<int>(r.kind)},       {"content", r.content},
          {"finish_reason", r.finish_reason},       {"served_model", r.served_model},
          {"system_fingerprint", r.system_fingerprint}, {"prompt_tokens", r.prompt_tokens},
          {"completion_tokens", r.completion_tokens}, {"latency_ms", r.latency_ms},
          {"http_status", r.http_status},           {"raw_body", r.raw_body}};
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
  return r;
}

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  const int64_t t = static_cast<int64_t>(std::llround(s));
  if (t >= 3600) return fmt::format("{}:{:02}:{:02}", t / 3600, (t / 60) % 60, t % 60);
  return fmt::format("{}:{:02}", t / 60, t % 60);
}

}  // namespace

Result<RunSummary> run_study(const Study& study, Store& store, const RunOptions& options) {
  Clock& clock = options.clock ? *options.clock : real_clock();
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

  StudyRecord rec{study.name, sha256_hex(study.source_text), static_cast<int64_t>(study.seed), study_to_json(study)};
  NF_ASSIGN_OR_RETURN(auto prev_hash, store.put_study(rec));
  if (!prev_hash.empty() && prev_hash != rec.hash && options.progress)
    std::fprintf(stderr, "note: the study file changed since this store was last written; resuming by draw key\n");
  for (const auto& it : items) NF_RETURN_IF_ERROR(store.put_item(it.id, it.cluster, it.data));
  for (size_t s = 0; s < study.subjects.size(); ++s) {
    NF_RETURN_IF_ERROR(store.put_subject(study.subjects[s].name, study_to_json(study)["subjects"][s]));
  }
  for (const auto& c : configs) NF_RETURN_IF_ERROR(store.put_config(c.id, c.to_json()));

  const auto plan = plan_draws(study, items, configs);
  NF_ASSIGN_OR_RETURN(auto done, store.finished_keys());
  std::vector<const PlannedDraw*> todo;
  RunSummary sum;
  sum.planned = static_cast<int64_t>(plan.size());
  for (const auto& p : plan) {
    if (done.count(p.key.to_string())) ++sum.already_done;
    else todo.push_back(&p);
  }

  int threads = options.threads;
  if (threads <= 0) {
    threads = 1;
    for (const auto& s : study.subjects) threads = std::max(threads, s.concurrency);
  }
  threads = std::max(1, std::min<int>(threads, static_cast<int>(todo.size())));

  std::atomic<size_t> next{0};
  std::atomic<int64_t> executed{0};
  std::atomic<bool> failed{false};
  std::mutex mu;  // guards sum counters and `error`
  Status error;
  const double t0 = clock.now_s();

  auto stop_requested = [&] {
    return failed.load() || (options.stop && options.stop->load()) ||
           (options.max_draws >= 0 && executed.load() >= options.max_draws);
  };

  auto worker = [&] {
    while (!stop_requested()) {
      const size_t idx = next.fetch_add(1);
      if (idx >= todo.size()) break;
      if (options.max_draws >= 0 && static_cast<int64_t>(idx) >= options.max_draws) break;
      const PlannedDraw& p = *todo[idx];
      const SubjectSpec& subject = study.subjects[p.subject_index];
      Backend& backend = *backends[p.subject_index];
      DrawContext ctx{p.key, configs[p.config_index], subject.model, request_seed(configs[p.config_index], p.key.replicate),
                      subject.extra_body};
      int call_index = 0;
      int64_t cached_calls = 0;
      const CallFn call = [&](const ChatRequest& req) {
        const nlohmann::json body = req.to_openai_json();
        const std::string ckey = cache_key(backend.identity(), body, p.key) + ":" + std::to_string(call_index++);
        if (options.use_cache) {
          auto hit = store.cache_get(ckey);
          if (hit.ok() && hit->has_value()) {
            ++cached_calls;
            return response_from_json(**hit);
          }
        }
        ChatResponse resp = backend.complete(req);
        if (options.use_cache && resp.kind == ResponseKind::kOk)
          (void)store.cache_put(ckey, response_to_json(resp));  // best effort: the draw is what counts
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

      Status st = store.put_draw(d);
      if (!st.ok() && st.code() != StatusCode::kAlreadyExists) {
        std::lock_guard<std::mutex> lock(mu);
        error = st;
        failed = true;
        break;
      }
      executed.fetch_add(1);  // counted only after the commit
      std::lock_guard<std::mutex> lock(mu);
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
    }
  };

  const bool tty = isatty(fileno(stderr));
  std::atomic<bool> workers_done{false};
  std::thread reporter;
  if (options.progress && !todo.empty()) {
    reporter = std::thread([&] {
      double last_print = -1e9;
      while (true) {
        const bool finished = workers_done.load();
        const double now = clock.now_s();
        if (finished || now - last_print >= (tty ? 0.5 : 5.0)) {
          last_print = now;
          const int64_t n = executed.load();
          const double elapsed = now - t0;
          const double rate = elapsed > 0 ? static_cast<double>(n) / elapsed : 0.0;
          const int64_t total = static_cast<int64_t>(todo.size());
          const double eta = rate > 0 ? static_cast<double>(total - n) / rate : NAN;
          int64_t pe, ae;
          {
            std::lock_guard<std::mutex> lock(mu);
            pe = sum.parse_error;
            ae = sum.api_error;
          }
          std::fprintf(stderr, "%srun: %lld/%lld draws (%.1f%%) | %.1f draws/s | ETA %s | parse_error %lld | api_error %lld%s",
                       tty ? "\r" : "", static_cast<long long>(n + sum.already_done),
                       static_cast<long long>(sum.planned),
                       100.0 * static_cast<double>(n + sum.already_done) / static_cast<double>(sum.planned), rate,
                       format_duration(eta).c_str(), static_cast<long long>(pe), static_cast<long long>(ae),
                       tty ? "   " : "\n");
          std::fflush(stderr);
        }
        if (finished) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (tty) std::fputc('\n', stderr);
    });
  }

  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  workers_done = true;
  if (reporter.joinable()) reporter.join();

  if (failed) return error;
  sum.executed = executed.load();
  sum.interrupted = sum.already_done + sum.executed < sum.planned;
  sum.seconds = clock.now_s() - t0;
  return sum;
}

}  // namespace nf
