// Helpers shared by the CLI commands: error printing, signal handling.
#pragma once

#include <atomic>
#include <string>

#include "util/status.h"

namespace nf::cli {

/// Prints "noisefloor <command>: <message>" to stderr and returns the exit code for `s`.
int fail(const std::string& command, const Status& s);

/// Installs SIGINT/SIGTERM handlers that set the returned flag (first signal: finish the
/// draws in flight, commit, stop; a second signal exits at once).
const std::atomic<bool>& install_stop_handler();

}  // namespace nf::cli
