// JSONL lines parsed through nlohmann's SAX interface into its DOM builder, with a check
// on each key and each floating-point number (see json_line.h).
#include "data/json_line.h"

#include <cmath>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "util/json_depth.h"

namespace nf {

bool number_underflows(std::string_view text, double v) {
  if (v != 0.0) return std::fpclassify(v) == FP_SUBNORMAL;
  for (char c : text) {
    if (c == 'e' || c == 'E') break;
    if (c >= '1' && c <= '9') return true;
  }
  return false;
}

std::string underflow_message(std::string_view text) {
  return fmt::format("'{}' is out of range: not zero, but below the smallest normal double (2.2e-308), so it would "
                     "be read as 0 or with lost precision (write 0 if it is zero)",
                     text.size() > 40 ? std::string(text.substr(0, 40)) + "..." : std::string(text));
}

namespace {

/// nlohmann's DOM builder with a check on each key (repeated in its object?) and each
/// floating-point number (underflows?). The first problem found is kept in `problem` and
/// stops the parse (the SAX call returns false).
class CheckedJsonDom : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
  using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;
  static constexpr size_t kLinearKeys = 32;  // past this many keys in one object, a hash set

 public:
  explicit CheckedJsonDom(nlohmann::json& out) : Base(out, /*allow_exceptions_=*/true) {}

  bool start_object(std::size_t n) {
    starts_.push_back(keys_.size());
    return Base::start_object(n);
  }
  bool end_object() {
    keys_.resize(starts_.back());
    starts_.pop_back();
    if (big_.size() > starts_.size()) big_.resize(starts_.size());
    return Base::end_object();
  }
  bool key(std::string& k) {
    const size_t depth = starts_.size();  // >= 1: a key is always inside an object
    bool repeated = false;
    if (big_.size() >= depth && !big_[depth - 1].empty()) {
      repeated = !big_[depth - 1].insert(k).second;
    } else {
      for (size_t i = starts_.back(); i < keys_.size() && !repeated; ++i) repeated = keys_[i] == k;
      if (!repeated && keys_.size() - starts_.back() == kLinearKeys) {
        big_.resize(depth);
        big_[depth - 1].insert(keys_.begin() + static_cast<std::ptrdiff_t>(starts_.back()), keys_.end());
        big_[depth - 1].insert(k);
      }
    }
    if (repeated) {
      problem = fmt::format("{}: the key appears twice in one object (a JSON reader keeps only one of them)", k);
      return false;
    }
    keys_.push_back(k);
    return Base::key(k);
  }
  bool number_float(double v, const std::string& text) {
    if (number_underflows(text, v)) {
      problem = (keys_.empty() ? std::string() : keys_.back() + ": ") + underflow_message(text);
      return false;
    }
    return Base::number_float(v, text);
  }

  std::string problem;

 private:
  std::vector<std::string> keys_;  // the keys of the open objects, outermost first
  std::vector<size_t> starts_;     // where each open object's keys start in keys_
  std::vector<std::unordered_set<std::string>> big_;  // per depth: the keys of an object past kLinearKeys
};

}  // namespace

Status parse_json_line(const std::string& path, size_t line, const std::string& text, nlohmann::json* out) {
  NF_RETURN_IF_ERROR(check_json_depth(text, fmt::format("{}:{}", path, line)));
  CheckedJsonDom dom(*out);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(text, &dom);
  } catch (const nlohmann::json::exception& ex) {
    return InvalidArgument(fmt::format("{}:{}: malformed JSON: {}", path, line, ex.what()));
  }
  if (!dom.problem.empty()) return InvalidArgument(fmt::format("{}:{}: {}", path, line, dom.problem));
  if (!ok) return InvalidArgument(fmt::format("{}:{}: malformed JSON", path, line));
  return Status::Ok();
}

}  // namespace nf
