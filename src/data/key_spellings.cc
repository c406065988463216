// Whitespace and letter-case twins in key columns. See key_spellings.h for the contract.
#include "data/key_spellings.h"

#include <cctype>
#include <cstdint>

#include <fmt/format.h>

namespace nf {
namespace {

std::string_view trimmed(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

char fold(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

std::string escaped_for_message(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (out.size() >= 40) {
      out += "...";
      break;
    }
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else out += c;
  }
  return out;
}

std::string spelled_for_message(std::string_view v) {
  std::string out = "'";  // appended, not "'" + ...: GCC 12 warns falsely on that (bug 105329)
  out += escaped_for_message(v);
  out += '\'';
  return out;
}

size_t KeySpellings::FoldHash::operator()(std::string_view v) const {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a, 64 bits
  for (char c : trimmed(v)) {
    h ^= static_cast<unsigned char>(fold(c));
    h *= 1099511628211ULL;
  }
  return static_cast<size_t>(h);
}

bool KeySpellings::FoldEq::operator()(std::string_view a, std::string_view b) const {
  a = trimmed(a);
  b = trimmed(b);
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (fold(a[i]) != fold(b[i])) return false;
  return true;
}

KeySpellings::KeySpellings(std::string path, std::string column, std::string nouns)
    : path_(std::move(path)), column_(std::move(column)), nouns_(std::move(nouns)) {
  if (nouns_.empty()) {
    nouns_ = column_ + "s";
    for (char& c : nouns_)
      if (c == '_') c = ' ';
  }
}

Status KeySpellings::check_new(std::string_view value, size_t line) {
  auto it = seen_.find(value);
  if (it == seen_.end()) {
    if (trimmed(value).empty())
      return InvalidArgument(fmt::format("{}:{}: {}: only whitespace ({}): write the name without spaces, or leave "
                                         "the cell empty where the column has a default",
                                         path_, line, column_, spelled_for_message(value)));
    // A line break or another control character in a key breaks every table of the report
    // (markdown rows, CSV exports) and is never meant (tester finding 22.11, session 9).
    for (char c : value)
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
        return InvalidArgument(fmt::format("{}:{}: {}: a control character (line break, ...) in {}: write the "
                                           "name on one line without control characters",
                                           path_, line, column_, spelled_for_message(value)));
    seen_.emplace(std::string(value), line);
  } else if (it->first != value) {
    // The same folded form: this spelling, one that differs by whitespace, or by case
    // (a rare path: copies are fine).
    std::vector<std::pair<std::string, size_t>> spellings{{it->first, it->second}};
    auto v = variants_.find(it->first);
    if (v != variants_.end()) spellings.insert(spellings.end(), v->second.begin(), v->second.end());
    bool known = false;
    for (const auto& s : spellings) known = known || s.first == value;
    if (!known) {
      for (const auto& s : spellings)
        if (trimmed(s.first) == trimmed(value))
          return InvalidArgument(fmt::format(
              "{}:{}: {}: values that differ only by surrounding whitespace: {} (first on line {}) and {} (first on "
              "line {}); they would be two {}: remove the spaces",
              path_, line, column_, spelled_for_message(s.first), s.second, spelled_for_message(value), line, nouns_));
      if (case_notes_.size() < kMaxCaseWarnings)
        case_notes_.push_back(fmt::format("{}: {}: values that differ only by letter case: {} (first on line {}) and "
                                          "{} (first on line {}); they are imported as two {} (fix the spelling if "
                                          "they are one)",
                                          path_, column_, spelled_for_message(it->first), it->second,
                                          spelled_for_message(value), line, nouns_));
      else
        ++more_case_;
      variants_[it->first].emplace_back(std::string(value), line);
    }
  }
  last_.assign(value);
  have_last_ = true;
  return Status::Ok();
}

void KeySpellings::append_warnings(std::vector<std::string>* out) const {
  out->insert(out->end(), case_notes_.begin(), case_notes_.end());
  if (more_case_ > 0)
    out->push_back(fmt::format("{}: {}: {} more {} from an earlier one only by letter case (not listed; they "
                               "are imported as written)",
                               path_, column_, more_case_, more_case_ == 1 ? "value differs" : "values differ"));
}

}  // namespace nf
