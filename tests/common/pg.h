// PostgreSQL test helpers: the throw-away server scripts/with-postgres starts (its URL in
// NOISEFLOOR_PG_URL) and one fresh schema per test, so tests never see each other's rows.
#pragma once

#include <postgresql/libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

namespace nf::testing {

/// $NOISEFLOOR_PG_URL, or nullopt when unset (the test then skips).
inline std::optional<std::string> pg_base_url() {
  const char* u = std::getenv("NOISEFLOOR_PG_URL");
  if (u == nullptr || *u == '\0') return std::nullopt;
  return std::string(u);
}

#define NF_SKIP_WITHOUT_PG()                                                                          \
  if (!nf::testing::pg_base_url())                                                                    \
  GTEST_SKIP() << "NOISEFLOOR_PG_URL is unset: PostgreSQL store tests need a server "                 \
                  "(run the tests under scripts/with-postgres, as .ci/run does)"

/// A schema of its own for one test: `url` selects it through search_path (PgStore
/// creates it on open); the destructor drops it.
class PgSchema {
 public:
  PgSchema() {
    static std::atomic<int> n{0};
    const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
    name_ = "nftest_" + std::to_string(getpid()) + "_" + std::to_string(n++) + "_" + std::to_string(t % 1000000);
    base_ = pg_base_url().value_or("");
    url_ = base_ + (base_.find('?') == std::string::npos ? "?" : "&") + "options=-csearch_path%3D" + name_;
  }
  ~PgSchema() {
    if (base_.empty()) return;
    PGconn* c = PQconnectdb(base_.c_str());
    if (PQstatus(c) == CONNECTION_OK) {
      PQclear(PQexec(c, "SET client_min_messages = warning"));
      PQclear(PQexec(c, ("DROP SCHEMA IF EXISTS " + name_ + " CASCADE").c_str()));
    }
    PQfinish(c);
  }
  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }
  /// Runs `sql` in this schema and returns the first column of the first row ("" if none
  /// or on error; `error` gets the message).
  std::string query(const std::string& sql, std::string* error = nullptr) const {
    PGconn* c = PQconnectdb(url_.c_str());
    std::string out;
    PGresult* r = PQexec(c, sql.c_str());
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0) out = PQgetvalue(r, 0, 0);
    else if (error != nullptr) *error = PQerrorMessage(c);
    PQclear(r);
    PQfinish(c);
    return out;
  }

 private:
  std::string name_, base_, url_;
};

}  // namespace nf::testing
