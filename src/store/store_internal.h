// Internal to src/store: what both Store implementations share beyond the interface: the
// dictionary encoder of the integer-coded outcome scan (scan_outcome_codes) and the
// judgment write rules (put_judgments, replace_judgments). One copy each, so the SQLite
// and PostgreSQL stores give the same codes and reject the same rows with the same words.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "store/store.h"

namespace nf::store_internal {

/// The meta keys the store itself writes (schema version, provenance): Store::set_meta_value
/// refuses them, with this message, in both stores.
inline Status check_meta_key_writable(const std::string& key) {
  if (key.empty() || key == "schema_version" || key == "created_by" || key == "tool_version")
    return InvalidArgument(fmt::format("store meta key '{}' is the store's own (or empty): not writable", key));
  return Status::Ok();
}

/// string -> dictionary code, appending new strings to `names` (codes in first-seen
/// order). Guesses first that `s` is the string that followed the previous one last time
/// (outcome names repeat in the same order draw after draw, labels and items repeat),
/// which costs one comparison instead of a hash.
class Encoder {
 public:
  explicit Encoder(std::vector<std::string>* names) : names_(names) {
    for (uint32_t i = 0; i < names_->size(); ++i) index_.emplace((*names_)[i], i);
  }
  uint32_t code(std::string_view s) {
    if (prev_ < next_.size()) {
      const uint32_t guess = next_[prev_];
      if (guess != kNone && (*names_)[guess] == s) return prev_ = guess;
    }
    key_.assign(s);
    auto [it, inserted] = index_.try_emplace(key_, static_cast<uint32_t>(names_->size()));
    if (inserted) names_->push_back(key_);
    if (prev_ != kNone) {
      if (prev_ >= next_.size()) next_.resize(prev_ + 1, kNone);
      next_[prev_] = it->second;
    }
    return prev_ = it->second;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<std::string>* names_;
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<uint32_t> next_;  // code -> the code that followed it last time
  uint32_t prev_ = kNone;
  std::string key_;
};

/// A judgment's key for messages: "(subject S, item I, judge J, draw D|none)".
inline std::string judgment_key(const JudgmentRow& r) {
  return fmt::format("(subject {}, item {}, judge {}, draw {})", r.subject, r.item, r.judge,
                     r.draw_id ? std::to_string(*r.draw_id) : std::string("none"));
}

/// The row checks of put_judgments / replace_judgments (store.h): InvalidArgument naming
/// the store `path` and the key if subject, item or judge is empty, the status is not
/// ok / parse_error / api_error, a label is not 0/1, or an ok row has no label.
inline Status check_judgment(const JudgmentRow& r, const std::string& path) {
  if (r.subject.empty() || r.item.empty() || r.judge.empty())
    return InvalidArgument(fmt::format("store {}: put_judgments {}: subject, item and judge must be non-empty",
                                       path, judgment_key(r)));
  if (r.status != "ok" && r.status != "parse_error" && r.status != "api_error")
    return InvalidArgument(fmt::format("store {}: put_judgments {}: unknown status '{}' (ok, parse_error, api_error)",
                                       path, judgment_key(r), r.status));
  if (r.label && *r.label != 0 && *r.label != 1)
    return InvalidArgument(fmt::format("store {}: put_judgments {}: label must be 0 or 1, got {}", path,
                                       judgment_key(r), *r.label));
  if (r.status == "ok" && !r.label)
    return InvalidArgument(fmt::format("store {}: put_judgments {}: an ok judgment needs a label", path,
                                       judgment_key(r)));
  return Status::Ok();
}

/// The row checks of put_human_labels (store.h): InvalidArgument naming the store `path`
/// and the key if rater, subject or item is empty or the label is not 0/1.
inline Status check_human_label(const HumanLabelRow& r, const std::string& path) {
  if (r.rater.empty() || r.subject.empty() || r.item.empty())
    return InvalidArgument(fmt::format("store {}: put_human_labels (rater {}, subject {}, item {}): rater, subject "
                                       "and item must be non-empty", path, r.rater, r.subject, r.item));
  if (r.label != 0 && r.label != 1)
    return InvalidArgument(fmt::format("store {}: put_human_labels (rater {}, subject {}, item {}): label must be "
                                       "0 or 1, got {}", path, r.rater, r.subject, r.item, r.label));
  return Status::Ok();
}

}  // namespace nf::store_internal
