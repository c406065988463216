// libFuzzer harness for answer extraction and question-sentence splitting: arbitrary bytes
// must neither crash nor return anything but one valid upper-case letter. Not built by
// CMake. Build and run from the repository root:
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc tests/fuzz/extract_choice_fuzz.cc src/task/mcq.cc src/perturb/mcq_conditions.cc src/core/types.cc src/util/*.cc -lfmt -lcrypto -o /tmp/extract_choice_fuzz && /tmp/extract_choice_fuzz -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "perturb/mcq_conditions.h"
#include "task/mcq.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks how many letters are valid (1..10: A..J).
  const size_t n_letters = 1 + data[0] % 10;
  std::vector<std::string> letters;
  for (size_t i = 0; i < n_letters; ++i) letters.emplace_back(1, static_cast<char>('A' + i));
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  const auto choice = nf::extract_choice(text, letters);
  if (choice && (choice->size() != 1 || (*choice)[0] < 'A' || (*choice)[0] >= static_cast<char>('A' + n_letters))) {
    std::abort();
  }
  // A statement that lists two different options never yields one (issue 13 item 2),
  // whatever ASCII text without a tag or \boxed (rules 1-2 outrank statements) precedes it.
  bool plain = true;
  for (const char ch : text) plain = plain && static_cast<unsigned char>(ch) < 0x80 && ch != '<' && ch != '\\';
  if (n_letters >= 2 && plain) {
    const std::string listed = std::string(text) + "\nANSWER: A, B.";
    if (nf::extract_choice(listed, letters).has_value()) std::abort();
  }
  const std::string q = nf::question_sentence(text);
  if (q.size() > text.size()) std::abort();
  return 0;
}
