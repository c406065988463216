// Store::open dispatch (SQLite file or PostgreSQL URL) and the Store interface's default
// answers for the operations only one implementation offers (docs/store.md).
#include <fmt/format.h>

#include "store/pg_store.h"
#include "store/sqlite_store.h"
#include "util/strings.h"

namespace nf {

namespace {

Status not_offered(const Store& s, std::string_view op) {
  return Unimplemented(fmt::format(
      "store {}: {} is not supported by the {} (shared plans and `noisefloor worker` need a PostgreSQL "
      "store: --store postgresql://...; docs/store.md)",
      s.path(), op, s.kind()));
}

}  // namespace

Store::~Store() = default;

bool Store::is_postgresql_url(const std::string& path) {
  return starts_with(path, "postgresql://") || starts_with(path, "postgres://");
}

Result<std::unique_ptr<Store>> Store::open(const std::string& path) {
  if (is_postgresql_url(path)) return PgStore::open(path);
  return SqliteStore::open(path);
}

Status Store::put_items(const std::vector<McqItem>& items) {
  std::vector<ItemRow> rows;
  rows.reserve(items.size());
  for (const McqItem& it : items) {
    nlohmann::json options = nlohmann::json::array();
    for (const McqOption& o : it.options) options.push_back({{"letter", o.letter}, {"text", o.text}});
    rows.push_back({it.id, it.cluster,
                    {{"question", it.question}, {"options", std::move(options)}, {"answer", it.answer}, {"meta", it.meta}}});
  }
  return put_items(rows);
}

Status Store::put_draw_group(const std::vector<std::pair<const Draw*, const std::vector<CacheEntry>*>>& group,
                             std::vector<Status>* statuses) {
  statuses->clear();
  for (const auto& [draw, cache] : group) statuses->push_back(put_draw_with_cache(*draw, *cache));
  return Status::Ok();
}

Status Store::plan_draw_keys(const std::vector<DrawKey>&) { return not_offered(*this, "plan_draw_keys"); }
Result<std::vector<DrawKey>> Store::claim_draws(const std::string&, int, double) {
  return not_offered(*this, "claim_draws");
}
Status Store::renew_leases(const std::string&, double) { return not_offered(*this, "renew_leases"); }
Status Store::put_claimed_draw(const Draw&, const std::vector<CacheEntry>&) {
  return not_offered(*this, "put_claimed_draw");
}
Status Store::put_claimed_draw_group(
    const std::vector<std::pair<const Draw*, const std::vector<CacheEntry>*>>& group, std::vector<Status>* statuses) {
  statuses->clear();
  for (const auto& [draw, cache] : group) statuses->push_back(put_claimed_draw(*draw, *cache));
  return Status::Ok();
}
Store::StagedImport::~StagedImport() = default;
Status Store::StagedImport::add_draw(const DrawKey& key, const std::string&, DrawStatus status, int64_t, int64_t) {
  return Unimplemented(fmt::format("import {}: a draw with status {} (this store imports ok draws only)",
                                   key.to_string(), draw_status_name(status)));
}
Result<std::unique_ptr<Store::StagedImport>> Store::begin_staged_import() {
  return Unimplemented(fmt::format("store {}: a staged import is not offered by the {} (it imports through "
                                   "begin_bulk_import)",
                                   path(), kind()));
}
Result<Store::PlanCounts> Store::plan_counts() { return not_offered(*this, "plan_counts"); }

}  // namespace nf
