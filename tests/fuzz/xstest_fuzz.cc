// libFuzzer harness for the XSTest prompt reader (data/xstest.h) and the CSV reader under it
// (util/csv.h): arbitrary bytes must give items or an InvalidArgument naming the file, never
// a crash or a hang; every item has a non-empty id and prompt and a safe/unsafe label. Not
// built by CMake. Build and run from the repository root (seed corpus: the real prompts):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc tests/fuzz/xstest_fuzz.cc src/data/xstest.cc src/util/*.cc -lfmt -lcrypto -o /tmp/xstest_fuzz && mkdir -p /tmp/xstest_corpus && cp $NOISEFLOOR_DATA/xstest/xstest_prompts.csv /tmp/xstest_corpus/ && /tmp/xstest_fuzz -max_total_time=60 /tmp/xstest_corpus
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "data/xstest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = "/tmp/xstest_fuzz_" + std::to_string(getpid()) + ".csv";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  auto items = nf::read_xstest_prompts(path);
  if (!items.ok()) {
    if (items.status().message().find(path) == std::string::npos) std::abort();  // errors name the file
    return 0;
  }
  for (const auto& it : *items) {
    if (it.id.empty() || it.messages.size() != 1 || it.messages[0].content.empty()) std::abort();
    const auto& label = it.meta["label"];
    if (label != "safe" && label != "unsafe") std::abort();
  }
  return 0;
}
