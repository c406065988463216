#include "sim/sim_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <ctime>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <httplib.h>

#include "util/hash.h"
#include "util/json_depth.h"
#include "util/rng.h"
#include "util/strings.h"

namespace nf {

namespace {

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void reply_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(dump({{"error", {{"message", message}, {"type", "invalid_request_error"}, {"code", nullptr}}}}),
                  "application/json");
}

constexpr size_t kServerThreads = 288;

void sleep_ms(double ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

}  // namespace

const std::vector<std::string>& FaultOptions::known_kinds() {
  static const std::vector<std::string> kinds{"429", "500", "reset", "truncate", "slow"};
  return kinds;
}

Result<std::vector<std::string>> FaultOptions::parse_kinds(const std::string& csv) {
  std::vector<std::string> out;
  std::stringstream in(csv);
  std::string k;
  while (std::getline(in, k, ',')) {
    k.erase(0, k.find_first_not_of(" \t"));
    k.erase(k.find_last_not_of(" \t") + 1);
    if (k.empty()) continue;
    const auto& known = known_kinds();
    if (std::find(known.begin(), known.end(), k) == known.end())
      return InvalidArgument(fmt::format("--fail-kinds: unknown fault kind '{}' (known: 429, 500, reset, truncate, slow){}",
                                         k, did_you_mean(k, known)));
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  }
  return out;
}

Status FaultOptions::validate() const {
  if (!(latency_ms >= 0)) return InvalidArgument(fmt::format("--latency-ms: must be >= 0, got {}", latency_ms));
  if (!(fail_rate >= 0 && fail_rate <= 1))
    return InvalidArgument(fmt::format("--fail-rate: must be in [0, 1], got {}", fail_rate));
  if (fail_rate > 0 && kinds.empty()) return InvalidArgument("--fail-kinds: at least one kind is needed when --fail-rate > 0");
  if (!(slow_ms >= 0)) return InvalidArgument(fmt::format("slow_ms: must be >= 0, got {}", slow_ms));
  return Status::Ok();
}

nlohmann::json SimServerCounters::to_json() const {
  return {{"chat_requests", chat_requests},
          {"faults",
           {{"429", faults_429}, {"500", faults_500}, {"reset", faults_reset}, {"truncate", faults_truncate},
            {"slow", faults_slow}}},
          {"throttled_429", throttled_429},
          {"total_429", total_429()}};
}

struct SimServer::Impl {
  Impl(SimParams params, FaultOptions f, const SimModels& served) : sim(params), faults(std::move(f)) {
    for (const auto& [name, p] : served) models.emplace(name, std::make_unique<SimBackend>(p));
    const std::string& ra = faults.retry_after;
    if (!ra.empty() && ra.size() < 7 &&
        std::all_of(ra.begin(), ra.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
      throttle_s = std::stod(ra);
  }
  SimBackend sim;
  std::map<std::string, std::unique_ptr<SimBackend>> models;  // empty: `sim` answers every name
  FaultOptions faults;
  double throttle_s = 0.0;  // window opened by a 429 fault (0 = none)
  mutable std::mutex counters_mu;
  SimServerCounters counts;
  std::chrono::steady_clock::time_point throttled_until{};
  std::mutex seen_mu;
  std::unordered_map<uint64_t, uint64_t> seen;  // request-body hash -> times seen
  httplib::Server server;
  std::thread thread;
  int port = 0;
  bool stopped = false;

  SimServerCounters counters_snapshot() const {
    std::lock_guard<std::mutex> lock(counters_mu);
    return counts;
  }

  // The fault for this request ("" = none), drawn from (seed, body hash, times seen).
  std::string draw_fault(const std::string& body) {
    if (faults.fail_rate <= 0 || faults.kinds.empty()) return "";
    const uint64_t h = fnv1a64(body);
    uint64_t n;
    {
      std::lock_guard<std::mutex> lock(seen_mu);
      n = seen[h]++;
    }
    Rng rng = Rng::stream(faults.seed, {h, n});
    if (rng.uniform() >= faults.fail_rate) return "";
    return faults.kinds[rng.uniform_int(faults.kinds.size())];
  }

  // Inside a throttle window: the whole seconds left (>= 1); otherwise 0.
  int64_t throttled_for_s() {
    std::lock_guard<std::mutex> lock(counters_mu);
    const auto now = std::chrono::steady_clock::now();
    if (now >= throttled_until) return 0;
    return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(
                                    std::chrono::duration<double>(throttled_until - now).count())));
  }

  void count(const std::string& fault) {
    std::lock_guard<std::mutex> lock(counters_mu);
    ++counts.chat_requests;
    if (fault == "429") {
      ++counts.faults_429;
      if (throttle_s > 0)
        throttled_until = std::max(throttled_until, std::chrono::steady_clock::now() +
                                                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                            std::chrono::duration<double>(throttle_s)));
    } else if (fault == "500") {
      ++counts.faults_500;
    } else if (fault == "reset") {
      ++counts.faults_reset;
    } else if (fault == "truncate") {
      ++counts.faults_truncate;
    } else if (fault == "slow") {
      ++counts.faults_slow;
    }
  }

  void chat(const httplib::Request& req, httplib::Response& res) {
    sleep_ms(faults.latency_ms);
    if (const int64_t left = throttled_for_s(); left > 0) {
      {
        std::lock_guard<std::mutex> lock(counters_mu);
        ++counts.chat_requests;
        ++counts.throttled_429;
      }
      res.status = 429;
      res.set_header("Retry-After", std::to_string(left));
      res.set_content(dump({{"error", {{"message", "rate limit exceeded (throttled after an injected 429)"},
                                       {"type", "rate_limit_error"}}}}),
                      "application/json");
      return;
    }
    const std::string fault = draw_fault(req.body);
    count(fault);
    if (fault == "429") {
      res.status = 429;
      res.set_header("Retry-After", faults.retry_after);
      res.set_content(dump({{"error", {{"message", "rate limit exceeded (injected fault)"}, {"type", "rate_limit_error"}}}}),
                      "application/json");
      return;
    }
    if (fault == "500") {
      res.status = 500;
      res.set_content(dump({{"error", {{"message", "internal server error (injected fault)"}, {"type", "server_error"}}}}),
                      "application/json");
      return;
    }
    if (fault == "slow") sleep_ms(faults.slow_ms);
    if (Status deep = check_json_depth(req.body, "request body"); !deep.ok()) {  // a hostile client
      reply_error(res, 400, deep.message());
      return;
    }
    const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    if (body.is_discarded()) {
      reply_error(res, 400, "malformed JSON body");
      return;
    }
    Result<ChatRequest> request = ChatRequest::from_openai_json(body);
    if (!request.ok()) {
      reply_error(res, 400, request.status().message());
      return;
    }
    SimBackend* backend = &sim;
    if (!models.empty()) {
      const auto m = models.find(request->model);
      if (m == models.end()) {
        std::string names;
        for (const auto& [name, unused] : models) names += (names.empty() ? "" : ", ") + name;
        res.status = 404;
        res.set_content(dump({{"error",
                               {{"message", fmt::format("The model `{}` does not exist (this serve-sim serves: {}).",
                                                        request->model, names)},
                                {"type", "NotFoundError"},
                                {"code", 404}}}}),
                        "application/json");
        return;
      }
      backend = m->second.get();
    }
    ChatResponse r = backend->complete(*request);
    if (r.kind != ResponseKind::kOk) {
      reply_error(res, 400, r.error);
      return;
    }
    // The sim's own body, with the wall-clock creation time a real server would send.
    nlohmann::json out = nlohmann::json::parse(r.raw_body, nullptr, false);
    if (out.is_discarded()) {
      reply_error(res, 500, "internal error: simulator body is not JSON");
      return;
    }
    out["created"] = static_cast<int64_t>(std::time(nullptr));
    // choices[0].logprobs come from SimBackend::complete (sim_mcq_logprobs in sim/sim.h).
    res.status = 200;
    std::string text = dump(out);
    if (fault == "truncate") text.resize(text.size() / 2);
    if (fault == "reset") {
      // Promise the whole body, send half, then fail: httplib closes the connection.
      auto shared = std::make_shared<std::string>(std::move(text));
      res.set_content_provider(shared->size(), "application/json",
                               [shared](size_t offset, size_t, httplib::DataSink& sink) {
                                 if (offset == 0) sink.write(shared->data(), shared->size() / 2);
                                 return false;
                               });
      return;
    }
    res.set_content(text, "application/json");
  }
};

SimServer::SimServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SimServer::~SimServer() { stop(); }

Result<std::unique_ptr<SimServer>> SimServer::start(SimParams params, int port) {
  return start(params, port, FaultOptions{0.0, 0.0, {}, "1", 0.0, 1});
}

Result<std::unique_ptr<SimServer>> SimServer::start(SimParams params, int port, FaultOptions faults) {
  return start(std::move(params), port, std::move(faults), {});
}

Result<std::unique_ptr<SimServer>> SimServer::start(SimParams params, int port, FaultOptions faults, SimModels served) {
  if (port < 0 || port > 65535) return InvalidArgument("serve-sim: port must be in [0, 65535]");
  NF_RETURN_IF_ERROR(faults.validate());
  auto impl = std::make_unique<Impl>(params, std::move(faults), served);
  Impl* p = impl.get();
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would let a second
  // server silently share a port that is already in use.
  p->server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
  });
  // httplib serves each keep-alive connection on one pool thread for the connection's
  // life, so the pool must exceed the clients' concurrency (the runner allows 256 per
  // subject) or connections queue behind idle ones. httplib takes ownership of the
  // returned queue (its API requires a raw pointer).
  p->server.new_task_queue = [] { return new httplib::ThreadPool(kServerThreads); };
  p->server.set_keep_alive_max_count(100000);
  // Without TCP_NODELAY a reply written as headers + body waits for the client's delayed
  // ACK (~40 ms per request on Linux loopback).
  p->server.set_tcp_nodelay(true);
  auto chat = [p](const httplib::Request& req, httplib::Response& res) { p->chat(req, res); };
  p->server.Post("/v1/chat/completions", chat);
  // Like a real OpenAI-compatible server (vLLM, llama.cpp, the OpenAI API), the API lives
  // under /v1: a base URL without it is a client mistake, answered 404 with the fix.
  auto without_v1 = [](const httplib::Request& req, httplib::Response& res) {
    reply_error(res, 404,
                "no route " + req.path + ": the base URL must end with /v1 (e.g. http://127.0.0.1:8089/v1), as on "
                "a real OpenAI-compatible server");
  };
  p->server.Post("/chat/completions", without_v1);
  auto models = [p](const httplib::Request&, httplib::Response& res) {
    nlohmann::json data = nlohmann::json::array();
    if (p->models.empty()) data.push_back("sim");
    for (const auto& [name, unused] : p->models) data.push_back(name);
    for (auto& d : data) d = {{"id", d}, {"object", "model"}, {"created", 0}, {"owned_by", "noisefloor"}};
    res.set_content(dump({{"object", "list"}, {"data", std::move(data)}}), "application/json");
  };
  p->server.Get("/v1/models", models);
  p->server.Get("/models", without_v1);
  p->server.Get("/v1/sim/stats", [p](const httplib::Request&, httplib::Response& res) {
    res.set_content(dump(p->counters_snapshot().to_json()), "application/json");
  });
  p->server.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok", "text/plain");
  });
  p->server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    reply_error(res, 500, "internal error");
  });
  if (port == 0) {
    p->port = p->server.bind_to_any_port("127.0.0.1");
    if (p->port < 0) return Unavailable("serve-sim: cannot bind 127.0.0.1 to any free port");
  } else {
    if (!p->server.bind_to_port("127.0.0.1", port)) {
      return Unavailable("serve-sim: cannot bind 127.0.0.1:" + std::to_string(port) +
                         " (is the port already in use?)");
    }
    p->port = port;
  }
  p->thread = std::thread([p] { p->server.listen_after_bind(); });
  // httplib's stop() is a no-op until the accept loop runs; wait for it so that stop()
  // right after start() cannot hang.
  while (!p->server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return std::make_unique<SimServer>(std::move(impl));
}

SimServerCounters SimServer::counters() const { return impl_->counters_snapshot(); }

int SimServer::port() const { return impl_->port; }

std::string SimServer::base_url() const { return "http://127.0.0.1:" + std::to_string(impl_->port) + "/v1"; }

void SimServer::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace nf
