// Integer-coded, dictionary-encoded reads of the ok outcomes (issue 14): the analysis
// input without one heap string per row. See store.h (OutcomeFrame, scan_outcome_codes).
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "store/sqlite_store.h"

namespace nf {
namespace {

/// string -> code, appending new strings to `names`.
class Encoder {
 public:
  explicit Encoder(std::vector<std::string>* names) : names_(names) {
    for (uint32_t i = 0; i < names_->size(); ++i) index_.emplace((*names_)[i], i);
  }
  uint32_t code(std::string_view s) {
    key_.assign(s);
    auto [it, inserted] = index_.try_emplace(key_, static_cast<uint32_t>(names_->size()));
    if (inserted) names_->push_back(key_);
    return it->second;
  }

 private:
  std::vector<std::string>* names_;
  std::unordered_map<std::string, uint32_t> index_;
  std::string key_;
};

std::string_view column_text(sqlite3_stmt* s, int i) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return p == nullptr ? std::string_view() : std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(s, i)));
}

}  // namespace

Status SqliteStore::scan_outcome_codes(bool include_cached, OutcomeDictionaries* dict,
                                 const std::function<void(const OutcomeCodes&)>& fn) {
  std::lock_guard lock(mu_);
  // CROSS JOIN keeps draws as the outer loop, so a draw's outcomes arrive together and
  // its five key strings are encoded once per draw, not once per outcome.
  const char* sql =
      "SELECT d.id, d.subject, d.config, d.condition, d.item, d.cluster, d.replicate, o.name, o.value, o.label "
      "FROM draws d CROSS JOIN outcomes o ON o.draw_id = d.id WHERE d.status = 'ok' AND (?1 OR d.cached = 0)";
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK)
    return DataLoss(fmt::format("store {}: outcome scan: {}", path_, sqlite3_errmsg(db_)));
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> guard(st, sqlite3_finalize);
  sqlite3_bind_int(st, 1, include_cached ? 1 : 0);
  Encoder subjects(&dict->subjects), configs(&dict->configs), conditions(&dict->conditions), items(&dict->items),
      clusters(&dict->clusters), outcomes(&dict->outcomes), labels(&dict->labels);
  OutcomeCodes c;
  int64_t last_draw = -1;
  for (;;) {
    const int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return DataLoss(fmt::format("store {}: outcome scan: {}", path_, sqlite3_errmsg(db_)));
    const int64_t id = sqlite3_column_int64(st, 0);
    if (id != last_draw) {
      last_draw = id;
      c.subject = subjects.code(column_text(st, 1));
      c.config = configs.code(column_text(st, 2));
      c.condition = conditions.code(column_text(st, 3));
      const std::string_view item = column_text(st, 4);
      c.item = items.code(item);
      const std::string_view cluster = column_text(st, 5);
      c.cluster = clusters.code(cluster.empty() ? item : cluster);
      c.cluster_given = !cluster.empty();
      c.replicate = static_cast<int32_t>(sqlite3_column_int64(st, 6));
    }
    c.outcome = outcomes.code(column_text(st, 7));
    c.value = sqlite3_column_double(st, 8);
    c.label = labels.code(column_text(st, 9));
    fn(c);
  }
  return Status::Ok();
}

Result<OutcomeFrame> Store::outcome_frame(bool include_cached) {
  OutcomeFrame f;
  NF_RETURN_IF_ERROR(scan_outcome_codes(include_cached, &f.dict, [&](const OutcomeCodes& c) {
    f.subject.push_back(c.subject);
    f.config.push_back(c.config);
    f.condition.push_back(c.condition);
    f.item.push_back(c.item);
    f.cluster.push_back(c.cluster);
    f.outcome.push_back(c.outcome);
    f.replicate.push_back(c.replicate);
    f.value.push_back(c.value);
    f.label.push_back(c.label);
    f.cluster_given.push_back(c.cluster_given ? 1 : 0);
  }));
  return f;
}

Result<std::vector<OutcomeRow>> Store::outcome_rows(bool include_cached) {
  // The unordered scan, then one sort of row indices by the strings' ranks: the order
  // "subject, config, condition, outcome, item, replicate" with byte-wise string
  // comparison, as SQLite's ORDER BY with the BINARY collation gave it before, at a
  // fraction of the cost (no SQLite sorter over six text columns; issue 14).
  NF_ASSIGN_OR_RETURN(OutcomeFrame f, outcome_frame(include_cached));
  auto ranks = [](const std::vector<std::string>& names) {
    std::vector<uint32_t> order(names.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return names[a] < names[b]; });
    std::vector<uint32_t> rank(names.size());
    for (uint32_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
    return rank;
  };
  const auto rs = ranks(f.dict.subjects), rcf = ranks(f.dict.configs), rcd = ranks(f.dict.conditions),
             ro = ranks(f.dict.outcomes), ri = ranks(f.dict.items);
  std::vector<uint32_t> order(f.size());
  std::iota(order.begin(), order.end(), 0u);
  auto key = [&](uint32_t r) {
    return std::array<int64_t, 6>{rs[f.subject[r]], rcf[f.config[r]], rcd[f.condition[r]],
                                  ro[f.outcome[r]], ri[f.item[r]],  f.replicate[r]};
  };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  std::vector<OutcomeRow> rows(f.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t r = order[i];
    OutcomeRow& o = rows[i];
    o.subject = f.dict.subjects[f.subject[r]];
    o.config = f.dict.configs[f.config[r]];
    o.condition = f.dict.conditions[f.condition[r]];
    o.item = f.dict.items[f.item[r]];
    if (f.cluster_given[r]) o.cluster = f.dict.clusters[f.cluster[r]];
    o.replicate = f.replicate[r];
    o.outcome = f.dict.outcomes[f.outcome[r]];
    o.value = f.value[r];
    o.label = f.dict.labels[f.label[r]];
  }
  return rows;
}

}  // namespace nf
