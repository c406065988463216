// The real llama.cpp server of ../shared/tools/llama-server/ serving the tiny random model
// on 127.0.0.1, for the tests of the OpenAI-compatible path (slow tier and the answer-token
// test). One start-up, health wait and stop for every such test.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include <httplib.h>

#include "common/test_data.h"

namespace nf::testing {

/// A running llama-server child; stopped (SIGTERM, reaped) by stop() or the destructor.
struct LlamaServer {
  pid_t pid = -1;
  int port = 0;
  std::string log;  // the server's stdout + stderr
  /// The OpenAI-compatible base URL, e.g. "http://127.0.0.1:19012/v1".
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/v1"; }
  void stop() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      waitpid(pid, nullptr, 0);
      pid = -1;
    }
  }
  ~LlamaServer() { stop(); }
};

/// Where the server binary and the tiny model are expected.
inline std::string llama_server_bin() {
  return std::string(NF_SOURCE_DIR) + "/../shared/tools/llama-server/bin/llama-server";
}
inline std::string llama_tiny_model() { return data_dir() + "/models/llama-2-tiny-random.gguf"; }

/// "" when the binary and the model are both present, else a skip message naming what is
/// missing and the README that explains it.
inline std::string llama_server_missing() {
  const std::string bin = llama_server_bin(), model = llama_tiny_model();
  if (std::filesystem::exists(bin) && std::filesystem::exists(model)) return "";
  return "llama-server or the tiny model is not here (" + bin + ", " + model +
         "): see ../shared/tools/llama-server/README.md";
}

/// Starts the server on port `port_base + pid % port_span` with context `ctx` tokens, 2
/// slots and `threads` threads, logging to `log`, and waits up to `wait_s` seconds for
/// GET /health to answer 200. Returns "" when it is up (then `*s` holds it), else the
/// reason with the server's log (the child is killed).
inline std::string start_llama_server(LlamaServer* s, const std::string& log, int port_base, int port_span, int ctx,
                                      int threads = 1, int wait_s = 10) {
  s->port = port_base + static_cast<int>(getpid() % port_span);
  s->log = log;
  const std::string bin = llama_server_bin(), model = llama_tiny_model();
  s->pid = fork();
  if (s->pid < 0) return "fork failed";
  if (s->pid == 0) {
    if (!std::freopen(log.c_str(), "w", stdout) || !std::freopen(log.c_str(), "a", stderr)) _exit(126);
    const std::string p = std::to_string(s->port), c = std::to_string(ctx), t = std::to_string(threads);
    execl(bin.c_str(), bin.c_str(), "-m", model.c_str(), "--alias", "tiny", "--host", "127.0.0.1", "--port", p.c_str(),
          "-c", c.c_str(), "-np", "2", "-t", t.c_str(), "--no-webui", "--offline", static_cast<char*>(nullptr));
    _exit(127);
  }
  httplib::Client health("127.0.0.1", s->port);
  for (int i = 0; i < wait_s * 10; ++i) {
    auto r = health.Get("/health");
    if (r && r->status == 200) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(s->pid, SIGKILL);
  waitpid(s->pid, nullptr, 0);
  s->pid = -1;
  return "llama-server did not come up: " + slurp(log);
}

}  // namespace nf::testing
