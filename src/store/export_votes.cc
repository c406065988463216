#include "store/export_votes.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "store/export_format.h"

namespace nf {

using nlohmann::json;
using store_export::csv_field;

Status export_judgments(Store& store, bool csv, std::ostream& out, size_t* rows) {
  NF_ASSIGN_OR_RETURN(std::vector<JudgmentRow> votes, store.judgments());
  // The judged draws' keys, by draw id (only ok draws are judged).
  std::map<int64_t, DrawKey> keys;
  if (std::any_of(votes.begin(), votes.end(), [](const JudgmentRow& j) { return j.draw_id.has_value(); })) {
    NF_ASSIGN_OR_RETURN(auto draws, store.ok_draws_for_judging());
    for (auto& d : draws) keys.emplace(d.id, std::move(d.key));
  }
  auto key_of = [&](const JudgmentRow& j) -> const DrawKey* {
    if (!j.draw_id) return nullptr;
    auto it = keys.find(*j.draw_id);
    return it == keys.end() ? nullptr : &it->second;
  };
  std::stable_sort(votes.begin(), votes.end(), [&](const JudgmentRow& a, const JudgmentRow& b) {
    return std::tie(a.subject, a.item, a.judge, a.draw_id) < std::tie(b.subject, b.item, b.judge, b.draw_id);
  });
  if (csv)
    out << "subject,subject_provider,item,cluster,judge,judge_provider,label,status,condition,config,replicate,"
           "draw_id\n";
  for (const JudgmentRow& j : votes) {
    const DrawKey* k = key_of(j);
    if (csv) {
      out << csv_field(j.subject) << ',' << csv_field(j.subject_provider) << ',' << csv_field(j.item) << ','
          << csv_field(j.cluster) << ',' << csv_field(j.judge) << ',' << csv_field(j.judge_provider) << ','
          << (j.label ? std::to_string(*j.label) : "") << ',' << csv_field(j.status) << ','
          << (k ? csv_field(k->condition) : "") << ',' << (k ? csv_field(k->config) : "") << ','
          << (k ? std::to_string(k->replicate) : "") << ',' << (j.draw_id ? std::to_string(*j.draw_id) : "") << '\n';
    } else {
      json o;
      o["subject"] = j.subject;
      o["subject_provider"] = j.subject_provider;
      o["item"] = j.item;
      o["cluster"] = j.cluster;
      o["judge"] = j.judge;
      o["judge_provider"] = j.judge_provider;
      o["label"] = j.label ? json(*j.label) : json(nullptr);
      o["status"] = j.status;
      o["condition"] = k ? json(k->condition) : json(nullptr);
      o["config"] = k ? json(k->config) : json(nullptr);
      o["replicate"] = k ? json(k->replicate) : json(nullptr);
      o["draw_id"] = j.draw_id ? json(*j.draw_id) : json(nullptr);
      o["raw_response"] = j.raw_response;
      o["settings"] = j.settings;
      o["created_at"] = j.created_at;
      out << o.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
    }
  }
  out.flush();
  if (!out) return DataLoss("export judgments: write failed");
  if (rows != nullptr) *rows = votes.size();
  return Status::Ok();
}

Status export_human_labels(Store& store, bool csv, std::ostream& out, size_t* rows) {
  NF_ASSIGN_OR_RETURN(std::vector<HumanLabelRow> labels, store.human_labels());
  std::stable_sort(labels.begin(), labels.end(), [](const HumanLabelRow& a, const HumanLabelRow& b) {
    return std::tie(a.rater, a.subject, a.item) < std::tie(b.rater, b.subject, b.item);
  });
  if (csv) out << "rater,subject,item,label\n";
  for (const HumanLabelRow& l : labels) {
    if (csv) {
      out << csv_field(l.rater) << ',' << csv_field(l.subject) << ',' << csv_field(l.item) << ',' << l.label << '\n';
    } else {
      json o{{"rater", l.rater}, {"subject", l.subject}, {"item", l.item}, {"label", l.label}};
      out << o.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
    }
  }
  out.flush();
  if (!out) return DataLoss("export labels: write failed");
  if (rows != nullptr) *rows = labels.size();
  return Status::Ok();
}

}  // namespace nf
