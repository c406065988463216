#include "report/figure_labels.h"

#include <map>
#include <set>

#include <fmt/format.h>

namespace nf {

namespace {

constexpr const char* kJoin = " · ";

struct Part {
  std::string name;
  std::string value;
  bool keyed = false;  // from a "k=v,k=v" configuration: shown as "k=v" unless too long
};

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t next = s.find(sep); next != std::string::npos; next = s.find(sep, at)) {
    out.push_back(s.substr(at, next - at));
    at = next + sep.size();
  }
  out.push_back(s.substr(at));
  return out;
}

std::vector<Part> expand(const LabelParts& parts) {
  std::vector<Part> out;
  for (const auto& [name, value] : parts) {
    const auto pieces = split(value, ",");
    bool keyed = value.find('=') != std::string::npos;
    for (const auto& p : pieces) keyed = keyed && p.find('=') != std::string::npos && p.find('=') > 0;
    if (!keyed) {
      out.push_back({name, value, false});
      continue;
    }
    for (const auto& p : pieces) {
      const size_t eq = p.find('=');
      out.push_back({p.substr(0, eq), p.substr(eq + 1), true});
    }
  }
  return out;
}

size_t chars(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Byte offset of code point `cp` in `s` (s.size() past the end).
size_t byte_at(const std::string& s, size_t cp) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (n++ == cp) return i;
  }
  return s.size();
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

std::string middle_truncate(const std::string& text, size_t max_chars) {
  if (max_chars < 3) max_chars = 3;
  const size_t n = chars(text);
  if (n <= max_chars) return text;
  const size_t keep = max_chars - 1;  // the ellipsis is one character
  const size_t head = (keep + 1) / 2, tail = keep - head;
  return text.substr(0, byte_at(text, head)) + "…" + text.substr(byte_at(text, n - tail));
}

ShortLabels short_labels(const std::vector<LabelParts>& rows) {
  ShortLabels out;
  if (rows.empty()) return out;
  std::vector<std::vector<Part>> parts;
  for (const auto& r : rows) {
    parts.push_back(expand(r));
    std::vector<std::string> values;
    for (const auto& [name, value] : r) values.push_back(value);
    out.full.push_back(join(values, kJoin));
  }
  bool same_names = true;
  for (const auto& p : parts) {
    same_names = same_names && p.size() == parts[0].size();
    for (size_t i = 0; same_names && i < p.size(); ++i) same_names = p[i].name == parts[0][i].name;
  }
  std::vector<std::string> labels;
  if (same_names && !parts[0].empty()) {
    std::vector<size_t> shown;
    std::vector<std::string> common;
    for (size_t i = 0; i < parts[0].size(); ++i) {
      bool equal = true;
      for (const auto& p : parts) equal = equal && p[i].value == parts[0][i].value;
      if (equal && rows.size() > 1) common.push_back(parts[0][i].name + " " + parts[0][i].value);
      else shown.push_back(i);
    }
    if (shown.empty()) {  // every row alike: keep the last part
      shown.push_back(parts[0].size() - 1);
      common.pop_back();
    }
    out.common = join(common, "; ");
    for (bool with_keys : {true, false}) {
      labels.clear();
      size_t longest = 0;
      for (const auto& p : parts) {
        std::vector<std::string> v;
        for (size_t i : shown) v.push_back(with_keys && p[i].keyed ? p[i].name + "=" + p[i].value : p[i].value);
        labels.push_back(join(v, kJoin));
        longest = std::max(longest, chars(labels.back()));
      }
      std::vector<std::string> names;
      for (size_t i : shown) names.push_back(parts[0][i].name);
      out.names = join(names, kJoin);
      if (longest <= kMaxLabelChars) break;
    }
  } else {
    // Different shapes: drop the words every row starts or ends with.
    std::vector<std::vector<std::string>> words;
    for (const auto& f : out.full) words.push_back(split(f, kJoin));
    size_t shortest = words[0].size();
    for (const auto& w : words) shortest = std::min(shortest, w.size());
    size_t prefix = 0, suffix = 0;
    auto same_at = [&](auto index) {
      for (const auto& w : words)
        if (w[index(w)] != words[0][index(words[0])]) return false;
      return true;
    };
    while (rows.size() > 1 && prefix + 1 < shortest && same_at([&](const auto&) { return prefix; })) ++prefix;
    while (rows.size() > 1 && prefix + suffix + 1 < shortest &&
           same_at([&](const auto& w) { return w.size() - 1 - suffix; }))
      ++suffix;
    std::vector<std::string> common(words[0].begin(), words[0].begin() + static_cast<std::ptrdiff_t>(prefix));
    common.insert(common.end(), words[0].end() - static_cast<std::ptrdiff_t>(suffix), words[0].end());
    out.common = join(common, "; ");
    for (const auto& w : words)
      labels.push_back(join(std::vector<std::string>(w.begin() + static_cast<std::ptrdiff_t>(prefix),
                                                     w.end() - static_cast<std::ptrdiff_t>(suffix)),
                            kJoin));
  }
  // Cut long labels in the middle unless the cut makes different rows look alike.
  std::map<std::string, std::set<std::string>> cut_of;  // cut label -> the labels cut to it
  for (const auto& l : labels) cut_of[middle_truncate(l)].insert(l);
  std::map<std::string, std::set<std::string>> fulls_of;  // final label -> the full labels behind it
  for (size_t i = 0; i < labels.size(); ++i) {
    const std::string cut = middle_truncate(labels[i]);
    out.labels.push_back(cut_of[cut].size() == 1 ? cut : labels[i]);
    fulls_of[out.labels.back()].insert(out.full[i]);
  }
  // Last resort (rows whose shown parts coincide but whose full labels differ): number them.
  for (size_t i = 0; i < out.labels.size(); ++i) {
    const auto& fulls = fulls_of[out.labels[i]];
    if (fulls.size() < 2) continue;
    const auto pos = std::distance(fulls.begin(), fulls.find(out.full[i]));
    out.labels[i] += fmt::format(" ({})", pos + 1);
  }
  return out;
}

}  // namespace nf
