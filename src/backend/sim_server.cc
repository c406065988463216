#include "backend/sim_server.h"

#include <sys/socket.h>

#include <chrono>
#include <ctime>
#include <thread>

#include <httplib.h>

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

}  // namespace

struct SimServer::Impl {
  explicit Impl(SimParams params) : sim(params) {}
  SimBackend sim;
  httplib::Server server;
  std::thread thread;
  int port = 0;
  bool stopped = false;

  void chat(const httplib::Request& req, httplib::Response& res) {
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
    ChatResponse r = sim.complete(*request);
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
    res.status = 200;
    res.set_content(dump(out), "application/json");
  }
};

SimServer::SimServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SimServer::~SimServer() { stop(); }

Result<std::unique_ptr<SimServer>> SimServer::start(SimParams params, int port) {
  if (port < 0 || port > 65535) return InvalidArgument("serve-sim: port must be in [0, 65535]");
  auto impl = std::make_unique<Impl>(params);
  Impl* p = impl.get();
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would let a second
  // server silently share a port that is already in use.
  p->server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  auto chat = [p](const httplib::Request& req, httplib::Response& res) { p->chat(req, res); };
  p->server.Post("/v1/chat/completions", chat);
  p->server.Post("/chat/completions", chat);
  auto models = [](const httplib::Request&, httplib::Response& res) {
    res.set_content(dump({{"object", "list"},
                          {"data", nlohmann::json::array({{{"id", "sim"},
                                                           {"object", "model"},
                                                           {"created", 0},
                                                           {"owned_by", "noisefloor"}}})}}),
                    "application/json");
  };
  p->server.Get("/v1/models", models);
  p->server.Get("/models", models);
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

int SimServer::port() const { return impl_->port; }

std::string SimServer::base_url() const { return "http://127.0.0.1:" + std::to_string(impl_->port) + "/v1"; }

void SimServer::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace nf
