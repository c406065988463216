// Long-format draw import (CSV or JSONL). See draws_import.h for the contract.
//
// Both readers stream: the file is read in 1 MiB blocks (CSV) or line by line (JSONL),
// one row is converted at a time and handed to the caller, so memory does not grow with
// the file (issue 14). The CSV reader is a small RFC 4180 parser: fields separated by
// ',', records by CRLF or LF; a field that starts with '"' is quoted, may contain ',',
// CR, LF and '""' (a literal quote), and must be followed by ',' or the end of the record.
#include "data/draws_import.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "data/import_messages.h"
#include "data/json_line.h"
#include "data/key_spellings.h"
#include "util/prefault.h"
#include "util/strings.h"

namespace nf {
namespace {

// The columns the reader knows, required first. `cluster` is optional (defaults to the
// item); `label` and `status` are optional, as `noisefloor export` writes them: the
// outcome's label ("B") and the draw's status (only ok draws carry outcomes, so any other
// status is refused).
enum Col { kSubject, kItem, kCluster, kCondition, kConfig, kReplicate, kOutcome, kValue, kLabel, kStatus, kNumCols };
constexpr int kNumRequired = kValue + 1;
const std::array<const char*, kNumCols> kColName{"subject", "item",    "cluster", "condition", "config",
                                                 "replicate", "outcome", "value", "label", "status"};

using Fields = std::array<std::string_view, kNumCols>;  // absent column = empty view
using RowFn = std::function<Status(const LongDrawRow& row, size_t line)>;

// std::isspace in the "C" locale (the program never sets another), inline: called for
// several fields of every row.
constexpr bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::string_view trim_view(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// "nan", "inf", "infinity" with an optional sign and any case, or "nan(...)": what strtod
// would read as a non-finite double.
bool is_non_finite_word(std::string_view t) {
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) t.remove_prefix(1);
  if (t.empty() || (t[0] != 'n' && t[0] != 'N' && t[0] != 'i' && t[0] != 'I')) return false;  // most values
  const std::string l = to_lower(t);
  return l == "nan" || l == "inf" || l == "infinity" || (starts_with(l, "nan(") && l.back() == ')');
}

enum class NumberParse { kNumber, kNotNumber, kNonFinite, kUnderflow };

/// A decimal number (digits, '.', e/E, signs) -> kNumber with *out; nan/inf spellings and
/// values beyond a double's range (1e999) -> kNonFinite; a non-zero number too small for a
/// normal double (1e-400, 1e-310; number_underflows in data/json_line.h) -> kUnderflow;
/// anything else -> kNotNumber (a category label).
NumberParse parse_number(std::string_view s, double* out) {
  const std::string_view t = trim_view(s);
  if (is_non_finite_word(t)) return NumberParse::kNonFinite;
  if (t.empty() || t.size() > 64) return NumberParse::kNotNumber;
  bool digit = false;
  for (char c : t) {
    if (std::isdigit(static_cast<unsigned char>(c))) digit = true;
    else if (!(c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')) return NumberParse::kNotNumber;
  }
  if (!digit) return NumberParse::kNotNumber;
  {
    // std::from_chars reads the numbers strtod reads here (digits, '.', an exponent, a '-'
    // sign; both correctly rounded) without the copy and the locale; a '+' sign, or a
    // value out of a double's range (1e999, 1e-400), is left to strtod below, which the
    // checks were written for.
    double v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec == std::errc() && end == t.data() + t.size()) {
      if (!std::isfinite(v)) return NumberParse::kNonFinite;
      if (number_underflows(t, v)) return NumberParse::kUnderflow;
      *out = v;
      return NumberParse::kNumber;
    }
  }
  char buf[72];
  std::memcpy(buf, t.data(), t.size());
  buf[t.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(buf, &end);
  if (end != buf + t.size()) return NumberParse::kNotNumber;
  if (!std::isfinite(v)) return NumberParse::kNonFinite;  // overflow: strtod gave +-HUGE_VAL (= inf)
  if (number_underflows(t, v)) return NumberParse::kUnderflow;
  *out = v;
  return NumberParse::kNumber;
}

/// Whether a == b, short strings compared inline: the key fields of a row are short and
/// usually equal to the previous row's, and the out-of-line memcmp behind std::string's ==
/// was 3% of the import's CPU at six compares per row (issue 14).
inline bool same_text(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.size() > 16) return std::memcmp(a.data(), b.data(), a.size()) == 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

/// s = v, unless it already is; whether it changed.
inline bool set_if_changed(std::string& s, std::string_view v) {
  if (same_text(s, v)) return false;
  s.assign(v);
  return true;
}

/// A value as written, for messages: trimmed, escaped (escaped_for_message).
std::string shown(std::string_view v) { return escaped_for_message(trim_view(v)); }

/// A label as written, quoted so that surrounding spaces show: 'B ' (escaped as above).
std::string spelled(std::string_view v) { return spelled_for_message(v); }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

/// What the value checks remember of one outcome (bounded: no rows are kept).
struct OutcomeCheck {
  size_t first_line = 0;                   // the outcome's first row (0 = none yet)
  size_t number_line = 0, label_line = 0;  // first line with a number / a category label (0 = none yet)
  std::string number_text, label_text;     // the value written on that line (shown())
  bool declared_binary = false;
  bool labelled = false;  // a numeric row carried a label column ("B" of an exported choice)
  int64_t rows = 0, zero_one = 0;  // numeric rows, and those equal to 0 or 1
  struct Other {
    double value;
    std::string text;
    size_t line;
    int64_t count;
  };
  std::vector<Other> others;  // distinct non-0/1 numbers, at most kMaxOthers + 1
  // The outcome of the row after the last row of this one (RowConverter::check_of).
  std::pair<const std::string, OutcomeCheck>* next = nullptr;
};
using OutcomeEntry = std::pair<const std::string, OutcomeCheck>;

constexpr size_t kMaxOthers = 5;

/// The distinct spellings of one outcome's labels checked for twins (below): past this
/// many, further spellings are not checked (and a warning says so).
constexpr size_t kMaxCheckedLabels = 100;

/// The spellings met so far of one outcome's labels (category values, or the `label`
/// column of numeric rows), to refuse two that differ only by surrounding whitespace and
/// warn about two that differ only by letter case. Bounded: at most kMaxCheckedLabels
/// spellings per outcome and column.
struct LabelSpellings {
  std::unordered_map<std::string, size_t> first_line;  // spelling as written -> its first line
  std::unordered_map<std::string, std::string> by_trimmed, by_folded;  // trimmed / lower-cased -> first spelling
  bool capped = false;
};

/// Fields of one row -> LongDrawRow, with the per-outcome category maps (first seen = 0)
/// and value checks that must persist across rows.
class RowConverter {
 public:
  RowConverter(const std::string& path, const LongDrawChecks& checks)
      : path_(path),
        keys_{KeySpellings(path, kColName[kSubject]), KeySpellings(path, kColName[kItem]),
              KeySpellings(path, kColName[kCluster]), KeySpellings(path, kColName[kCondition]),
              KeySpellings(path, kColName[kConfig])} {
    for (const auto& name : checks.binary) outcomes_[name].declared_binary = true;
  }

  /// Checks a category label `written` (a value, or the `label` column when `col` is
  /// kLabel) against the outcome's other spellings: whitespace twin -> error, case twin ->
  /// warning.
  Status check_spelling(LabelSpellings& s, const std::string& outcome, std::string_view written, size_t line,
                        int col) {
    if (s.capped) return Status::Ok();
    std::string w(written);
    if (s.first_line.count(w)) return Status::Ok();
    if (s.first_line.size() == kMaxCheckedLabels) {
      s.capped = true;
      notes_.push_back(fmt::format("{}:{}: {}: outcome '{}' has more than {} distinct labels; those past the {}th "
                                   "are not checked for spellings that differ only by whitespace or letter case",
                                   path_, line, kColName[col], outcome, kMaxCheckedLabels, kMaxCheckedLabels));
      return Status::Ok();
    }
    s.first_line.emplace(w, line);
    const std::string t(trim_view(w));
    if (auto [it, fresh] = s.by_trimmed.emplace(t, w); !fresh)
      return InvalidArgument(fmt::format(
          "{}:{}: {}: outcome '{}' has labels that differ only by surrounding whitespace: {} (first on line {}) and "
          "{} (first on line {}); they would be two categories: remove the spaces",
          path_, line, kColName[col], outcome, spelled(it->second), s.first_line.at(it->second), spelled(w), line));
    if (auto [it, fresh] = s.by_folded.emplace(to_lower(t), w); !fresh)
      notes_.push_back(fmt::format("{}: {}: outcome '{}' has labels that differ only by letter case: {} (first on "
                                   "line {}) and {} (first on line {}); they are imported as two categories (fix "
                                   "the spelling if they are one)",
                                   path_, kColName[col], outcome, spelled(it->second), s.first_line.at(it->second),
                                   spelled(w), line));
    return Status::Ok();
  }

  Status convert(size_t line, const Fields& f, LongDrawRow* row) {
    auto err = [&](int col, const std::string& problem) {
      return InvalidArgument(fmt::format("{}:{}: {}: {}", path_, line, kColName[col], problem));
    };
    if (f[kSubject].empty()) return err(kSubject, "empty");
    if (f[kItem].empty()) return err(kItem, "empty");
    // The draw's status: empty = ok. An ok draw has a row per outcome; a draw of any other
    // status has one row, with empty outcome, value and label (it has no outcomes).
    DrawStatus status = DrawStatus::kOk;
    if (const std::string_view st = trim_view(f[kStatus]); !st.empty()) {
      auto parsed = parse_draw_status(st);
      if (!parsed.ok())
        return err(kStatus, fmt::format("'{}': expected ok, parse_error, refused or api_error (empty = ok)", shown(st)));
      status = *parsed;
    }
    const bool ok = status == DrawStatus::kOk;
    if (ok && f[kOutcome].empty())
      return err(kOutcome, "empty (only a row of a parse_error, refused or api_error draw has no outcome: give it "
                           "its status in the status column)");
    if (!ok) {
      for (const int c : {kOutcome, kValue, kLabel})
        if (!trim_view(f[c]).empty())
          return err(c, fmt::format("'{}' on a row of status {}: a draw that is not ok has no outcomes (one row "
                                    "per draw, with empty outcome, value and label)",
                                    shown(f[c]), draw_status_name(status)));
    }
    const bool cluster_defaulted = f[kCluster].empty();
    // `row` is the previous row's: most keys repeat from row to row (a draw's outcomes are
    // adjacent), and a compare costs less than an assign (issue 14). What changed goes to
    // row->changed, for the caller (and below: an unchanged key was checked last row).
    unsigned changed = first_row_ ? LongDrawRow::kChangedAll : 0u;
    first_row_ = false;
    if (set_if_changed(row->subject, f[kSubject])) changed |= LongDrawRow::kChangedSubject;
    if (set_if_changed(row->item, f[kItem])) changed |= LongDrawRow::kChangedItem;
    if (set_if_changed(row->cluster, cluster_defaulted ? f[kItem] : f[kCluster]))
      changed |= LongDrawRow::kChangedCluster;
    if (set_if_changed(row->condition, f[kCondition].empty() ? std::string_view("none") : f[kCondition]))
      changed |= LongDrawRow::kChangedCondition;
    if (set_if_changed(row->config, f[kConfig].empty() ? std::string_view("default") : f[kConfig]))
      changed |= LongDrawRow::kChangedConfig;
    if (set_if_changed(row->outcome, ok ? f[kOutcome] : std::string_view())) changed |= LongDrawRow::kChangedOutcome;
    // Key values that differ only by surrounding whitespace would be two items (subjects,
    // ...): refused; by case: a warning. A string compare per row, a lookup per new value.
    // A defaulted cluster is the item, so while no row has named a cluster the item check
    // covers the cluster column (no second map of the items: a file without a cluster
    // column pays for its items once). At the first named cluster the cluster column
    // takes the values it had so far, the items met before this row, and is checked
    // from then on.
    // A key column the previous row checked with the value this row repeats is not
    // checked again (KeySpellings::repeats would be true): only the changed ones are.
    if (!cluster_defaulted && !cluster_named_) {
      cluster_named_ = true;
      keys_[kCluster].copy_values_of(keys_[kItem]);
      changed |= LongDrawRow::kChangedCluster;  // not checked before: check it now
    }
    row->changed = changed;
    for (const auto& [col, value, bit] :
         {std::tuple<int, const std::string*, unsigned>{kSubject, &row->subject, LongDrawRow::kChangedSubject},
          {kItem, &row->item, LongDrawRow::kChangedItem},
          {kCluster, &row->cluster, LongDrawRow::kChangedCluster},
          {kCondition, &row->condition, LongDrawRow::kChangedCondition},
          {kConfig, &row->config, LongDrawRow::kChangedConfig}})
      if ((changed & bit) != 0 && (col != kCluster || cluster_named_) && !keys_[col].repeats(*value))
        NF_RETURN_IF_ERROR(keys_[col].check_new(*value, line));

    const std::string_view rep = trim_view(f[kReplicate]);
    if (rep.empty()) return err(kReplicate, "empty, expected a non-negative integer");
    for (char c : rep)
      if (!std::isdigit(static_cast<unsigned char>(c)))
        return err(kReplicate, fmt::format("expected a non-negative integer, got '{}'", rep));
    if (rep.size() > 9) return err(kReplicate, fmt::format("'{}' is out of range", rep));
    int r = 0;
    for (char c : rep) r = r * 10 + (c - '0');
    const bool same_draw = (changed & kKeyBits) == 0 && row->replicate == r;  // as the previous row's
    row->replicate = r;
    row->status = status;
    // The rows of one draw agree on its status, and a draw that is not ok has one row: here
    // for adjacent rows (the usual layout); the import's store finds the others.
    if (same_draw && (status != prev_status_ || !ok)) {
      const DrawKey key{row->subject, row->item, row->condition, row->config, r};
      if (status != prev_status_)
        return status_conflict_error(path_, line, key, draw_status_name(status), prev_line_,
                                     draw_status_name(prev_status_));
      return second_status_row_error(path_, line, key, draw_status_name(status), prev_line_);
    }
    if (!same_draw) prev_line_ = line;
    prev_status_ = status;
    if (!ok) {
      row->value = 0.0;
      if (set_if_changed(row->label, std::string_view())) row->changed |= LongDrawRow::kChangedLabel;
      return Status::Ok();
    }

    const std::string_view v = f[kValue];
    const std::string_view tv = trim_view(v);
    double num = 0;
    if (tv.empty()) return err(kValue, "empty");
    OutcomeCheck& oc = check_of(row->outcome, (changed & LongDrawRow::kChangedOutcome) != 0);
    if (oc.first_line == 0) {  // a new outcome name: is it another one's with spaces around?
      oc.first_line = line;
      const std::string t(trim_view(row->outcome));
      if (auto [it, fresh] = outcome_by_trimmed_.emplace(t, row->outcome); !fresh)
        return err(kOutcome, fmt::format("outcome names that differ only by surrounding whitespace: {} (first on line "
                                         "{}) and {} (first on line {}); they would be two outcomes: remove the "
                                         "spaces",
                                         spelled(it->second), outcomes_.at(it->second).first_line,
                                         spelled(row->outcome), line));
    }
    bool is_number = true;
    if (iequals(tv, "true") || iequals(tv, "false")) {
      const bool t = iequals(tv, "true");
      row->value = t ? 1.0 : 0.0;
      if (set_if_changed(row->label, t ? "true" : "false")) row->changed |= LongDrawRow::kChangedLabel;
    } else if (const NumberParse p = parse_number(v, &num); p == NumberParse::kNumber) {
      row->value = num;
      // kept as exported ("B" for a choice), "" when absent
      if (set_if_changed(row->label, f[kLabel])) row->changed |= LongDrawRow::kChangedLabel;
      if (!row->label.empty()) {
        oc.labelled = true;
        NF_RETURN_IF_ERROR(check_spelling(label_column_[row->outcome], row->outcome, row->label, line, kLabel));
      }
    } else if (p == NumberParse::kUnderflow) {
      return err(kValue, underflow_message(tv));
    } else if (p == NumberParse::kNonFinite) {
      return err(kValue, fmt::format("'{}' is not a finite number (nan, inf and values beyond a double's range are "
                                     "refused; leave a missing outcome out instead of writing a row for it)",
                                     shown(tv)));
    } else {
      is_number = false;
    }
    if (oc.declared_binary && !(is_number && (row->value == 0.0 || row->value == 1.0)))
      return err(kValue, fmt::format("outcome '{}' is declared binary (--binary): expected 0, 1, true or false, "
                                     "got '{}'",
                                     row->outcome, shown(tv)));
    if (is_number) {
      if (oc.label_line != 0) return mixed(line, row->outcome, oc, shown(tv), true);
      if (oc.number_line == 0) oc.number_line = line, oc.number_text = shown(tv);
      ++oc.rows;
      if (row->value == 0.0 || row->value == 1.0) {
        ++oc.zero_one;
      } else if (oc.others.size() <= kMaxOthers) {
        auto it = std::find_if(oc.others.begin(), oc.others.end(),
                               [&](const OutcomeCheck::Other& o) { return o.value == row->value; });
        if (it != oc.others.end()) ++it->count;
        else oc.others.push_back({row->value, shown(tv), line, 1});
      }
      return Status::Ok();
    }
    if (oc.number_line != 0) return mixed(line, row->outcome, oc, shown(tv), false);
    if (oc.label_line == 0) oc.label_line = line, oc.label_text = shown(tv);
    auto& cats = categories_[row->outcome];
    auto [it, inserted] = cats.emplace(std::string(v), static_cast<int>(cats.size()));
    if (inserted) NF_RETURN_IF_ERROR(check_spelling(value_labels_[row->outcome], row->outcome, v, line, kValue));
    row->value = it->second;
    if (set_if_changed(row->label, v)) row->changed |= LongDrawRow::kChangedLabel;
    return Status::Ok();
  }

  /// The checks decided at the end of the file: a declared binary outcome with no row is
  /// an error; an outcome that looks binary with a few exceptions is a warning.
  Status finish(std::vector<std::string>* warnings) const {
    std::vector<std::string> names;
    for (const auto& [name, oc] : outcomes_) names.push_back(name);
    std::sort(names.begin(), names.end());
    std::vector<std::string> seen;
    for (const auto& name : names) {
      const OutcomeCheck& oc = outcomes_.at(name);
      if (oc.number_line != 0 || oc.label_line != 0) seen.push_back(name);
    }
    for (const auto& name : names) {
      const OutcomeCheck& oc = outcomes_.at(name);
      if (oc.declared_binary && oc.number_line == 0 && oc.label_line == 0)
        return InvalidArgument(fmt::format("{}: --binary: outcome '{}' has no row in the file (outcomes: {}){}", path_,
                                           name, join(seen, ", "), did_you_mean(name, seen)));
    }
    if (warnings == nullptr) return Status::Ok();
    for (const KeySpellings& k : keys_) k.append_warnings(warnings);
    warnings->insert(warnings->end(), notes_.begin(), notes_.end());
    for (const auto& name : names) {
      const OutcomeCheck& oc = outcomes_.at(name);
      if (oc.declared_binary || oc.labelled || oc.label_line != 0 || oc.zero_one == 0 || oc.others.empty() ||
          oc.others.size() > kMaxOthers)
        continue;
      int64_t n_other = 0;
      for (const auto& o : oc.others) n_other += o.count;
      if (n_other * 10 >= oc.rows) continue;
      std::vector<std::string> parts;
      for (const auto& o : oc.others)
        parts.push_back(fmt::format("{} ({} row{}, first on line {})", o.text, o.count, o.count == 1 ? "" : "s",
                                    o.line));
      warnings->push_back(fmt::format(
          "{}: value: outcome '{}' looks binary but {} of its {} values are not 0/1: {}; they are imported as "
          "written and enter its means (fix them, or import with --binary {} to refuse them)",
          path_, name, n_other, oc.rows, join(parts, ", "), name));
    }
    return Status::Ok();
  }

 private:
  // The check of `outcome`; `changed`: whether it differs from the previous row's. Rows
  // often repeat one outcome, or cycle through a draw's outcomes in the same order: each
  // outcome remembers the one that followed it last, tried before the hash lookup (issue
  // 14: a lookup per row was 2% of the import).
  OutcomeCheck& check_of(const std::string& outcome, bool changed) {
    if (last_ != nullptr && !changed) return last_->second;
    OutcomeEntry* const prev = last_;
    if (prev != nullptr && prev->second.next != nullptr && same_text(prev->second.next->first, outcome)) {
      last_ = prev->second.next;
    } else {
      last_ = &*outcomes_.try_emplace(outcome).first;
      if (prev != nullptr) prev->second.next = last_;
    }
    return last_->second;
  }

  Status mixed(size_t line, const std::string& outcome, const OutcomeCheck& oc, const std::string& value,
               bool value_is_number) const {
    const std::string number = value_is_number ? value : oc.number_text;
    const std::string label = value_is_number ? oc.label_text : value;
    const size_t number_line = value_is_number ? line : oc.number_line;
    const size_t label_line = value_is_number ? oc.label_line : line;
    return InvalidArgument(fmt::format(
        "{}:{}: value: outcome '{}' mixes numbers and non-numeric values: '{}' on line {} is a number, '{}' on line "
        "{} is not (first of each); an outcome's values are all numbers (true/false = 1/0) or all category "
        "labels: fix the typo, or give the labels an outcome name of their own",
        path_, line, outcome, number, number_line, label, label_line));
  }

  static constexpr unsigned kKeyBits = LongDrawRow::kChangedSubject | LongDrawRow::kChangedItem |
                                      LongDrawRow::kChangedCondition | LongDrawRow::kChangedConfig;
  const std::string& path_;
  DrawStatus prev_status_ = DrawStatus::kOk;  // the previous row's draw status
  size_t prev_line_ = 0;                      // the first line of the previous row's draw
  std::array<KeySpellings, kConfig + 1> keys_;  // by Col: subject, item, cluster, condition, config
  bool cluster_named_ = false;                  // a row so far had a non-empty cluster
  bool first_row_ = true;                       // convert has not been called yet
  std::unordered_map<std::string, std::unordered_map<std::string, int>> categories_;  // outcome -> label -> index
  std::unordered_map<std::string, OutcomeCheck> outcomes_;  // pointers stay valid as it grows
  OutcomeEntry* last_ = nullptr;  // the last row's outcome
  // outcome -> spellings of its category values / of its `label` column (numeric rows)
  std::unordered_map<std::string, LabelSpellings> value_labels_, label_column_;
  std::unordered_map<std::string, std::string> outcome_by_trimmed_;  // trimmed outcome name -> as first written
  std::vector<std::string> notes_;  // warnings found while reading (letter-case twins, a capped check)
};

/// Buffered RFC 4180 record reader over a FILE. The file is read in blocks of 1 MiB (a
/// block grows to hold a longer record); a field is a view into the block (a quoted field
/// without "" too), so a record costs no copy unless a field holds a "" (decoded into a
/// scratch string). A record that runs past the block's end is moved to the front and
/// parsed again once more of the file is read (issue 14: half the instructions of
/// appending each field to a std::string).
class CsvReader {
 public:
  CsvReader(const std::string& path, std::FILE* f) : path_(path), f_(f) {
    buf_.reserve(1 << 20);
    prefault_for_write(buf_.data(), 1 << 20);  // one call, not a fault per page
    buf_.resize(1 << 20);
    refill(0);
    if (len_ >= 3 && std::memcmp(buf_.data(), "\xEF\xBB\xBF", 3) == 0) pos_ = 3;  // UTF-8 BOM
  }

  /// Reads the next non-blank record into fields[0, *count) (views valid until the next
  /// call); false at end of file. `*line` is the 1-based line on which the record starts.
  Result<bool> next(std::vector<std::string_view>& fields, size_t* count, size_t* line) {
    for (;;) {
      if (pos_ == len_ && !refill(pos_)) return false;
      const size_t start_line = line_;
      NF_ASSIGN_OR_RETURN(const Parse parsed, parse_record(fields, count));
      if (parsed == Parse::kNeedMore) {  // the record runs past the block: keep it, read on, parse it again
        line_ = start_line;
        refill(pos_);
        continue;
      }
      // Blank lines (a single empty field) are skipped.
      if (*count == 1 && fields[0].empty()) continue;
      *line = start_line;
      return true;
    }
  }

 private:
  enum class Parse { kRecord, kNeedMore };

  // One record from pos_ (not at the block's end). kNeedMore (pos_ unchanged) when the
  // block ends inside it and the file has more; at the end of the file the record ends.
  Result<Parse> parse_record(std::vector<std::string_view>& fields, size_t* count) {
    const char* const b = buf_.data();
    const char* const e = b + len_;
    const char* p = b + pos_;
    size_t n = 0;
    for (;;) {
      if (n == fields.size()) fields.emplace_back();
      const size_t col = n + 1;  // 1-based field number, for messages
      if (p < e && *p == '"') {
        const size_t open_line = line_;
        const char* q = p + 1;
        const char* content = q;
        std::string* scratch = nullptr;  // set once a "" is met
        for (;;) {
          const char* r = static_cast<const char*>(std::memchr(q, '"', static_cast<size_t>(e - q)));
          const char* seg_end = r == nullptr ? e : r;
          line_ += static_cast<size_t>(std::count(q, seg_end, '\n'));
          if (r == nullptr || r + 1 == e) {  // the quote's meaning depends on what follows
            if (!eof_) return Parse::kNeedMore;
            if (r == nullptr)
              return InvalidArgument(fmt::format("{}:{}: field {}: malformed CSV: unterminated quoted field", path_,
                                                 open_line, col));
          }
          if (r + 1 < e && r[1] == '"') {  // "" is a literal quote
            if (scratch == nullptr) {
              if (n >= scratch_.size()) scratch_.resize(n + 1);
              scratch = &scratch_[n];
              scratch->clear();
            }
            scratch->append(q, r + 1);
            q = r + 2;
            continue;
          }
          if (scratch != nullptr) {
            scratch->append(q, r);
            fields[n] = *scratch;
          } else {
            fields[n] = std::string_view(content, static_cast<size_t>(r - content));
          }
          p = r + 1;
          break;
        }
        if (p < e && *p != ',' && *p != '\n' && *p != '\r')
          return InvalidArgument(fmt::format("{}:{}: field {}: malformed CSV: '{}' after a closing quote (a quote "
                                             "inside a quoted field is written \"\")",
                                             path_, line_, col, *p));
      } else {
        const char* q = p;
        while (q < e && !kStop[static_cast<unsigned char>(*q)]) ++q;
        if (q == e && !eof_) return Parse::kNeedMore;
        if (q < e && *q == '"')
          return InvalidArgument(fmt::format("{}:{}: field {}: malformed CSV: quote inside an unquoted field "
                                             "(quote the whole field and write the quote as \"\")",
                                             path_, line_, col));
        fields[n] = std::string_view(p, static_cast<size_t>(q - p));
        p = q;
      }
      ++n;
      if (p == e) break;  // the end of the file (else kNeedMore was returned above)
      if (*p == ',') {
        ++p;
        continue;
      }
      // CR, LF or CRLF
      if (*p == '\r') {
        if (p + 1 == e && !eof_) return Parse::kNeedMore;  // is an LF next?
        ++p;
        if (p < e && *p == '\n') ++p;
      } else {
        ++p;
      }
      ++line_;
      break;
    }
    *count = n;
    pos_ = static_cast<size_t>(p - b);
    return Parse::kRecord;
  }

  // Keeps the unread bytes from `from` (moved to the block's front) and reads more of the
  // file after them, doubling the block when they fill it; false if nothing was read.
  bool refill(size_t from) {
    const size_t kept = len_ - from;
    if (kept > 0 && from > 0) std::memmove(buf_.data(), buf_.data() + from, kept);
    if (kept == buf_.size()) buf_.resize(buf_.size() * 2);
    pos_ = 0;
    len_ = kept;
    if (eof_) return false;
    const size_t want = buf_.size() - kept;
    const size_t got = std::fread(buf_.data() + kept, 1, want, f_);
    if (got < want) eof_ = true;  // fread returns short only at the end of the file (or an error)
    len_ += got;
    return got > 0;
  }

  // The bytes that end an unquoted field (or are an error in it).
  static constexpr std::array<bool, 256> kStop = [] {
    std::array<bool, 256> t{};
    t[','] = t['\n'] = t['\r'] = t['"'] = true;
    return t;
  }();

  const std::string& path_;
  std::FILE* f_;
  std::vector<char> buf_;
  std::deque<std::string> scratch_;  // per field: a quoted field with "" decoded (a deque: growing it moves none)
  size_t pos_ = 0, len_ = 0, line_ = 1;
  bool eof_ = false;
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

Result<std::unique_ptr<std::FILE, FileCloser>> open_input(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) return InvalidArgument(path + ": is a directory, expected a file");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return InvalidArgument(path + ": cannot open: " + std::strerror(errno));
  return std::unique_ptr<std::FILE, FileCloser>(f);
}

Status stream_csv(const std::string& path, const RowFn& fn, const LongDrawChecks& checks,
                  std::vector<std::string>* warnings) {
  NF_ASSIGN_OR_RETURN(auto file, open_input(path));
  CsvReader reader(path, file.get());
  std::vector<std::string_view> fields;
  size_t count = 0, line = 0;
  NF_ASSIGN_OR_RETURN(bool has_header, reader.next(fields, &count, &line));
  if (!has_header) return InvalidArgument(fmt::format("{}:1: empty file, expected a header row", path));
  const size_t header_line = line, header_fields = count;
  std::map<std::string, size_t> index;
  for (size_t c = 0; c < count; ++c) {
    const std::string name = trim(fields[c]);
    if (index.count(name))
      return InvalidArgument(fmt::format("{}:{}: {}: duplicate column in the header", path, header_line, name));
    index[name] = c;
  }
  std::vector<std::string> present;
  for (const auto& [k, v] : index) present.push_back(k);
  std::array<int, kNumCols> at;
  at.fill(-1);
  for (int c = 0; c < kNumCols; ++c) {
    if (auto it = index.find(kColName[c]); it != index.end()) at[c] = static_cast<int>(it->second);
    if (at[c] < 0 && c < kNumRequired && c != kCluster)  // cluster is optional: defaults to the item
      // A header cell within edit distance is probably a typo of this column.
      return InvalidArgument(fmt::format("{}:{}: {}: missing column{}", path, header_line, kColName[c],
                                         did_you_mean(kColName[c], present)));
  }
  RowConverter conv(path, checks);
  LongDrawRow row;
  Fields f;
  bool any = false;
  for (;;) {
    NF_ASSIGN_OR_RETURN(bool more, reader.next(fields, &count, &line));
    if (!more) break;
    if (count != header_fields)
      return InvalidArgument(fmt::format("{}:{}: expected {} fields as in the header, found {}", path, line,
                                         header_fields, count));
    for (int c = 0; c < kNumCols; ++c) f[c] = at[c] < 0 ? std::string_view() : fields[at[c]];
    NF_RETURN_IF_ERROR(conv.convert(line, f, &row));
    NF_RETURN_IF_ERROR(fn(row, line));
    any = true;
  }
  if (!any) return InvalidArgument(fmt::format("{}: no rows (the header is the only record): nothing to import", path));
  return conv.finish(warnings);
}

/// The text of each known column of one JSONL row (present[c] false = absent).
struct JsonRow {
  std::array<std::string, kNumCols> text;
  std::array<bool, kNumCols> present{};
  void set(int c, std::string v) {
    text[c] = std::move(v);
    present[c] = true;
  }
  Fields view() const {
    Fields f;
    for (int c = 0; c < kNumCols; ++c) f[c] = present[c] ? std::string_view(text[c]) : std::string_view();
    return f;
  }
};

/// Expands one exported draw object into long rows (one per outcome). The draw's fields
/// become the key columns; an outcome needs a string name and a numeric value.
Status expand_draw_line(const std::string& path, size_t line_no, const nlohmann::json& j,
                        const std::function<Status(const JsonRow&)>& emit, bool* skipped_ok) {
  *skipped_ok = false;
  const nlohmann::json& outs = j["outcomes"];
  if (!outs.is_array())
    return InvalidArgument(fmt::format("{}:{}: outcomes: expected an array, found {}", path, line_no, outs.type_name()));
  JsonRow base;
  for (int c : {kSubject, kItem, kCluster, kCondition, kConfig, kStatus}) {
    auto it = j.find(kColName[c]);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string())
      return InvalidArgument(
          fmt::format("{}:{}: {}: expected a string, found {}", path, line_no, kColName[c], it->type_name()));
    base.set(c, it->get<std::string>());
  }
  auto rep = j.find("replicate");
  if (rep == j.end() || !rep->is_number_integer())
    return InvalidArgument(fmt::format("{}:{}: replicate: expected a non-negative integer", path, line_no));
  base.set(kReplicate, rep->dump());
  if (outs.empty()) {
    // A draw without outcomes: one row if it is not ok (parse_error, refused, api_error);
    // an ok one (a chat study's draw, scored by judge votes) has nothing to import here:
    // the caller counts it and says so.
    const std::string_view status = base.present[kStatus] ? trim_view(base.text[kStatus]) : std::string_view();
    if (status.empty() || status == "ok") {
      *skipped_ok = true;
      return Status::Ok();
    }
    return emit(base);
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    const nlohmann::json& o = outs[k];
    const std::string where = fmt::format("{}:{}: outcomes[{}]", path, line_no, k);
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string() || !o.contains("value") ||
        !o["value"].is_number())
      return InvalidArgument(where + ": expected {\"name\": string, \"value\": number, \"label\": string}");
    JsonRow row = base;
    row.set(kOutcome, o["name"].get<std::string>());
    row.set(kValue, o["value"].dump());
    if (auto l = o.find("label"); l != o.end() && l->is_string()) row.set(kLabel, l->get<std::string>());
    NF_RETURN_IF_ERROR(emit(row));
  }
  return Status::Ok();
}

Status stream_jsonl(const std::string& path, const RowFn& fn, const LongDrawChecks& checks,
                    std::vector<std::string>* warnings) {
  NF_ASSIGN_OR_RETURN(auto file, open_input(path));
  file.reset();
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(path + ": cannot open: " + std::strerror(errno));
  RowConverter conv(path, checks);
  LongDrawRow out;
  std::string line;
  size_t line_no = 0;
  bool any = false;
  size_t skipped_ok = 0, first_skipped = 0;  // ok draw lines without outcomes
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    auto emit = [&](const JsonRow& row) -> Status {
      NF_RETURN_IF_ERROR(conv.convert(line_no, row.view(), &out));
      any = true;
      return fn(out, line_no);
    };
    nlohmann::json j;
    NF_RETURN_IF_ERROR(parse_json_line(path, line_no, line, &j));
    if (!j.is_object()) return InvalidArgument(fmt::format("{}:{}: expected a JSON object", path, line_no));
    if (j.contains("outcomes") && !j.contains("outcome")) {
      // One draw per line, as `noisefloor export --format jsonl` writes it: expand its
      // outcomes array [{name, value, label}] into long rows.
      bool skipped = false;
      NF_RETURN_IF_ERROR(expand_draw_line(path, line_no, j, emit, &skipped));
      if (skipped && skipped_ok++ == 0) first_skipped = line_no;
      continue;
    }
    JsonRow row;
    // A row of a draw that is not ok may leave outcome and value out (or null).
    const auto st = j.find(kColName[kStatus]);
    const bool not_ok = st != j.end() && st->is_string() && !trim(st->get<std::string>()).empty() &&
                        trim(st->get<std::string>()) != "ok";
    for (int c = 0; c < kNumRequired; ++c) {
      auto it = j.find(kColName[c]);
      if (it == j.end() || it->is_null()) {
        if (c == kCluster || (not_ok && (c == kOutcome || c == kValue))) continue;
        return InvalidArgument(fmt::format("{}:{}: {}: missing", path, line_no, kColName[c]));
      }
      if (it->is_string()) {
        row.set(c, it->get<std::string>());
      } else if (it->is_number_integer()) {
        row.set(c, it->dump());
      } else if (it->is_number_float()) {
        if (c == kReplicate)
          return InvalidArgument(fmt::format("{}:{}: replicate: expected a non-negative integer, got {}", path, line_no,
                                             it->dump()));
        row.set(c, it->dump());
      } else if (it->is_boolean() && c == kValue) {
        row.set(c, it->get<bool>() ? "true" : "false");
      } else {
        return InvalidArgument(fmt::format("{}:{}: {}: expected a string or a number, found {}", path, line_no,
                                           kColName[c], it->type_name()));
      }
    }
    for (int c : {kLabel, kStatus}) {
      auto it = j.find(kColName[c]);
      if (it == j.end() || it->is_null()) continue;
      if (!it->is_string())
        return InvalidArgument(
            fmt::format("{}:{}: {}: expected a string, found {}", path, line_no, kColName[c], it->type_name()));
      row.set(c, it->get<std::string>());
    }
    NF_RETURN_IF_ERROR(emit(row));
  }
  // Ok draws without outcomes (a chat study's, scored by judge votes) carry nothing the
  // long format holds: said, never skipped silently.
  const std::string skipped_note =
      skipped_ok == 0 ? std::string()
                      : fmt::format("{} ok draw line{} without outcomes (first on line {}) skipped: an ok draw is "
                                    "imported through its outcomes (a chat study's draws are scored by judge votes: "
                                    "export --what judgments, import votes)",
                                    skipped_ok, skipped_ok == 1 ? "" : "s", first_skipped);
  if (!any) {
    if (skipped_ok > 0) return InvalidArgument(fmt::format("{}: no rows: {}; nothing to import", path, skipped_note));
    return InvalidArgument(fmt::format("{}: no rows (no JSON object in the file): nothing to import", path));
  }
  NF_RETURN_IF_ERROR(conv.finish(warnings));
  if (skipped_ok > 0 && warnings != nullptr) warnings->push_back(path + ": " + skipped_note);
  return Status::Ok();
}

}  // namespace

Status for_each_long_draw(const std::string& path, const RowFn& fn, const LongDrawChecks& checks,
                          std::vector<std::string>* warnings) {
  const std::string lower = to_lower(path);
  auto ends_with = [&](std::string_view suf) {
    return lower.size() >= suf.size() && lower.compare(lower.size() - suf.size(), suf.size(), suf) == 0;
  };
  const bool csv = ends_with(".csv");
  const bool jsonl = ends_with(".jsonl") || ends_with(".json");
  if (!csv && !jsonl)
    return InvalidArgument(fmt::format("{}: unknown file extension, expected .csv, .jsonl or .json", path));
  return csv ? stream_csv(path, fn, checks, warnings) : stream_jsonl(path, fn, checks, warnings);
}

Result<std::vector<LongDrawRow>> read_long_draws(const std::string& path, const LongDrawChecks& checks,
                                                 std::vector<std::string>* warnings) {
  std::vector<LongDrawRow> out;
  std::map<std::tuple<std::string, std::string, std::string, std::string, int, std::string>, size_t> seen;
  std::map<DrawKey, std::pair<DrawStatus, size_t>> draw_status;  // each draw's status and first line
  const Status scanned = for_each_long_draw(path, [&](const LongDrawRow& row, size_t line) -> Status {
    const DrawKey dk{row.subject, row.item, row.condition, row.config, row.replicate};
    auto [ds, fresh] = draw_status.try_emplace(dk, row.status, line);
    if (!fresh && ds->second.first != row.status)
      return status_conflict_error(path, line, dk, draw_status_name(row.status), ds->second.second,
                                   draw_status_name(ds->second.first));
    if (!fresh && row.status != DrawStatus::kOk)
      return second_status_row_error(path, line, dk, draw_status_name(row.status), ds->second.second);
    auto key = std::make_tuple(row.subject, row.item, row.condition, row.config, row.replicate, row.outcome);
    if (auto d = seen.find(key); d != seen.end())
      return duplicate_row_error(path, line, dk, row.outcome, d->second);
    seen.emplace(std::move(key), line);
    out.push_back(row);
    out.back().changed = LongDrawRow::kChangedAll;  // the streaming-only field at its default
    return Status::Ok();
  }, checks, warnings);
  NF_RETURN_IF_ERROR(scanned);
  return out;
}

size_t find_long_draw_line(const std::string& path, const LongDrawRow& key) {
  size_t found = 0;
  (void)for_each_long_draw(path, [&](const LongDrawRow& r, size_t line) -> Status {
    if (r.subject == key.subject && r.item == key.item && r.condition == key.condition && r.config == key.config &&
        r.replicate == key.replicate && r.outcome == key.outcome) {
      found = line;
      return Internal("found");  // stops the scan
    }
    return Status::Ok();
  });
  return found;
}

bool find_long_draw_first(const std::string& path, const DrawKey& key, size_t* line, DrawStatus* status) {
  bool found = false;
  (void)for_each_long_draw(path, [&](const LongDrawRow& r, size_t l) -> Status {
    if (r.subject == key.subject && r.item == key.item && r.condition == key.condition && r.config == key.config &&
        r.replicate == key.replicate) {
      found = true;
      *line = l;
      *status = r.status;
      return Internal("found");  // stops the scan
    }
    return Status::Ok();
  });
  return found;
}

}  // namespace nf
