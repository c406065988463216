// The key columns of the import formats (`import draws`: subject, item, cluster, condition,
// config; `import votes`: subject, subject_provider, item, cluster, judge, judge_provider;
// `import labels`: rater, subject, item): two values of one column that differ only by
// surrounding whitespace ("q1", "q1 ") would silently be two items (two subjects, ...), so
// they are refused; two that differ only by letter case get a warning.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "util/status.h"

namespace nf {

/// `v` for messages: newlines, carriage returns and tabs escaped (\n, \r, \t), cut to 40
/// characters (then "...").
std::string escaped_for_message(std::string_view v);

/// `v` quoted so that surrounding spaces show, for messages: 'q1 ' (escaped as above).
std::string spelled_for_message(std::string_view v);

/// The values met so far in one key column of one file, checked as each row comes:
///  - two values that differ only by surrounding whitespace (ASCII isspace: ' ', \t, \n,
///    \v, \f, \r) are an error, InvalidArgument "path:line: column: values that differ
///    only by surrounding whitespace: 'q1' (first on line 2) and 'q1 ' (first on
///    line 3); they would be two items: remove the spaces" (`line` is the second one's);
///  - a value that is only whitespace is an error ("path:line: column: only whitespace
///    ('  ') ...");
///  - a value holding a control character other than a tab (a line break inside a quoted
///    CSV field, ...) is an error ("path:line: column: a control character ... in 'q\n1'"):
///    it would break every markdown table of the report;
///  - two values that differ only by ASCII letter case ("GPT-4o", "gpt-4o") are kept as
///    two values, with a warning naming both and their first lines (at most
///    kMaxCaseWarnings per column, then one line counting the rest);
///  - a value with surrounding whitespace and no twin is accepted as written (as the
///    category labels of import draws are).
/// Values differing inside ("q 1", "q1") are different values, never twins.
/// Cost: a call that repeats the previous call's value is one string compare; any other
/// call is one hash lookup of the value's trimmed, case-folded form (no allocation unless
/// the value is new). Memory: one hash-map node per distinct value (about 75 bytes on
/// x86-64 with glibc and libstdc++: a 64-byte allocation and its bucket, plus the value's
/// bytes beyond 15), plus a list of the rare values that differ from an earlier one by
/// case only.
class KeySpellings {
 public:
  static constexpr size_t kMaxCaseWarnings = 5;

  /// `path` and `column` name the file and column in messages; `nouns` is the plural for
  /// "they would be two NOUNS" ("items"; default: the column name + "s", '_' as ' ').
  KeySpellings(std::string path, std::string column, std::string nouns = "");

  /// Checks `value` (as the import will store it) of the row on `line` (1-based).
  Status check(std::string_view value, size_t line) { return repeats(value) ? Status::Ok() : check_new(value, line); }

  /// Whether `value` is the previous check's value (then check() has nothing to do): the
  /// per-row fast path, inline so that a row repeating its keys costs a compare each.
  bool repeats(std::string_view value) const { return have_last_ && value == last_; }

  /// check() of a value that is not the previous one.
  Status check_new(std::string_view value, size_t line);

  /// Makes the values met so far those of `other` (with their first lines; not its
  /// warnings): for a column whose values so far were another column's (import draws: a
  /// defaulted cluster is the item). Call before this object checks any value.
  void copy_values_of(const KeySpellings& other) {
    seen_ = other.seen_;
    variants_ = other.variants_;
  }

  /// Appends the case-only warnings (one line each) to `*out`.
  void append_warnings(std::vector<std::string>* out) const;

 private:
  // Hash and equality of the trimmed, ASCII-lower-cased form (transparent: a lookup by
  // string_view allocates nothing).
  struct FoldHash {
    using is_transparent = void;
    size_t operator()(std::string_view v) const;
  };
  struct FoldEq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const;
  };
  std::string path_, column_, nouns_;
  // first spelling of each folded form -> its first line: one 64-byte allocation per
  // distinct value (a 56-byte node: next, the string, the line, the cached hash)
  std::unordered_map<std::string, size_t, FoldHash, FoldEq> seen_;
  // the rare other spellings of a folded form (they differ by case only) with their first
  // lines, by the first spelling (exact match: the default hash and equality)
  std::unordered_map<std::string, std::vector<std::pair<std::string, size_t>>> variants_;
  std::string last_;  // the value of the previous call
  bool have_last_ = false;
  std::vector<std::string> case_notes_;
  size_t more_case_ = 0;  // case twins past kMaxCaseWarnings
};

}  // namespace nf
