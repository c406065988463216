// Where the source tree and the noisefloor binary are, for the tests: NF_SOURCE_DIR and
// NF_BINARY (std::string). Force-included into every test source (tests/CMakeLists.txt).
//
// The paths are read at run time from build_paths.cc, the one object of each test binary
// compiled with them as macros, so every other test object is byte-for-byte the same in
// every checkout: a compiler cache (ccache, base_dir) then serves one worktree's test
// objects to another instead of recompiling ~190 of them (they used to differ by a
// -DNF_SOURCE_DIR="/work/<tree>" on every compile line).
#pragma once

#include <string>

// A namespace of its own (not nf::testing): this header is force-included before any test
// code, and an nf::testing declared in every file would hide ::testing (gtest) inside
// namespace nf.

namespace nf_test_paths {

/// The source tree's root (absolute), e.g. /work/main.
const std::string& build_source_dir();
/// The noisefloor binary the tests run (absolute), e.g. /work/main/build/ci/noisefloor.
const std::string& build_binary();

}  // namespace nf_test_paths

#define NF_SOURCE_DIR (::nf_test_paths::build_source_dir())
#define NF_BINARY (::nf_test_paths::build_binary())
