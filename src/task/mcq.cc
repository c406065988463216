// The multiple-choice task (see mcq.h for the contract). Answer extraction is a
// hand-written single-pass scanner: no regex, no backtracking, every index bounds-checked,
// so arbitrary bytes (tests/fuzz/extract_choice_fuzz.cc) and megabyte replies are safe.
#include "task/mcq.h"

#include <algorithm>
#include <array>
#include <set>
#include <span>

#include <fmt/format.h>

#include "util/strings.h"

namespace nf {

namespace {

constexpr std::string_view kDefaultInstruction =
    "Think through the question briefly, then give your final answer as <answer>X</answer>, "
    "where X is the letter of one option.";
constexpr std::string_view kDirectInstruction =
    "Reply with only <answer>X</answer>, where X is the letter of the best option.";
// The template axis of seed 003 §3 (minimal, role-framed, detailed, chain-of-thought
// style), written for noisefloor; each keeps the <answer>X</answer> contract.
constexpr std::string_view kMinimalInstruction = "Answer as <answer>X</answer>.";
constexpr std::string_view kRoleSystem =
    "You are an experienced physician answering a medical licensing examination question.";
constexpr std::string_view kRoleInstruction =
    "Choose the single best option and give it as <answer>X</answer>, where X is its letter.";
constexpr std::string_view kDetailedInstruction =
    "Read the question and every option carefully. Consider each option in turn, rule out the ones "
    "that do not fit the findings, and then give your final answer as <answer>X</answer>, where X is "
    "the letter of the single best option. Give exactly one letter.";
constexpr std::string_view kStepInstruction =
    "Let's think step by step. Reason through the question, then give your final answer on its own "
    "line as <answer>X</answer>, where X is the letter of one option.";

// ASCII-only classification (locale-free; bytes >= 0x80 are neither letters nor digits).
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_alnum(char c) { return is_letter(c) || (c >= '0' && c <= '9'); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
char upper(char c) { return is_lower(c) ? static_cast<char>(c - 'a' + 'A') : c; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool one_of(char c, std::string_view set) { return set.find(c) != std::string_view::npos; }

// Markup that may wrap a letter: "(B)", "**B**", "$B$", "[B]", "`B`", "\"B\"".
constexpr std::string_view kOpeners = "(*[$`\"'_{";
constexpr std::string_view kClosers = ")*]$`\"'_}";

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

size_t skip_space(std::string_view t, size_t p) {
  while (p < t.size() && is_space(t[p])) ++p;
  return p;
}

// Full-width forms and CJK punctuation folded to ASCII before any rule (issue 13 item 3):
// U+FF01-FF5E -> U+0021-007E ("Ｃ" -> "C", "（" -> "(", "：" -> ":"), U+3000 ideographic
// space -> ' ', U+3001 "、" -> ',', U+3002 "。" -> '.', the corner and lenticular brackets
// 「」『』【】〔〕 -> '(' ')'. Every other byte is copied as is.
std::string fold_cjk_forms(std::string_view t) {
  std::string out;
  out.reserve(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const auto b0 = static_cast<unsigned char>(t[i]);
    if (b0 < 0x80 || i + 2 >= t.size()) {
      out += t[i];
      continue;
    }
    const auto b1 = static_cast<unsigned char>(t[i + 1]), b2 = static_cast<unsigned char>(t[i + 2]);
    char folded = 0;
    if (b0 == 0xEF && (b1 == 0xBC || b1 == 0xBD) && b2 >= 0x80 && b2 <= 0xBF) {
      const unsigned cp = ((b0 & 0x0Fu) << 12) | ((b1 & 0x3Fu) << 6) | (b2 & 0x3Fu);
      if (cp >= 0xFF01 && cp <= 0xFF5E) folded = static_cast<char>(cp - 0xFEE0);
    } else if (b0 == 0xE3 && b1 == 0x80) {
      switch (b2) {
        case 0x80: folded = ' '; break;
        case 0x81: folded = ','; break;
        case 0x82: folded = '.'; break;
        case 0x8C: case 0x8E: case 0x90: case 0x94: folded = '('; break;
        case 0x8D: case 0x8F: case 0x91: case 0x95: folded = ')'; break;
        default: break;
      }
    }
    if (folded != 0) {
      out += folded;
      i += 2;
    } else {
      out += t[i];
    }
  }
  return out;
}

// The UTF-8 string at `p` that is the longest entry of `words`, or "".
std::string_view match_any(std::string_view t, size_t p, std::span<const std::string_view> words) {
  std::string_view best;
  for (std::string_view w : words) {
    if (w.size() > best.size() && t.substr(p, w.size()) == w) best = w;
  }
  return best;
}

// Answer cue words of Chinese (traditional and simplified), Japanese and Korean replies:
// "answer", "correct answer", "I choose", "should choose".
constexpr std::string_view kCjkCues[] = {
    "\xE6\xAD\xA3\xE7\xA2\xBA\xE7\xAD\x94\xE6\xA1\x88",  // 正確答案
    "\xE6\xAD\xA3\xE7\xA1\xAE\xE7\xAD\x94\xE6\xA1\x88",  // 正确答案
    "\xE7\xAD\x94\xE6\xA1\x88",                          // 答案
    "\xE7\xAD\x94\xE3\x81\x88",                          // 答え
    "\xE6\xAD\xA3\xE8\xA7\xA3",                          // 正解
    "\xE8\xA7\xA3\xE7\xAD\x94",                          // 解答
    "\xE9\x81\xB8\xE6\x93\x87",                          // 選擇
    "\xE9\x80\x89\xE6\x8B\xA9",                          // 选择
    "\xE6\x88\x91\xE9\x81\xB8",                          // 我選
    "\xE6\x88\x91\xE9\x80\x89",                          // 我选
    "\xE6\x87\x89\xE9\x81\xB8",                          // 應選
    "\xE5\xBA\x94\xE9\x80\x89",                          // 应选
    "\xEC\xA0\x95\xEB\x8B\xB5",                          // 정답
    "\xEB\x8B\xB5",                                      // 답
};

// Words that may stand between a CJK cue and the letter: copulas and particles ("is",
// "should be", topic/subject markers) and "option".
constexpr std::string_view kCjkConnectors[] = {
    "\xE6\x98\xAF",              // 是
    "\xE7\x82\xBA",              // 為
    "\xE4\xB8\xBA",              // 为
    "\xE6\x87\x89\xE8\xA9\xB2",  // 應該
    "\xE5\xBA\x94\xE8\xAF\xA5",  // 应该
    "\xE5\xB0\xB1",              // 就
    "\xE9\x81\xB8\xE9\xA0\x85",  // 選項
    "\xE9\x80\x89\xE9\xA1\xB9",  // 选项
    "\xE9\x81\xB8",              // 選
    "\xE9\x80\x89",              // 选
    "\xE3\x81\xAF",              // は
    "\xE3\x81\x8C",              // が
    "\xEC\x9D\x80",              // 은
    "\xEB\x8A\x94",              // 는
    "\xEC\x9D\xB4",              // 이
    "\xEA\xB0\x80",              // 가
    "\xEC\x9C\xBC\xEB\xA1\x9C",  // 으로
    "\xEB\xA1\x9C",              // 로
};

// Words joining listed options in CJK replies: and / or / with ("A和C", "A 또는 B").
constexpr std::string_view kCjkJoiners[] = {
    "\xE5\x92\x8C",              // 和
    "\xE6\x88\x96",              // 或
    "\xE8\x88\x87",              // 與
    "\xE4\xB8\x8E",              // 与
    "\xE5\x8F\x8A",              // 及
    "\xE3\x81\xA8",              // と
    "\xE3\x82\x84",              // や
    "\xEB\xB0\x8F",              // 및
    "\xEB\x98\x90\xEB\x8A\x94",  // 또는
};

// The set of valid letters, upper-cased; entries that are not one ASCII letter are ignored.
using LetterSet = std::array<bool, 26>;
LetterSet make_letter_set(const std::vector<std::string>& letters) {
  LetterSet set{};
  for (const auto& l : letters) {
    if (l.size() == 1 && is_letter(l[0])) set[static_cast<size_t>(upper(l[0]) - 'A')] = true;
  }
  return set;
}
bool valid(const LetterSet& set, char upper_letter) { return set[static_cast<size_t>(upper_letter - 'A')]; }

struct Token {
  char letter = 0;   // upper-case
  size_t end = 0;    // index just past the letter
};

// Reads a standalone option letter at `p` (after whitespace and up to a few wrapping
// openers such as "(", "**", "$", "\boxed{", "\text{"). Rejects a letter that is part of a
// word ("Cannot", "X-ray", "I'm"). A bare (unwrapped) lower-case letter is accepted only
// when punctuation or the end follows ("answer is: d." yes, "answer is a tricky one" no);
// a bare "I" followed by a lower-case word is the pronoun ("Answer: I think ...").
std::optional<Token> read_letter(std::string_view t, size_t p, bool always_wrapped = false) {
  p = skip_space(t, p);
  bool wrapped = always_wrapped;
  for (int k = 0; k < 8 && p < t.size(); ++k) {
    if (t.substr(p, 7) == "\\boxed{") {
      p += 7;
    } else if (t.substr(p, 6) == "\\text{") {
      p += 6;
    } else if (t.substr(p, 8) == "\\textbf{") {
      p += 8;
    } else if (one_of(t[p], kOpeners)) {
      ++p;
    } else {
      break;
    }
    wrapped = true;
  }
  if (p >= t.size() || !is_letter(t[p])) return std::nullopt;
  const char c = t[p];
  const size_t next = p + 1;
  if (next < t.size()) {
    const char n = t[next];
    if (is_alnum(n)) return std::nullopt;                                                // "Cannot"
    if ((n == '-' || n == '\'') && next + 1 < t.size() && is_alnum(t[next + 1])) return std::nullopt;  // "X-ray", "I'm"
    if (t.substr(next, 3) == "\xE2\x80\x99" && next + 3 < t.size() && is_alnum(t[next + 3])) {
      return std::nullopt;  // "I’m"
    }
  }
  if (!wrapped) {
    if (is_lower(c) && next < t.size() && !one_of(t[next], ".,;:)!?")) return std::nullopt;
    if (c == 'I') {
      const size_t q = skip_space(t, next);
      if (q > next && q < t.size() && is_lower(t[q])) return std::nullopt;
    }
  }
  return Token{upper(c), next};
}

// Words that may stand between a list's joiner and its next member ("A; also B", "A or
// maybe C", "A (or possibly C)"). Skips them (and the spaces and commas between) from
// `p`; sets *any when at least one was skipped. A word must end at a non-alphanumeric
// character ("order", "also-ran" are not skipped).
size_t skip_hedges(std::string_view t, size_t p, bool* any = nullptr) {
  static constexpr std::array<std::string_view, 9> kHedges = {"and/or", "alternatively", "possibly", "perhaps",
                                                              "probably",  "maybe",         "also",     "and",
                                                              "or"};
  for (;;) {
    const size_t q = skip_space(t, p);
    bool hit = false;
    for (std::string_view w : kHedges) {
      if (q + w.size() > t.size() || lowercase(t.substr(q, w.size())) != w) continue;
      const size_t after = q + w.size();
      if (after < t.size() && (is_alnum(t[after]) || t[after] == '-')) continue;
      p = after < t.size() && t[after] == ',' ? after + 1 : after;  // "also, B"
      hit = true;
      if (any != nullptr) *any = true;
      break;
    }
    if (!hit) return p;
  }
}

// True if another option letter is listed after the letter that ended at `end`: "A or B",
// "A and B", "A and/or B", "A/B", "A, B", "A & B", "A + B", "A, C and D", "(A), (C)". A
// reply that commits to several options (or to an alternative) is not a single answer
// (issue 13 item 2), so the statement decides nothing. A new sentence ("B. C is wrong") is
// not a list: only ',', '/', '&', '+', ';' and the words "and", "or", "and/or" join list
// members. A list cut off after its joiner ("ANSWER: D and", "D, " at the end of the
// reply: a reply truncated by max_tokens) is unfinished: it may go on to name another
// option, so it is not a single answer either (tester finding, 2026-12-01).
bool followed_by_alternative(std::string_view t, size_t end) {
  size_t p = end;
  while (p < t.size() && one_of(t[p], kClosers)) ++p;
  // An aside naming another option: "A (or maybe C)", "A [possibly B]" (tester s11 finding 1).
  if (const size_t q = skip_space(t, p); q < t.size() && (t[q] == '(' || t[q] == '[')) {
    bool hedged = false;
    const size_t r = skip_hedges(t, q + 1, &hedged);
    if (hedged && read_letter(t, r).has_value()) return true;
  }
  bool joined = false;
  if (const size_t q = skip_space(t, p); q < t.size() && one_of(t[q], ",/&+;")) {
    joined = true;
    p = q + 1;
  } else {
    while (p < t.size() && t[p] == '.') ++p;  // "A. or B"
  }
  p = skip_space(t, p);
  if (joined && p == t.size() && t[t.find_last_not_of(" \t\r\n")] != ';') return true;  // "D, <end>"
  if (const std::string_view j = match_any(t, p, kCjkJoiners); !j.empty())
    return p + j.size() == t.size() || read_letter(t, p + j.size()).has_value();
  for (std::string_view w : {std::string_view("and/or"), std::string_view("or"), std::string_view("and")}) {
    if (p + w.size() <= t.size() && lowercase(t.substr(p, w.size())) == w) {
      const size_t after = p + w.size();
      if (skip_space(t, after) == t.size()) return true;  // "D and <end>": unfinished
      if (is_space(t[after])) {
        const size_t r = skip_hedges(t, after);  // "A or maybe C", "A and also B"
        if (r == t.size()) return true;           // "D and also <end>": unfinished
        return read_letter(t, r).has_value();
      }
    }
  }
  if (!joined) return false;
  // After a joiner, hedging words may come before the next member: "A; also B",
  // "A, or possibly C", "A, maybe D" (tester s11 finding 1). A joiner followed only by
  // them is unfinished ("A; also <end>").
  bool hedged = false;
  p = skip_hedges(t, p, &hedged);
  if (hedged && p == t.size()) return true;
  // A bare lower-case letter after a comma is a word ("A, a classic sign"); a listed
  // option is upper-case or wrapped.
  const auto next = read_letter(t, p);
  if (!next) return false;
  const size_t q = skip_space(t, p);
  return q < t.size() && (!is_lower(t[q]));
}

// Parses the content of an <answer> tag or \boxed{}: a letter (any case, optionally
// wrapped) alone, or a letter followed by '.', ')' or ':' and then option text
// ("C. Report the physician"). Returns the upper-case letter or nullopt.
std::optional<char> parse_answer_content(std::string_view content) {
  const auto tok = read_letter(content, 0, /*always_wrapped=*/true);
  if (!tok) return std::nullopt;
  size_t q = tok->end;
  if (q < content.size() && one_of(content[q], ".):")) return tok->letter;
  while (q < content.size() && (one_of(content[q], kClosers) || is_space(content[q]))) ++q;
  if (q == content.size()) return tok->letter;
  return std::nullopt;
}

// True if `gap`, the text between two answer statements, only joins them as list members:
// empty, or a joiner (',', '/', '&', '+', "or", "and", "and/or") with spaces around
// ("<answer>A</answer> or <answer>B</answer>", "\boxed{A}, \boxed{B}").
bool joins_as_list(std::string_view gap) {
  const size_t b = skip_space(gap, 0);
  size_t e = gap.size();
  while (e > b && is_space(gap[e - 1])) --e;
  const std::string w = lowercase(gap.substr(b, e - b));
  return w.empty() || w == "," || w == "/" || w == "&" || w == "+" || w == "or" || w == "and" || w == "and/or";
}

// The last complete <answer>...</answer> tag (tag name in any case): its content, and the
// content of the complete tag before it when only a list joiner separates the two
// (joins_as_list: "<answer>A</answer> or <answer>B</answer>" names two options). nullopt
// content if there is no tag. Linear: opening and closing tags are paired in one pass.
struct AnswerTags {
  std::optional<std::string_view> last, joined_before;
  size_t last_end = 0;  // just past the last complete tag's "</answer>"
};
AnswerTags last_answer_tag(std::string_view t, const std::string& lo) {
  constexpr std::string_view kOpen = "<answer>";
  constexpr std::string_view kClose = "</answer>";
  AnswerTags out;
  size_t open_end = std::string::npos;  // end of the latest unmatched opening tag
  size_t open_at = 0, last_close_end = std::string::npos;
  for (size_t p = lo.find('<'); p != std::string::npos; p = lo.find('<', p + 1)) {
    const std::string_view rest = std::string_view(lo).substr(p);
    if (rest.substr(0, kOpen.size()) == kOpen) {
      open_at = p;
      open_end = p + kOpen.size();
    } else if (rest.substr(0, kClose.size()) == kClose && open_end != std::string::npos) {
      const bool joined = out.last && last_close_end <= open_at &&
                          joins_as_list(t.substr(last_close_end, open_at - last_close_end));
      out.joined_before = joined ? out.last : std::nullopt;
      out.last = t.substr(open_end, p - open_end);
      last_close_end = p + kClose.size();
      out.last_end = last_close_end;
      open_end = std::string::npos;
    }
  }
  return out;
}

// True if `rest`, the text after the last complete answer tag, goes on to a second answer
// that was cut off: a list joiner (',', '/', '&', '+', ';', "or", "and", hedging words)
// and then nothing ("<answer>A</answer> and"), or an answer tag opened and never closed at
// the end of the reply ("<answer>A</answer> and also <ans", "<answer>A</answer> or
// <answer>B": a reply truncated by max_tokens; tester s11 finding 1).
bool second_answer_cut_off(std::string_view rest) {
  size_t p = skip_space(rest, 0);
  bool joined = false;
  if (p < rest.size() && one_of(rest[p], ",/&+;")) {
    joined = true;
    ++p;
  }
  p = skip_hedges(rest, p, &joined);
  std::string tail = lowercase(rest.substr(skip_space(rest, p)));
  while (!tail.empty() && is_space(tail.back())) tail.pop_back();
  if (tail.empty()) return joined;
  constexpr std::string_view kOpen = "<answer>";
  if (tail.size() < kOpen.size()) return kOpen.substr(0, tail.size()) == tail;  // "<ans"
  return tail.compare(0, kOpen.size(), kOpen) == 0 && tail.find('<', kOpen.size()) == std::string::npos &&
         tail.size() <= kOpen.size() + 64;  // "<answer>B" with no close: cut inside it
}

// Explicit statements "answer is X", "answer: X", "Answer - (X)", "final answer: **X**",
// "the best option is X", "correct choice = X", "answer would be X", "answer is option X":
// a keyword (answer/option/choice, whole word, not plural) followed by a connector (':',
// '-', '=', "is", "would/will/should/must be") and then a standalone letter. The last such
// statement decides; an out-of-range letter or an alternative ("A or B") makes it decide
// nullopt. Returns {found, letter}.
std::pair<bool, std::optional<char>> explicit_statement(std::string_view t, const std::string& lo,
                                                        const LetterSet& set, size_t* last_at = nullptr) {
  bool found = false;
  char decided = 0;  // 0 = the last statement decided nothing
  auto eat_word = [&](size_t& q, std::string_view w) {
    if (lo.compare(q, w.size(), w) == 0 && (q + w.size() == lo.size() || !is_letter(lo[q + w.size()]))) {
      q += w.size();
      return true;
    }
    return false;
  };
  // One left-to-right pass over all keyword occurrences, so "last" is positional.
  for (size_t p = 0; p < lo.size(); ++p) {
    if (lo[p] != 'a' && lo[p] != 'o' && lo[p] != 'c') continue;
    if (p > 0 && is_letter(lo[p - 1])) continue;
    size_t q = p;
    if (!eat_word(q, "answer") && !eat_word(q, "option") && !eat_word(q, "choice")) continue;
    bool connector = false;
    for (;;) {
      while (q < lo.size() && (is_space(lo[q]) || one_of(lo[q], "*:=-"))) {
        if (one_of(lo[q], ":=-")) connector = true;
        ++q;
      }
      if (eat_word(q, "is")) {
        connector = true;
        continue;
      }
      const size_t before = q;
      if (eat_word(q, "would") || eat_word(q, "will") || eat_word(q, "should") || eat_word(q, "must")) {
        q = skip_space(lo, q);
        if (eat_word(q, "be")) {
          connector = true;
          continue;
        }
        q = before;
      }
      break;
    }
    if (!connector) continue;
    q = skip_space(lo, q);
    if (!eat_word(q, "option") && !eat_word(q, "choice")) eat_word(q, "letter");
    const auto tok = read_letter(t, q);
    if (!tok) continue;
    found = true;
    if (last_at != nullptr) *last_at = p;
    if (!valid(set, tok->letter) || followed_by_alternative(t, tok->end)) {
      decided = 0;
    } else {
      decided = tok->letter;
    }
    p = tok->end - 1;
  }
  return {found, decided != 0 ? std::optional<char>(decided) : std::nullopt};
}

// CJK answer statements (issue 13 item 3) in text already folded by fold_cjk_forms: a cue
// word of kCjkCues, then any of spaces, ':', '=', '-' and kCjkConnectors, then a
// standalone letter ("答案:C", "我選擇 D", "正確答案為(B)", "정답은 A입니다", "正解は B").
// As explicit_statement: the last statement decides; an out-of-range letter or a list
// ("A和C") decides nullopt. Returns {found, letter}; *last_at = where the last cue began.
std::pair<bool, std::optional<char>> cjk_statement(std::string_view t, const LetterSet& set, size_t* last_at) {
  bool found = false;
  char decided = 0;
  for (size_t p = 0; p < t.size(); ++p) {
    if (static_cast<unsigned char>(t[p]) < 0x80) continue;
    const std::string_view cue = match_any(t, p, kCjkCues);
    if (cue.empty()) continue;
    size_t q = p + cue.size();
    for (;;) {
      while (q < t.size() && (is_space(t[q]) || one_of(t[q], ":=-"))) ++q;
      const std::string_view c = match_any(t, q, kCjkConnectors);
      if (c.empty()) break;
      q += c.size();
    }
    const auto tok = read_letter(t, q);
    if (!tok) continue;
    found = true;
    *last_at = p;
    decided = valid(set, tok->letter) && !followed_by_alternative(t, tok->end) ? tok->letter : 0;
    p = tok->end - 1;
  }
  return {found, decided != 0 ? std::optional<char>(decided) : std::nullopt};
}

// A class of formatted letters decides if it matches at all: one distinct valid letter ->
// that letter; several -> nullopt (ambiguous). Out-of-range letters are not matches.
struct Matches {
  std::set<char> letters;
  void add(char upper_letter, const LetterSet& set) {
    if (valid(set, upper_letter)) letters.insert(upper_letter);
  }
};

// **X**, **X.**, **X)**, **(X)**
Matches bold_letters(std::string_view t, const LetterSet& set) {
  Matches m;
  for (size_t p = t.find("**"); p != std::string_view::npos; p = t.find("**", p + 1)) {
    size_t q = p + 2;
    bool paren = false;
    if (q < t.size() && t[q] == '(') {
      paren = true;
      ++q;
    }
    if (q >= t.size() || !is_letter(t[q])) continue;
    const char c = t[q++];
    if (paren) {
      if (q >= t.size() || t[q] != ')') continue;
      ++q;
    } else if (q < t.size() && one_of(t[q], ".)")) {
      ++q;
    }
    if (t.substr(q, 2) == "**") m.add(upper(c), set);
  }
  return m;
}

// Two-character wrappers: $X$, (X)
Matches wrapped_letters(std::string_view t, char open, char close, const LetterSet& set) {
  Matches m;
  for (size_t p = t.find(open); p != std::string_view::npos && p + 2 < t.size(); p = t.find(open, p + 1)) {
    if (is_letter(t[p + 1]) && t[p + 2] == close) m.add(upper(t[p + 1]), set);
  }
  return m;
}

// The whole reply is one letter, optionally wrapped and followed by punctuation ("b",
// " (B). ", "**c**"); or it starts with an upper-case letter followed by '.', ')' or ':'
// and whitespace ("B. Tell the attending ..."). Returns {found, letter}.
std::pair<bool, std::optional<char>> lone_letter(std::string_view t, const LetterSet& set) {
  size_t b = 0, e = t.size();
  while (b < e && (is_space(t[b]) || one_of(t[b], kOpeners))) ++b;
  while (e > b && (is_space(t[e - 1]) || one_of(t[e - 1], kClosers) || one_of(t[e - 1], ".!:"))) --e;
  if (e == b + 1 && is_letter(t[b])) {
    const char c = upper(t[b]);
    return {true, valid(set, c) ? std::optional<char>(c) : std::nullopt};
  }
  const size_t s = skip_space(t, 0);
  if (s + 2 < t.size() && t[s] >= 'A' && t[s] <= 'Z' && one_of(t[s + 1], ".):") && is_space(t[s + 2]) &&
      valid(set, t[s])) {
    // "A. B." / "A) C)": a list of letters, not a letter and its option text.
    std::string_view rest = t.substr(s + 2);
    size_t b2 = 0, e2 = rest.size();
    while (b2 < e2 && (is_space(rest[b2]) || one_of(rest[b2], kOpeners))) ++b2;
    while (e2 > b2 && (is_space(rest[e2 - 1]) || one_of(rest[e2 - 1], kClosers) || one_of(rest[e2 - 1], ".!:"))) --e2;
    if (e2 == b2 + 1 && is_letter(rest[b2])) return {true, std::nullopt};
    return {true, t[s]};
  }
  return {false, std::nullopt};
}

std::string normalise_text(std::string_view s) {
  std::string t = trim(s);
  while (!t.empty() && (t.back() == '.' || is_space(t.back()))) t.pop_back();
  std::string out;
  bool space = false;
  for (char c : t) {
    if (is_space(c)) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += lower(c);
  }
  return out;
}

// Answer-text fallback (seed 004 §2.5): the whole reply, or the last <answer> tag, equals
// exactly one option's text (case, surrounding space and a final '.' ignored); none when
// the last tag is joined as a list to a tag with other text.
std::optional<size_t> match_option_text(const RenderedMcq& item, std::string_view reply) {
  std::vector<std::string> candidates = {normalise_text(reply)};
  const std::string lo = lowercase(reply);
  if (const AnswerTags tags = last_answer_tag(reply, lo); tags.last) {
    // Two tags joined as a list name two options unless they say the same thing.
    if (tags.joined_before && normalise_text(*tags.joined_before) != normalise_text(*tags.last)) return std::nullopt;
    candidates.push_back(normalise_text(*tags.last));
  }
  for (const auto& cand : candidates) {
    if (cand.empty()) continue;
    std::optional<size_t> hit;
    int hits = 0;
    for (size_t i = 0; i < item.options.size(); ++i) {
      if (normalise_text(item.options[i].text) == cand) {
        hit = i;
        ++hits;
      }
    }
    if (hits == 1) return hit;
  }
  return std::nullopt;
}

// At most `n` bytes of `s`, not cutting a UTF-8 sequence.
std::string prefix_utf8(std::string_view s, size_t n) {
  if (s.size() <= n) return std::string(s);
  size_t e = n;
  while (e > 0 && (static_cast<unsigned char>(s[e]) & 0xC0) == 0x80) --e;
  return std::string(s.substr(0, e));
}

}  // namespace

const std::vector<std::string>& known_mcq_templates() {
  static const std::vector<std::string> kTemplates = {"default", "direct", "minimal", "role-framed", "detailed",
                                                      "step-by-step"};
  return kTemplates;
}

Result<std::vector<ChatMessage>> render_mcq_prompt(const RenderedMcq& item, std::string_view template_name) {
  std::string_view instruction;
  std::string_view system;  // role-framed only: a system message before the question
  if (template_name == "default") {
    instruction = kDefaultInstruction;
  } else if (template_name == "direct") {
    instruction = kDirectInstruction;
  } else if (template_name == "minimal") {
    instruction = kMinimalInstruction;
  } else if (template_name == "role-framed") {
    instruction = kRoleInstruction;
    system = kRoleSystem;
  } else if (template_name == "detailed") {
    instruction = kDetailedInstruction;
  } else if (template_name == "step-by-step") {
    instruction = kStepInstruction;
  } else {
    return InvalidArgument(fmt::format("unknown MCQ template '{}'{}; known: {}", template_name,
                                       did_you_mean(template_name, known_mcq_templates()),
                                       join(known_mcq_templates(), ", ")));
  }
  std::string body = item.question;
  body += "\n\n";
  for (size_t i = 0; i < item.options.size(); ++i) {
    if (i) body += '\n';
    body += item.options[i].letter;
    body += ". ";
    body += item.options[i].text;
  }
  body += "\n\n";
  body += instruction;
  if (!system.empty())
    return std::vector<ChatMessage>{ChatMessage{"system", std::string(system)}, ChatMessage{"user", std::move(body)}};
  return std::vector<ChatMessage>{ChatMessage{"user", std::move(body)}};
}

std::optional<std::string> extract_choice(std::string_view text, const std::vector<std::string>& letters) {
  const LetterSet set = make_letter_set(letters);
  auto out = [](std::optional<char> c) -> std::optional<std::string> {
    if (!c) return std::nullopt;
    return std::string(1, *c);
  };
  if (text.empty()) return std::nullopt;
  const std::string folded = fold_cjk_forms(text);  // full-width letters and CJK punctuation as ASCII
  text = folded;
  const std::string lo = lowercase(text);

  // 1. The answer contract: the last complete <answer>...</answer> tag decides; two tags
  // joined as a list ("<answer>A</answer> or <answer>B</answer>") name two options.
  const auto tag_letter = [&](std::string_view tag) -> std::optional<char> {
    auto c = parse_answer_content(tag);
    if (!c) {  // "<answer>Answer: B</answer>"
      if (auto [found, s] = explicit_statement(tag, lowercase(tag), set); found) return s;
    }
    return c && valid(set, *c) ? c : std::nullopt;
  };
  if (const AnswerTags tags = last_answer_tag(text, lo); tags.last) {
    const auto c = tag_letter(*tags.last);
    if (c && tags.joined_before && tag_letter(*tags.joined_before) != c) return std::nullopt;
    if (c && second_answer_cut_off(text.substr(tags.last_end))) return std::nullopt;
    return out(c);
  }
  // 2. \boxed{X}: the last one decides (content looked for within 64 bytes); two joined
  // as a list ("\boxed{A} or \boxed{B}") name two options.
  const auto boxed_at = [&](size_t p) -> std::optional<std::pair<std::optional<char>, size_t>> {
    const size_t start = p + 7;
    const size_t close = lo.find('}', start);
    if (close == std::string::npos || close - start > 64) return std::nullopt;
    std::string_view content = text.substr(start, close - start);
    if (content.substr(0, 6) == "\\text{") content.remove_prefix(6);
    const auto c = parse_answer_content(content);
    return std::make_pair(c && valid(set, *c) ? c : std::nullopt, close + 1);
  };
  if (size_t p = lo.rfind("\\boxed{"); p != std::string::npos) {
    if (const auto last = boxed_at(p)) {
      if (p > 0) {
        if (const size_t q = lo.rfind("\\boxed{", p - 1); q != std::string::npos) {
          const auto before = boxed_at(q);
          if (before && last->first && before->second <= p && before->first != last->first &&
              joins_as_list(text.substr(before->second, p - before->second)))
            return std::nullopt;
        }
      }
      return out(last->first);
    }
  }
  // 3. Explicit statements ("the answer is C", "Answer: D", "answer is: (d)", "答案:C",
  // "정답은 A"): the last English or CJK statement decides.
  size_t en_at = 0, cjk_at = 0;
  const auto [en_found, en] = explicit_statement(text, lo, set, &en_at);
  const auto [cjk_found, cjk] = cjk_statement(text, set, &cjk_at);
  if (en_found && cjk_found) return out(cjk_at > en_at ? cjk : en);
  if (en_found) return out(en);
  if (cjk_found) return out(cjk);
  // 4-6. Formatted letters: **X**, then $X$, then (X). The first class that matches
  // decides; two different letters in it are ambiguous (nullopt, never a guess).
  for (int cls = 0; cls < 3; ++cls) {
    const Matches m = cls == 0   ? bold_letters(text, set)
                      : cls == 1 ? wrapped_letters(text, '$', '$', set)
                                 : wrapped_letters(text, '(', ')', set);
    if (m.letters.size() == 1) return std::string(1, *m.letters.begin());
    if (m.letters.size() > 1) return std::nullopt;
  }
  // 7. The reply is just the letter (or starts "B. <option text>").
  if (auto [found, c] = lone_letter(text, set); found) return out(c);
  return std::nullopt;
}

McqScore score_mcq(const RenderedMcq& item, const ChatResponse& response) {
  McqScore score;
  if (response.kind == ResponseKind::kApiError) {
    score.status = DrawStatus::kApiError;
    score.error = response.error.empty() ? "api error" : response.error;
    return score;
  }
  if (response.kind == ResponseKind::kRefused) {
    score.status = DrawStatus::kRefused;
    score.error = response.error.empty() ? "refused" : response.error;
    return score;
  }
  std::vector<std::string> letters;
  letters.reserve(item.options.size());
  for (const auto& o : item.options) letters.push_back(o.letter);

  std::optional<size_t> shown;
  if (auto letter = extract_choice(response.content, letters)) {
    for (size_t i = 0; i < item.options.size(); ++i) {
      if (item.options[i].letter == *letter) shown = i;
    }
  }
  if (!shown) shown = match_option_text(item, response.content);
  if (!shown) {
    score.status = DrawStatus::kParseError;
    const std::string head = prefix_utf8(response.content, 80);
    score.error = response.finish_reason == "length"
                      ? "reply truncated (finish_reason=length) before a complete single answer: " + head
                      : "no single answer in reply (no option letter, or several options named): " + head;
    return score;
  }
  const size_t i = *shown;
  const int src = i < item.source_index.size() ? item.source_index[i] : static_cast<int>(i);
  std::string original;
  if (src < 0) {
    original = "appended";
  } else if (i < item.source_letter.size() && !item.source_letter[i].empty()) {
    original = item.source_letter[i];
  } else if (src < 26) {
    original = std::string(1, static_cast<char>('A' + src));
  } else {
    original = std::to_string(src);
  }
  const bool correct = item.options[i].letter == item.answer;
  score.status = DrawStatus::kOk;
  score.outcomes.push_back(Outcome{"correct", correct ? 1.0 : 0.0, correct ? "1" : "0"});
  score.outcomes.push_back(Outcome{"choice", static_cast<double>(src), original});
  return score;
}

}  // namespace nf
