// truncate_last_turn (seed 004 §2.3). See truncate.h for the rule.
#include "perturb/truncate.h"

#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace nf {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

size_t code_points(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += is_continuation(c) ? 0 : 1;
  return n;
}

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

constexpr std::array<std::string_view, 6> kTitles{"dr", "mr", "mrs", "ms", "prof", "st"};
constexpr std::array<std::string_view, 27> kAbbreviations{
    "e.g", "i.e", "etc", "vs", "approx", "mg", "mcg", "ml", "kg", "cm", "mm", "hr", "hrs", "min",
    "wk",  "wks", "yr",  "yrs", "no",   "cf", "fig", "al", "tab", "tabs", "eg", "ie", "oz"};

template <size_t N>
bool in(const std::array<std::string_view, N>& list, std::string_view w) {
  for (auto x : list)
    if (x == w) return true;
  return false;
}

/// Length in bytes of a closing quote/bracket at `i` (0 if none).
size_t closer_at(std::string_view t, size_t i) {
  if (i >= t.size()) return 0;
  const char c = t[i];
  if (c == '"' || c == '\'' || c == ')' || c == ']') return 1;
  if (t.substr(i, 3) == "\xE2\x80\x99" || t.substr(i, 3) == "\xE2\x80\x9D") return 3;
  return 0;
}

/// Whether the single '.' at `dot` (followed by whitespace) closes an abbreviation that
/// does not end the sentence.
bool abbreviation_dot(std::string_view t, size_t dot) {
  size_t b = dot;
  while (b > 0 && !is_space(t[b - 1])) --b;
  std::string_view word = t.substr(b, dot - b);
  while (!word.empty() && (word.front() == '(' || word.front() == '"' || word.front() == '\'')) word.remove_prefix(1);
  const std::string w = lower_ascii(word);
  if (in(kTitles, w)) return true;
  if (!in(kAbbreviations, w)) return false;
  size_t k = dot + 1;
  while (k < t.size() && is_space(t[k])) ++k;
  return k < t.size() && (is_lower(t[k]) || is_digit(t[k]));
}

}  // namespace

nlohmann::json TruncatedTurn::detail() const {
  return {{"condition", "truncate_last_turn"}, {"cut", cut},
          {"trunc_form", trunc_form},          {"sentences_total", sentences_total},
          {"sentences_kept", sentences_kept},  {"removed_chars", removed_chars}};
}

std::vector<std::pair<size_t, size_t>> split_sentences(std::string_view t) {
  std::vector<std::pair<size_t, size_t>> out;
  const size_t n = t.size();
  size_t start = 0;
  auto skip_space = [&](size_t i) {
    while (i < n && is_space(t[i])) ++i;
    return i;
  };
  auto emit = [&](size_t b, size_t e) {
    while (e > b && is_space(t[e - 1])) --e;
    if (e > b) out.emplace_back(b, e);
  };
  start = skip_space(0);
  size_t i = start;
  while (i < n) {
    const char c = t[i];
    if (c == '.' || c == '!' || c == '?') {
      size_t j = i;
      while (j < n && (t[j] == '.' || t[j] == '!' || t[j] == '?')) ++j;
      const bool single_dot = (j == i + 1 && c == '.');
      while (size_t len = closer_at(t, j)) j += len;
      if (j == n || is_space(t[j])) {
        if (!(single_dot && abbreviation_dot(t, i))) {
          emit(start, j);
          start = skip_space(j);
          i = start;
          continue;
        }
      }
      i = j;
      continue;
    }
    if (c == '\n') {
      size_t k = i + 1;
      while (k < n && (t[k] == ' ' || t[k] == '\t' || t[k] == '\r')) ++k;
      if (k < n && t[k] == '\n') {  // a paragraph end
        emit(start, i);
        start = skip_space(k);
        i = start;
        continue;
      }
    }
    ++i;
  }
  if (start < n) emit(start, n);
  return out;
}

Result<TruncatedTurn> truncate_last_turn(const std::vector<ChatMessage>& messages) {
  if (messages.empty()) return InvalidArgument("truncate_last_turn: the conversation has no messages");
  if (messages.back().role != "user")
    return InvalidArgument(
        fmt::format("truncate_last_turn: the last message must be a user turn, found '{}'", messages.back().role));
  const std::string& turn = messages.back().content;
  const auto sentences = split_sentences(turn);
  if (sentences.empty())
    return InvalidArgument("truncate_last_turn: the last user turn is empty or whitespace only (nothing to remove)");

  TruncatedTurn r;
  r.sentences_total = static_cast<int>(sentences.size());
  size_t cut = 0;  // byte offset: kept = turn[0, cut) right-trimmed
  if (sentences.size() >= 2) {
    const size_t keep = sentences.size() / 2;
    cut = sentences[keep - 1].second;
    r.sentences_kept = static_cast<int>(keep);
    r.cut = "sentence_boundary";
    r.trunc_form = "complete";
  } else {
    const auto [b, e] = sentences.front();
    const std::string_view s(turn.data() + b, e - b);
    // Word ends (byte offsets into s) that are followed by whitespace: candidate cuts.
    std::vector<size_t> word_ends;
    for (size_t i = 1; i < s.size(); ++i)
      if (is_space(s[i]) && !is_space(s[i - 1])) word_ends.push_back(i);
    if (!word_ends.empty()) {
      const double mid = static_cast<double>(code_points(s)) / 2.0;
      size_t best = word_ends.front();
      double best_d = std::numeric_limits<double>::infinity();
      for (size_t w : word_ends) {
        const double d = std::fabs(static_cast<double>(code_points(s.substr(0, w))) - mid);
        if (d < best_d) {  // strict: ties go to the earlier boundary
          best_d = d;
          best = w;
        }
      }
      cut = b + best;
      r.cut = "word_boundary";
    } else {
      const size_t cps = code_points(s);
      if (cps < 2)
        return InvalidArgument("truncate_last_turn: the last user turn is a single character (nothing to remove)");
      const size_t keep_cp = cps / 2;
      size_t seen = 0, i = 0;
      for (; i < s.size(); ++i) {
        if (!is_continuation(s[i])) {
          if (seen == keep_cp) break;
          ++seen;
        }
      }
      cut = b + i;
      r.cut = "mid_word";
    }
    r.sentences_kept = 0;
    r.trunc_form = "midword";
  }
  size_t kept_end = cut;
  while (kept_end > 0 && is_space(turn[kept_end - 1])) --kept_end;
  size_t rem_begin = cut;
  while (rem_begin < turn.size() && is_space(turn[rem_begin])) ++rem_begin;
  r.kept = turn.substr(0, kept_end);
  r.removed = turn.substr(rem_begin);
  r.removed_chars = code_points(r.removed);
  r.messages = messages;
  r.messages.back().content = r.kept;
  return r;
}

}  // namespace nf
