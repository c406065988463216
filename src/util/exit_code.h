// Process exit codes of the noisefloor CLI (documented in README "Exit codes").
#pragma once

#include "util/status.h"

namespace nf {

enum class ExitCode : int {
  kSuccess = 0,             // everything ran; results written
  kProblems = 1,            // the analysis ran and found problems the user asked to fail on
  kUsage = 2,               // bad command line, study file, dataset or other input
  kBackendUnavailable = 3,  // a model backend could not be reached / every draw failed at the API
  kInternal = 4,            // a bug in noisefloor
};

/// Maps a non-OK status to the exit code the CLI returns for it.
inline ExitCode exit_code_for(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk: return ExitCode::kSuccess;
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded: return ExitCode::kBackendUnavailable;
    case StatusCode::kInternal: return ExitCode::kInternal;
    default: return ExitCode::kUsage;
  }
}

}  // namespace nf
