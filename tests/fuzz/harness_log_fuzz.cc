// libFuzzer harness for the harness-log readers (Inspect .eval/.json, lm-eval samples):
// arbitrary bytes must give a log or an InvalidArgument naming the file, never a crash, a
// hang or a draw with a negative replicate. The first byte picks the format. Not built by
// CMake. Build and run from the repository root (seed corpus: the real logs):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc tests/fuzz/harness_log_fuzz.cc src/data/inspect_log.cc src/data/lm_eval_log.cc src/core/types.cc src/util/*.cc -lzip -lfmt -lcrypto -o /tmp/harness_log_fuzz && /tmp/harness_log_fuzz -max_total_time=60 $NOISEFLOOR_DATA/harness-logs
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "data/inspect_log.h"
#include "data/lm_eval_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* kExt[] = {".eval", ".json", ".jsonl"};
  const int kind = data[0] % 3;
  const std::string path = "/tmp/harness_log_fuzz_" + std::to_string(getpid()) +
                           (kind == 2 ? std::string("/samples_t_2024-01-01T00-00-00.000001") : std::string("/log")) +
                           kExt[kind];
  std::system(("mkdir -p " + path.substr(0, path.rfind('/'))).c_str());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  nf::Result<nf::HarnessLog> log = [&]() {
    if (kind == 2) return nf::read_lm_eval_samples(path, {"m", "", "default", ""});
    return nf::read_inspect_log(path, {});
  }();
  if (log.ok()) {
    for (const auto& d : log->draws)
      if (d.replicate < 0 || d.item.empty()) std::abort();
  } else if (log.status().code() != nf::StatusCode::kInvalidArgument) {
    std::abort();
  }
  return 0;
}
