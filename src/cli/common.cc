#include "cli/common.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "store/store.h"
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

Status require_results(Store& store) {
  NF_ASSIGN_OR_RETURN(int64_t draws, store.draw_count());
  if (draws > 0) return Status::Ok();
  NF_ASSIGN_OR_RETURN(int64_t judgments, store.judgment_count());
  if (judgments > 0) return Status::Ok();
  NF_ASSIGN_OR_RETURN(auto labels, store.human_labels());
  if (!labels.empty()) return Status::Ok();
  NF_ASSIGN_OR_RETURN(auto items, store.items());
  auto study = store.get_study();
  if (!study.ok() && study.status().code() != StatusCode::kNotFound) return study.status();
  const bool imported = study.ok() && study->spec.is_object() && study->spec.value("imported", false);
  std::string held;
  if (study.ok())
    held = fmt::format("only the record of study '{}'{} and {} item{}", study->name,
                       imported ? " (an import)" : "", items.size(),
                       items.size() == 1 ? "" : "s");
  else if (!items.empty())
    held = fmt::format("only {} item{}", items.size(), items.size() == 1 ? "" : "s");
  else
    held = "nothing at all: it is empty";
  return FailedPrecondition(fmt::format(
      "store {} holds no draws, no judge votes and no human labels: nothing to analyze. It holds {}{}. Run the "
      "study's draws (`noisefloor run STUDY`) or import draws, votes or labels (`noisefloor import`) first",
      store.path(), held,
      study.ok() && !imported ? " (a run that stopped before its first draw was stored?)"
                                                           : ""));
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
