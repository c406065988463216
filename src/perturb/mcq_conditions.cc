// MCQ conditions of seed 004 §2.4 (see mcq_conditions.h for the contract).
#include "perturb/mcq_conditions.h"

#include "core/task_kinds.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "util/hash.h"
#include "util/rng.h"
#include "util/strings.h"

namespace nf {

namespace {

constexpr size_t kMaxOptions = 26;  // letters A..Z

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_closer(char c) { return c == '"' || c == '\'' || c == ')' || c == ']'; }

constexpr std::string_view kRightDoubleQuote = "\xE2\x80\x9D";  // U+201D
constexpr std::string_view kRightSingleQuote = "\xE2\x80\x99";  // U+2019
constexpr std::string_view kLeftDoubleQuote = "\xE2\x80\x9C";   // U+201C

// Length of the closing quote or bracket at s[j] (ASCII or a UTF-8 right quote), or 0.
size_t closer_len(std::string_view s, size_t j) {
  if (is_closer(s[j])) return 1;
  const std::string_view rest = s.substr(j, 3);
  if (rest == kRightDoubleQuote || rest == kRightSingleQuote) return 3;
  return 0;
}

// True if the word ending just before position `dot` (a '.') is a known abbreviation.
bool follows_abbreviation(std::string_view s, size_t dot) {
  static constexpr std::array<std::string_view, 11> kAbbrev = {
      "dr", "mr", "mrs", "ms", "prof", "st", "vs", "approx", "fig", "e.g", "i.e"};
  size_t b = dot;
  while (b > 0 && !is_space(s[b - 1]) && s[b - 1] != '(') --b;
  const std::string word = to_lower(s.substr(b, dot - b));
  for (std::string_view a : kAbbrev) {
    if (word == a) return true;
  }
  return false;
}

// If a sentence ends at s[i] (one of . ! ?), returns the index one past the sentence end
// (after any closing quotes/brackets); otherwise 0.
size_t sentence_end_at(std::string_view s, size_t i) {
  const char c = s[i];
  if (c != '.' && c != '!' && c != '?') return 0;
  size_t j = i + 1;
  while (j < s.size() && closer_len(s, j) > 0) j += closer_len(s, j);
  if (j < s.size() && !is_space(s[j])) return 0;  // "38.5", "U.S.", "a?b"
  if (c == '.' && follows_abbreviation(s, i)) return 0;
  size_t k = j;
  while (k < s.size() && is_space(s[k])) ++k;
  // "e.g. the", "H. influenzae", "\"Am I dying?\" she asks": the sentence goes on.
  if (k < s.size() && s[k] >= 'a' && s[k] <= 'z') return 0;
  return j;
}

// Splits `stem` into trimmed, non-empty sentences (see question_sentence).
std::vector<std::string> split_sentences(std::string_view stem) {
  std::vector<std::string> out;
  size_t start = 0;
  auto emit = [&](size_t end) {
    std::string t = trim(stem.substr(start, end - start));
    if (!t.empty()) out.push_back(std::move(t));
    start = end;
  };
  for (size_t i = 0; i < stem.size(); ++i) {
    if (stem[i] == '\n' || stem[i] == '\r') {
      emit(i);
      start = i + 1;
      continue;
    }
    const size_t end = sentence_end_at(stem, i);
    if (end != 0) {
      emit(end);
      i = end - 1;
    }
  }
  if (start < stem.size()) emit(stem.size());
  return out;
}

// The sentence without trailing closing quotes/brackets that do not balance an opener
// inside it (e.g. the stray '"' after many MedQA questions).
std::string strip_stray_closers(std::string s) {
  for (;;) {
    const std::string_view v(s);
    if (v.size() >= 3 && v.substr(v.size() - 3) == kRightDoubleQuote && v.find(kLeftDoubleQuote) == std::string_view::npos) {
      s.resize(s.size() - 3);
      continue;
    }
    break;
  }
  while (!s.empty() && (s.back() == '"' || s.back() == '\'')) {
    const size_t quotes = static_cast<size_t>(std::count(s.begin(), s.end(), s.back()));
    if (quotes % 2 == 0) break;  // balanced: keep
    s.pop_back();
  }
  return s;
}

std::string letter_at(size_t i) { return std::string(1, static_cast<char>('A' + i)); }

}  // namespace

const std::vector<std::string>& known_mcq_conditions() { return mcq_condition_names(); }

std::string question_sentence(std::string_view stem) {
  const std::vector<std::string> sentences = split_sentences(stem);
  if (sentences.empty()) return "";
  for (auto it = sentences.rbegin(); it != sentences.rend(); ++it) {
    std::string s = strip_stray_closers(*it);
    if (!s.empty() && s.back() == '?') return s;
  }
  return strip_stray_closers(sentences.back());
}

Result<RenderedMcq> apply_mcq_condition(const McqItem& item, std::string_view condition, uint64_t study_seed) {
  const auto& known = known_mcq_conditions();
  if (std::find(known.begin(), known.end(), condition) == known.end()) {
    return InvalidArgument(fmt::format("unknown MCQ condition '{}'{}; known: {}", condition,
                                       did_you_mean(condition, known), join(known, ", ")));
  }
  if (item.options.empty()) {
    return InvalidArgument(fmt::format("item '{}': no options", item.id));
  }
  if (item.options.size() + 1 > kMaxOptions) {
    return InvalidArgument(fmt::format("item '{}': {} options exceed the {} letters A-Z (one is kept free for an appended option)",
                                       item.id, item.options.size(), kMaxOptions));
  }
  int gold = -1;
  for (size_t i = 0; i < item.options.size(); ++i) {
    if (item.options[i].letter == item.answer) {
      if (gold >= 0) {
        return InvalidArgument(fmt::format("item '{}': option letter '{}' appears twice", item.id, item.answer));
      }
      gold = static_cast<int>(i);
    }
  }
  if (gold < 0) {
    return InvalidArgument(fmt::format("item '{}': answer '{}' is not among its options", item.id, item.answer));
  }

  RenderedMcq out;
  out.item_id = item.id;
  out.condition = std::string(condition);
  out.question = item.question;

  // Shown order as source indices (-1 = the appended sentinel), then letters A, B, ...
  std::vector<int> order(item.options.size());
  std::iota(order.begin(), order.end(), 0);
  std::string appended_text;

  if (condition == "shuffle") {
    // Fisher-Yates with a stream keyed by (study seed, "shuffle", item id) only, so the
    // permutation does not depend on the subject, config or replicate (seed 004 §2.4).
    Rng rng = Rng::stream(study_seed, {fnv1a64("shuffle"), fnv1a64(item.id)});
    for (size_t i = order.size(); i > 1; --i) {
      const size_t j = static_cast<size_t>(rng.uniform_int(i));
      std::swap(order[i - 1], order[j]);
    }
    out.detail["permutation"] = order;
  } else if (condition == "remove_answer") {
    order.erase(order.begin() + gold);
    order.push_back(-1);
    appended_text = std::string(kNoneCorrectText);
    out.detail["removed"] = item.answer;
  } else if (condition == "remove_context") {
    out.question = question_sentence(item.question);
    order.push_back(-1);
    appended_text = std::string(kNotEnoughInfoText);
    out.detail["removed_chars"] = item.question.size() - out.question.size();
  }

  for (size_t k = 0; k < order.size(); ++k) {
    const int src = order[k];
    McqOption opt;
    opt.letter = letter_at(k);
    if (src < 0) {
      opt.text = appended_text;
      out.source_letter.emplace_back();
    } else {
      opt.text = item.options[static_cast<size_t>(src)].text;
      out.source_letter.push_back(item.options[static_cast<size_t>(src)].letter);
    }
    // The gold text's new letter, unless a sentinel was appended: then the sentinel (last)
    // is the only correct choice (seed 004 §2.4).
    if (appended_text.empty() ? src == gold : src < 0) out.answer = opt.letter;
    out.options.push_back(std::move(opt));
    out.source_index.push_back(src);
  }
  return out;
}

}  // namespace nf
