// Helpers shared by the CLI commands: error printing, signal handling.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <string>

#include "util/exit_code.h"
#include "util/status.h"

namespace CLI {
class Validator;
}  // namespace CLI

namespace nf {
class Store;
}  // namespace nf

namespace nf::cli {

/// A CLI11 check for a whole-number option with a readable bound: "--resamples: must be
/// a whole number >= 1, got 0" (CLI11's PositiveNumber prints "not in range 0.000000 to
/// <300 digits>" and its lower bound 0 reads as if 0 were allowed). `lo` is the smallest
/// allowed value; a value that is no whole number, or does not fit in int64, is refused
/// the same way. Usage: app.add_option(...)->check(at_least(1)).
CLI::Validator at_least(long long lo);

/// For a command that reads a store's results (analyze): FailedPrecondition when `store`
/// holds nothing to analyze (no draws, no judgments, no human labels), saying what it does
/// hold (its study record and items, or nothing: e.g. a `run` stopped before its first
/// draw, or `import` of a study record only) and what to do; Ok otherwise. Errors: the
/// store's read errors.
Status require_results(Store& store);

/// Prints "noisefloor <command>: <message>" to stderr and returns the exit code for `s`.
int fail(const std::string& command, const Status& s);

/// Installs SIGINT/SIGTERM handlers that set the returned flag (first signal: finish the
/// draws in flight, commit, stop; a second signal exits at once).
const std::atomic<bool>& install_stop_handler();

/// Serves until SIGINT or SIGTERM (serve-sim, serve-fhir): blocks both signals before
/// `start()` creates any server thread (threads inherit the mask), prints
/// "noisefloor COMMAND listening on BASE_URL" on stdout (tests read that line), waits for a
/// signal, stops the server and returns exit code 0; a failed start prints the error and
/// returns its exit code. `start` returns Result<std::unique_ptr<S>> where S has base_url()
/// and stop().
template <typename Start>
int serve_until_signal(const char* command, const Start& start) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto server = start();
  if (!server.ok()) {
    std::fprintf(stderr, "noisefloor %s: %s\n", command, server.status().message().c_str());
    return static_cast<int>(exit_code_for(server.status()));
  }
  std::printf("noisefloor %s listening on %s\n", command, (*server)->base_url().c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  (*server)->stop();
  return static_cast<int>(ExitCode::kSuccess);
}

}  // namespace nf::cli
