// libFuzzer harness for the study-file parser (STYLE.md: "every parser of untrusted text
// is fuzzed"). Not built by CMake. Build and run from the repository root with:
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc tests/fuzz/study_fuzz.cc src/spec/study.cc src/core/types.cc src/util/*.cc -lyaml-cpp -lfmt -lcrypto -o /tmp/study_fuzz && mkdir -p /tmp/study_corpus && cp examples/*.yaml /tmp/study_corpus/ && /tmp/study_fuzz -max_total_time=60 /tmp/study_corpus
//
// (the shipped studies seed the corpus; libFuzzer writes new inputs into that folder, so
// it is a scratch copy, never examples/ itself.) Property checked: parse_study
// never throws, never crashes, and every error is InvalidArgument or NotFound with a
// message that starts with the file name; every success has at least one subject and a
// non-empty name.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "spec/study.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Every ${NAME} is set, to the repository root, so the dataset check can pass.
  nf::Result<nf::Study> r = nf::parse_study(text, "fuzz.yaml", [](const std::string&) -> std::optional<std::string> {
    return std::string(".");
  });
  if (r.ok()) {
    if (r->subjects.empty() || r->name.empty()) std::abort();
    (void)nf::expand_configs(r->axes);
  } else {
    const nf::Status& s = r.status();
    if (s.code() != nf::StatusCode::kInvalidArgument && s.code() != nf::StatusCode::kNotFound) std::abort();
    if (s.message().rfind("fuzz.yaml:", 0) != 0) std::abort();
  }
  return 0;
}
