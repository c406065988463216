// Helpers shared by the store tests: a per-test scratch directory, a raw SQLite
// connection for looking under the Store's API, and sample draws.
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/types.h"

namespace nf::store_test {

/// A directory unique to the running test and process, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("nf_store_") + info->test_suite_name() + "_" + info->name() +
                       "_" + std::to_string(::getpid());
    dir_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& file) const { return (dir_ / file).string(); }

 private:
  std::filesystem::path dir_;
};

/// A raw connection to a store file, for checks and for making fixtures.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << "cannot open " << path << ": " << sqlite3_errmsg(db_);
    }
  }
  ~RawDb() { sqlite3_close(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  /// Runs SQL without results; fails the test on error.
  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << (err ? err : "?");
    }
    sqlite3_free(err);
  }
  /// The first column of every row, as text ("NULL" for NULL).
  std::vector<std::string> column(const std::string& sql) {
    std::vector<std::string> out;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return out;
    }
    while (sqlite3_step(s) == SQLITE_ROW) {
      const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
      out.push_back(t ? std::string(t) : std::string("NULL"));
    }
    sqlite3_finalize(s);
    return out;
  }
  /// The single value of a one-row, one-column query ("" if no row).
  std::string one(const std::string& sql) {
    auto c = column(sql);
    return c.empty() ? std::string() : c.front();
  }

 private:
  sqlite3* db_ = nullptr;
};

/// An ok draw with `n_outcomes` outcomes named o0, o1, ... valued (replicate + j) % 2.
inline Draw sample_draw(const std::string& subject, const std::string& item, const std::string& condition,
                        const std::string& config, int replicate, int n_outcomes = 2) {
  Draw d;
  d.key = DrawKey{subject, item, condition, config, replicate};
  d.status = DrawStatus::kOk;
  d.cluster = "cl-" + item;
  d.request = {{"model", subject}, {"messages", {{{"role", "user"}, {"content", item}}}}};
  d.raw_response = R"({"choices":[]})";
  d.content = "answer " + item;
  for (int j = 0; j < n_outcomes; ++j) {
    d.outcomes.push_back({"o" + std::to_string(j), static_cast<double>((replicate + j) % 2), ""});
  }
  return d;
}

}  // namespace nf::store_test
