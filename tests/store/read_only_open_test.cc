// Store::open_read_only (issue 15): a store is read without a byte written (not even the
// journal mode), every write fails naming the store, and a store that would need writing
// to be read (an older schema to migrate) is refused with a clear message. The chmod a-w
// case end to end is tests/cli/import_draws_stream_test.cc (run as nobody under root).
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "store/store.h"
#include "store_test_util.h"

namespace nf {
namespace {

using store_test::RawDb;
using store_test::sample_draw;
using store_test::ScratchDir;

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ReadOnlyOpen, ReadsWithoutWritingAndRefusesWrites) {
  ScratchDir dir;
  const std::string path = dir.path("s.sqlite");
  {
    auto s = Store::open(path);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    ASSERT_TRUE((*s)->put_draws({sample_draw("m", "q1", "none", "default", 0),
                                 sample_draw("m", "q1", "none", "default", 1),
                                 sample_draw("m", "q2", "none", "default", 0)})
                    .ok());
  }
  const std::string before = bytes_of(path);
  {
    auto s = Store::open_read_only(path);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    EXPECT_EQ(*(*s)->draw_count(), 3);
    auto rows = (*s)->outcome_rows();
    ASSERT_TRUE(rows.ok()) << rows.status().to_string();
    EXPECT_EQ(rows->size(), 6u);
    auto d = (*s)->get_draw(DrawKey{"m", "q2", "none", "default", 0});
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    EXPECT_EQ(d->content, "answer q2");
    const Status w = (*s)->put_draw(sample_draw("m", "q3", "none", "default", 0));
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.message().find("store " + path + ": "), std::string::npos) << w.message();
    EXPECT_NE(w.message().find("readonly"), std::string::npos) << w.message();
  }
  EXPECT_EQ(bytes_of(path), before);
  auto s = Store::open_existing(path);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->draw_count(), 3);
}

// A schema v3 store (the release before outcome_chunks) is read read-only as it is, without
// the migration that would write it: its readers see an empty chunk table.
TEST(ReadOnlyOpen, ReadsASchemaV3StoreWithoutMigratingIt) {
  ScratchDir dir;
  const std::string path = dir.path("v3.sqlite");
  {
    auto s = Store::open(path);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    ASSERT_TRUE((*s)->put_draws({sample_draw("m", "q1", "none", "default", 0),
                                 sample_draw("m", "q2", "none", "default", 0)})
                    .ok());
  }
  RawDb(path).exec("DROP TABLE outcome_chunks; UPDATE meta SET value = '3' WHERE key = 'schema_version'");
  const std::string before = bytes_of(path);
  {
    auto s = Store::open_read_only(path);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    auto rows = (*s)->outcome_rows();
    ASSERT_TRUE(rows.ok()) << rows.status().to_string();
    EXPECT_EQ(rows->size(), 4u);
    auto d = (*s)->get_draw(DrawKey{"m", "q2", "none", "default", 0});
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    EXPECT_EQ(d->content, "answer q2");
    EXPECT_EQ(d->outcomes.size(), 2u);
  }
  EXPECT_EQ(bytes_of(path), before);
}

TEST(ReadOnlyOpen, RefusesWhatItCannotReadWithoutWriting) {
  ScratchDir dir;
  const std::string old = dir.path("old.sqlite");
  ASSERT_TRUE(Store::open(old).ok());
  RawDb(old).exec("UPDATE meta SET value = '2' WHERE key = 'schema_version'");
  auto s = Store::open_read_only(old);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("store " + old + ": schema version 2 needs migrating to version " +
                                      std::to_string(kStoreSchemaVersion) +
                                      ", which writes the file, but it is opened read-only"),
            std::string::npos)
      << s.status().message();
  const std::string empty = dir.path("empty.sqlite");
  std::ofstream(empty).close();
  s = Store::open_read_only(empty);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kDataLoss) << s.status().to_string();
  s = Store::open_read_only(dir.path("missing.sqlite"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir.path("missing.sqlite")));
}

}  // namespace
}  // namespace nf
