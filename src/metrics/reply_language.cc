#include "metrics/reply_language.h"


namespace nf {

std::string reply_script(std::string_view t) {
  bool hangul = false, kana = false, han = false, latin = false;
  for (size_t i = 0; i < t.size();) {
    const auto b0 = static_cast<unsigned char>(t[i]);
    if (b0 < 0x80) {
      latin = latin || ((b0 | 0x20) >= 'a' && (b0 | 0x20) <= 'z');
      ++i;
      continue;
    }
    // Three-byte sequences cover every script of interest (U+0800-FFFF).
    if ((b0 & 0xF0) == 0xE0 && i + 2 < t.size()) {
      const auto b1 = static_cast<unsigned char>(t[i + 1]), b2 = static_cast<unsigned char>(t[i + 2]);
      if ((b1 & 0xC0) == 0x80 && (b2 & 0xC0) == 0x80) {
        const unsigned cp = ((b0 & 0x0Fu) << 12) | ((b1 & 0x3Fu) << 6) | (b2 & 0x3Fu);
        hangul = hangul || (cp >= 0x1100 && cp <= 0x11FF) || (cp >= 0x3130 && cp <= 0x318F) ||
                 (cp >= 0xAC00 && cp <= 0xD7AF);
        kana = kana || (cp >= 0x3040 && cp <= 0x30FF);
        han = han || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF);
        i += 3;
        continue;
      }
    }
    ++i;
  }
  if (hangul) return "ko";
  if (kana) return "ja";
  if (han) return "zh";
  if (latin) return "latin";
  return "other";
}

void ReplyLanguageTally::add(std::string_view subject, std::string_view config, std::string_view status,
                             std::string_view content) {
  std::string script = reply_script(content);
  if (last_ == nullptr || subject != last_subject_ || config != last_config_ || script != last_script_) {
    last_subject_.assign(subject);
    last_config_.assign(config);
    last_script_ = std::move(script);
    last_ = &cells_[{last_subject_, last_config_, last_script_}];
  }
  ++last_->first;
  if (status == "parse_error") ++last_->second;
}

nlohmann::json ReplyLanguageTally::rows() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [k, c] : cells_) {
    rows.push_back({{"subject", std::get<0>(k)},
                    {"config", std::get<1>(k)},
                    {"language", std::get<2>(k)},
                    {"answered", c.first},
                    {"parse_error", c.second},
                    {"parse_error_rate", static_cast<double>(c.second) / static_cast<double>(c.first)}});
  }
  return rows;
}

Result<nlohmann::json> parse_error_rate_by_language(Store& store) {
  ReplyLanguageTally tally;
  NF_RETURN_IF_ERROR(store.for_each_answer([&](const std::string& subject, const std::string& config,
                                               const std::string& status, const std::string& content) {
    tally.add(subject, config, status, content);
  }));
  return tally.rows();
}

}  // namespace nf
