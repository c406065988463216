// hold_run_lock, store/run_lock.h (issue 31 item 1): one process at a time calls the API for a store.
// Two `noisefloor run` processes on one store both read the same missing draws at start
// and both paid for every call; the lock refuses the second one, naming the first one's
// pid, and a holder killed with SIGKILL leaves no lock behind (the kernel drops a flock;
// the PostgreSQL server drops a session advisory lock). End to end with two real runs
// against serve-sim: tests/cli/one_run_per_store_test.cc.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/pg.h"
#include "store/run_lock.h"
#include "store/store.h"
#include "store_test_util.h"

namespace nf {
namespace {

using store_test::sample_draw;
using store_test::ScratchDir;
using ::testing::HasSubstr;

TEST(RunLock, SecondHolderIsRefusedNamingTheFirstUntilItLetsGo) {
  ScratchDir dir;
  const std::string path = dir.path("s.sqlite");
  auto a = Store::open(path);
  auto b = Store::open(path);
  ASSERT_TRUE(a.ok() && b.ok());
  {
    auto held = hold_run_lock(**a, "noisefloor run");
    ASSERT_TRUE(held.ok()) << held.status().to_string();
    auto refused = hold_run_lock(**b, "noisefloor audit");
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(refused.status().message(), HasSubstr("store " + path + " is in use by another noisefloor process"));
    EXPECT_THAT(refused.status().message(), HasSubstr("pid " + std::to_string(getpid()) + " on host "));
    EXPECT_THAT(refused.status().message(), HasSubstr("noisefloor run, since "));
    // Shared holders (workers) are refused too while an exclusive one holds it.
    EXPECT_FALSE(hold_run_lock(**b, "noisefloor worker", true).ok());
  }
  auto again = hold_run_lock(**b, "noisefloor audit");
  EXPECT_TRUE(again.ok()) << again.status().to_string();
}

TEST(RunLock, SharedHoldersShareAndKeepAnExclusiveOneOut) {
  ScratchDir dir;
  const std::string path = dir.path("s.sqlite");
  auto a = Store::open(path);
  auto b = Store::open(path);
  auto c = Store::open(path);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  auto w1 = hold_run_lock(**a, "noisefloor worker", true);
  auto w2 = hold_run_lock(**b, "noisefloor worker", true);
  ASSERT_TRUE(w1.ok() && w2.ok());
  auto run = hold_run_lock(**c, "noisefloor run");
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kFailedPrecondition);
}

// The lock is not SQLite's: opening and closing other connections to the same file in
// the holding process (which drops every POSIX lock the process has on the file, the
// pitfall of fcntl locks) leaves it held, and the store reads and writes as before.
TEST(RunLock, OtherConnectionsOpenedAndClosedLeaveItHeld) {
  ScratchDir dir;
  const std::string path = dir.path("s.sqlite");
  auto a = Store::open(path);
  ASSERT_TRUE(a.ok());
  auto held = hold_run_lock(**a, "noisefloor run");
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE((*a)->put_draw(sample_draw("m", "q1", "none", "default", 0)).ok());
  for (int i = 0; i < 3; ++i) {
    auto other = Store::open_read_only(path);
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(*(*other)->draw_count(), 1);
  }
  auto b = Store::open(path);
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(hold_run_lock(**b, "noisefloor run").ok());
  EXPECT_TRUE((*a)->put_draw(sample_draw("m", "q2", "none", "default", 0)).ok());
  EXPECT_EQ(*(*b)->draw_count(), 2);
}

// A holder killed with SIGKILL (no destructor runs) leaves no lock: the next one takes it.
TEST(RunLock, HolderKilledBySigkillLeavesNoLock) {
  ScratchDir dir;
  const std::string path = dir.path("s.sqlite");
  { ASSERT_TRUE(Store::open(path).ok()); }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    auto s = Store::open(path);
    if (!s.ok()) _exit(2);
    auto held = hold_run_lock(**s, "noisefloor run");
    const char ok = held.ok() ? 'y' : 'n';
    if (write(ready[1], &ok, 1) != 1) _exit(3);
    for (;;) pause();
  }
  close(ready[1]);
  char got = 0;
  ASSERT_EQ(read(ready[0], &got, 1), 1);
  close(ready[0]);
  ASSERT_EQ(got, 'y');
  auto s = Store::open(path);
  ASSERT_TRUE(s.ok());
  {
    auto refused = hold_run_lock(**s, "noisefloor run");
    ASSERT_FALSE(refused.ok());
    EXPECT_THAT(refused.status().message(), HasSubstr("pid " + std::to_string(child) + " on host "));
  }
  kill(child, SIGKILL);
  int st = 0;
  waitpid(child, &st, 0);
  ASSERT_TRUE(WIFSIGNALED(st));
  auto taken = hold_run_lock(**s, "noisefloor run");
  EXPECT_TRUE(taken.ok()) << taken.status().to_string();
}

TEST(RunLockPg, SecondHolderRefusedUntilTheFirstConnectionCloses) {
  NF_SKIP_WITHOUT_PG();
  testing::PgSchema schema, other_schema;
  auto a = Store::open(schema.url());
  auto b = Store::open(schema.url());
  auto elsewhere = Store::open(other_schema.url());
  ASSERT_TRUE(a.ok() && b.ok() && elsewhere.ok()) << a.status().to_string();
  auto held = hold_run_lock(**a, "noisefloor run");
  ASSERT_TRUE(held.ok()) << held.status().to_string();
  auto refused = hold_run_lock(**b, "noisefloor run");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("is in use by another noisefloor process (noisefloor run pid " +
                                                    std::to_string(getpid())));
  EXPECT_FALSE(hold_run_lock(**b, "noisefloor worker", true).ok());
  // Another store (schema) in the same database is not locked.
  auto other = hold_run_lock(**elsewhere, "noisefloor run");
  EXPECT_TRUE(other.ok()) << other.status().to_string();
  // The holder's connection goes (as when its process dies): the server drops the lock.
  held->reset();
  a->reset();
  auto taken = hold_run_lock(**b, "noisefloor run");
  EXPECT_TRUE(taken.ok()) << taken.status().to_string();
}

TEST(RunLockPg, WorkersShareItAndKeepARunOut) {
  NF_SKIP_WITHOUT_PG();
  testing::PgSchema schema;
  auto a = Store::open(schema.url());
  auto b = Store::open(schema.url());
  auto c = Store::open(schema.url());
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  auto w1 = hold_run_lock(**a, "noisefloor worker", true);
  auto w2 = hold_run_lock(**b, "noisefloor worker", true);
  ASSERT_TRUE(w1.ok() && w2.ok()) << w1.status().to_string() << w2.status().to_string();
  auto run = hold_run_lock(**c, "noisefloor run");
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(), HasSubstr("noisefloor worker pid"));
}

}  // namespace
}  // namespace nf
