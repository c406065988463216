// HTTP client throughput (issue 6 "Must show"): noisefloor's OpenAI-compatible client
// against a zero-latency serve-sim in a child process, then a Python httpx asyncio client
// (bench/http_bench_httpx.py, Debian's python3-httpx) against the same server at the same
// concurrency. Reports draws/s for both and noisefloor's CPU time per draw (getrusage of
// this process, which runs only the client: the server is a separate process).
//
//   build-release/bench/http_bench [--draws 20000] [--concurrency 16]
//       [--python /usr/bin/python3] [--script bench/http_bench_httpx.py]
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/openai.h"
#include "sim/sim_server.h"

namespace {

double user_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec);
}

double sys_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_stime.tv_usec);
}

double cpu_seconds() { return user_seconds() + sys_seconds(); }

// A short MCQ prompt like the ones a study sends (varied per draw by the seed).
nf::ChatRequest request_for(int64_t i) {
  nf::ChatRequest r;
  r.model = "sim-mcq-1";
  r.messages = {{"system", "Answer with the letter of the single best option."},
                {"user",
                 "A 45-year-old man has crushing chest pain radiating to the left arm. What is the next step?\n"
                 "A. Aspirin and an ECG\nB. Discharge home\nC. Oral antibiotics\nD. Abdominal ultrasound\nAnswer:"}};
  r.temperature = 0.7;
  r.seed = i;
  r.max_tokens = 16;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t draws = 20000;
  int concurrency = 16;
  std::string python = "/usr/bin/python3";
  std::string script = "bench/http_bench_httpx.py";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--draws") draws = std::atoll(argv[i + 1]);
    else if (a == "--concurrency") concurrency = std::atoi(argv[i + 1]);
    else if (a == "--python") python = argv[i + 1];
    else if (a == "--script") script = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }

  // The server runs in a forked child (before any thread exists here), so this process's
  // rusage is the client's alone.
  int fds[2];
  if (pipe(fds) != 0) return 1;
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    auto server = nf::SimServer::start(nf::SimParams{}, 0);
    if (!server.ok()) _exit(1);
    const int port = (*server)->port();
    if (write(fds[1], &port, sizeof port) != sizeof port) _exit(1);
    close(fds[1]);
    pause();
    _exit(0);
  }
  close(fds[1]);
  int port = 0;
  if (read(fds[0], &port, sizeof port) != sizeof port) {
    std::fprintf(stderr, "serve-sim child failed to start\n");
    return 1;
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v1";

  // Warm-up (connections, allocator), not measured.
  {
    nf::OpenAiOptions o;
    o.base_url = url;
    nf::OpenAiBackend warm(o);
    for (int i = 0; i < 200; ++i) (void)warm.complete(request_for(-1 - i));
  }

  nf::OpenAiOptions o;
  o.base_url = url;
  nf::OpenAiBackend client(o);
  std::atomic<int64_t> next{0}, failed{0};
  const double cpu0 = cpu_seconds();
  const double user0 = user_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < concurrency; ++t) {
    pool.emplace_back([&] {
      for (int64_t i = next.fetch_add(1); i < draws; i = next.fetch_add(1)) {
        const nf::ChatResponse r = client.complete(request_for(i));
        if (r.kind != nf::ResponseKind::kOk || r.content.empty()) failed.fetch_add(1);
      }
    });
  }
  for (auto& t : pool) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  const double user = user_seconds() - user0;
  const double nf_rate = static_cast<double>(draws) / wall;
  const double nf_us = 1e6 * cpu / static_cast<double>(draws);

  const std::string cmd = python + " " + script + " " + url + " " + std::to_string(draws) + " " +
                          std::to_string(concurrency);
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  if (p) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  kill(child, SIGTERM);
  waitpid(child, nullptr, 0);

  std::printf("HTTP client, %lld draws, concurrency %d, zero-latency serve-sim (separate process)\n",
              static_cast<long long>(draws), concurrency);
  std::printf("noisefloor: %.0f draws/s, %.1f us CPU per draw (client process; %.1f user + %.1f system), %lld failed\n",
              nf_rate, nf_us, 1e6 * user / static_cast<double>(draws), 1e6 * (cpu - user) / static_cast<double>(draws),
              static_cast<long long>(failed.load()));
  const nlohmann::json py = nlohmann::json::parse(out, nullptr, false);
  if (py.is_discarded() || !py.contains("draws_per_s")) {
    std::printf("python httpx client: no result (%s)\n", out.c_str());
    return 1;
  }
  const double py_rate = py["draws_per_s"].get<double>();
  std::printf("python httpx %s asyncio: %.0f draws/s, %.1f us CPU per draw, %lld failed\n",
              py.value("httpx", "?").c_str(), py_rate, py.value("cpu_us_per_draw", 0.0),
              static_cast<long long>(py.value("failed", int64_t{0})));
  std::printf("ratio noisefloor / httpx: %.2fx (aim >= 3x); noisefloor CPU per draw %.1f us (aim < 20 us)\n",
              nf_rate / py_rate, nf_us);
  return failed.load() == 0 ? 0 : 1;
}
