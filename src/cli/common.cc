#include "cli/common.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

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
