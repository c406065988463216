// Start-up of the noisefloor binary (issue 14): libcurl and libpq are loaded on first use
// (src/cli/lazy_libs.cc), so a command that makes no HTTP call and opens no PostgreSQL
// store never maps them or the libraries they pull in. The forwarders themselves are used
// by every CLI test that runs against serve-sim (libcurl) or PostgreSQL (libpq).
#include <gtest/gtest.h>

#include "common/test_data.h"

namespace nf {
namespace {

TEST(StartUp, LibcurlAndLibpqAreNotLoadedAtStartUp) {
  testing::TempDir d;
  // LD_TRACE_LOADED_OBJECTS makes the dynamic loader list what it loads and stop (ldd).
  const auto r = testing::run_cli("--version", d.path(), "LD_TRACE_LOADED_OBJECTS=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("libsqlite3"), std::string::npos) << r.out;  // the listing is there
  EXPECT_EQ(r.out.find("libcurl"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libpq"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libgnutls"), std::string::npos) << r.out;  // one that only libcurl needed
}

TEST(StartUp, VersionRunsWithoutThem) {
  testing::TempDir d;
  const auto r = testing::run_cli("--version", d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("noisefloor ", 0), 0u) << r.out;
}

}  // namespace
}  // namespace nf
