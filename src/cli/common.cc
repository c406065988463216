#include "cli/common.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "util/exit_code.h"

namespace nf::cli {

namespace {
std::atomic<bool> g_stop{false};

void on_signal(int sig) {
  if (g_stop.load()) _exit(128 + sig);
  g_stop.store(true);
  const char msg[] =
      "\nnoisefloor: stopping: the requests in flight get 5 s to finish and be committed (run, audit, worker: then "
      "they are abandoned and a resume runs them); signal again to stop at once\n";
  ssize_t ignored = write(2, msg, sizeof(msg) - 1);
  (void)ignored;
}
}  // namespace

CLI::Validator at_least(long long lo) {
  return CLI::Validator(
      [lo](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || v < lo)
          return fmt::format("must be a whole number >= {}, got '{}'", lo, text);
        return std::string();
      },
      fmt::format("INT>={}", lo));
}

int fail(const std::string& command, const Status& s) {
  std::fprintf(stderr, "noisefloor %s: %s\n", command.c_str(), s.message().c_str());
  return static_cast<int>(exit_code_for(s));
}

const std::atomic<bool>& install_stop_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return g_stop;
}

}  // namespace nf::cli
