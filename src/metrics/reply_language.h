// The parse rate by reply language (issue 13 item 3): MCQ replies in Chinese, Japanese or
// Korean were parse errors before their answer cues were read, and seed 004's MedQA also
// exists in Chinese, so the unparsed share is reported per reply language. The language
// is the reply's script, not a language model's guess.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "util/status.h"

namespace nf {

/// The script of a reply: "ko" if it holds any Hangul (U+1100-11FF, U+3130-318F,
/// U+AC00-D7AF), else "ja" if any Hiragana/Katakana (U+3040-30FF), else "zh" if any CJK
/// ideograph (U+3400-4DBF, U+4E00-9FFF), else "latin" if any ASCII letter, else "other"
/// ("" counts as other). Invalid UTF-8 bytes are skipped.
std::string reply_script(std::string_view text);

/// results.json draws.by_language: one row per (subject, config, language) of the draws
/// the model answered (status ok, parse_error or refused; api_error never counts) with
/// {"subject", "config", "language", "answered", "parse_error", "parse_error_rate"}
/// (parse_error_rate = parse_error / answered), ordered by subject, config, language.
/// Errors: the store's.
Result<nlohmann::json> parse_error_rate_by_language(Store& store);

/// The tally behind parse_error_rate_by_language, one answer at a time, for a caller that
/// reads the draws itself (analyze: Store::status_counts_and_answers reads them once for
/// the status counts and this). add() every draw that is not an api_error; rows() gives
/// the same JSON as parse_error_rate_by_language over those draws.
class ReplyLanguageTally {
 public:
  void add(std::string_view subject, std::string_view config, std::string_view status, std::string_view content);
  nlohmann::json rows() const;

 private:
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<int64_t, int64_t>> cells_;  // answered, parse_error
  // Consecutive draws mostly share subject, config and script: the last cell's counters
  // (map nodes do not move) instead of building a key and searching per draw.
  std::pair<int64_t, int64_t>* last_ = nullptr;
  std::string last_subject_, last_config_, last_script_;
};

}  // namespace nf
