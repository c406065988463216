// Crash safety (after leveldb's db/fault_injection_test.cc): a child process writes draws
// the way a resumed run does and is killed with SIGKILL at a random moment; the store
// must reopen intact with every committed draw whole and no key twice, and the next
// resume must finish the plan exactly.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include <gtest/gtest.h>

#include "store/store.h"
#include "store/store_test_util.h"
#include "util/rng.h"

namespace nf {
namespace {

using store_test::RawDb;
using store_test::sample_draw;
using store_test::ScratchDir;

constexpr int kPlanSize = 5000;
constexpr int kOutcomes = 3;

std::string item_name(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "i%05d", i);
  return buf;
}

// The child: resume the plan (skip finished keys), writing one draw per transaction.
// Every 10th draw first fails with api_error and is then retried, so a kill can also
// land between a failure and its replacement. Exit codes: 0 done, 2-4 store errors.
[[noreturn]] void run_child(const std::string& path) {
  auto opened = Store::open(path);
  if (!opened.ok()) _exit(2);
  std::unique_ptr<Store> store = std::move(opened).value();
  auto finished = store->finished_keys();
  if (!finished.ok()) _exit(3);
  for (int i = 0; i < kPlanSize; ++i) {
    Draw d = sample_draw("m", item_name(i), "none", "c", 0, kOutcomes);
    if (finished->count(d.key.to_string())) continue;
    if (i % 10 == 0) {
      Draw failed = d;
      failed.status = DrawStatus::kApiError;
      failed.outcomes.clear();
      failed.error = "HTTP 500";
      if (!store->put_draw(failed).ok()) _exit(4);
    }
    if (!store->put_draw(d).ok()) _exit(4);
  }
  store.reset();
  _exit(0);
}

struct Check {
  int64_t finished = 0;  // draws not api_error
};

// Integrity, whole draws, unique keys, and "finished draws are a prefix of the plan".
Check check_store(const std::string& path) {
  Check c;
  RawDb raw(path);
  EXPECT_EQ(raw.one("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(raw.one("PRAGMA foreign_key_check"), "");
  EXPECT_EQ(raw.one("SELECT count(*) FROM draws d WHERE (SELECT count(*) FROM outcomes o WHERE o.draw_id = d.id) "
                    "!= CASE d.status WHEN 'ok' THEN " + std::to_string(kOutcomes) + " ELSE 0 END"),
            "0");
  EXPECT_EQ(raw.one("SELECT count(*) FROM (SELECT 1 FROM draws GROUP BY subject, item, condition, config, "
                    "replicate HAVING count(*) > 1)"),
            "0");
  c.finished = std::stoll(raw.one("SELECT count(*) FROM draws WHERE status != 'api_error'"));
  if (c.finished > 0) {
    EXPECT_EQ(raw.one("SELECT max(item) FROM draws WHERE status != 'api_error'"),
              item_name(static_cast<int>(c.finished - 1)));
  }
  // At most the one draw in flight can be left as api_error, right after the prefix.
  auto pending = raw.column("SELECT item FROM draws WHERE status = 'api_error'");
  EXPECT_LE(pending.size(), 1u);
  if (pending.size() == 1) {
    EXPECT_EQ(pending[0], item_name(static_cast<int>(c.finished)));
  }
  return c;
}

TEST(StoreCrash, SigkillDuringWritesLeavesAConsistentResumableStore) {
  ScratchDir dir;
  const std::string path = dir.path("crash.db");
  {  // Create the store up front so every kill lands in the write loop, not in open().
    auto s = Store::open(path);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
  }
  Rng rng(20260101);
  int killed = 0;
  int64_t last_finished = 0;
  for (int round = 0; round < 6; ++round) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) run_child(path);
    const int delay_ms = 10 + static_cast<int>(rng.uniform_int(140));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(pid, SIGKILL);
    int wstatus = 0;
    ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
    if (WIFSIGNALED(wstatus)) {
      ++killed;
    } else {
      ASSERT_TRUE(WIFEXITED(wstatus));
      ASSERT_EQ(WEXITSTATUS(wstatus), 0) << "child store error in round " << round;
    }
    Check c = check_store(path);
    EXPECT_GE(c.finished, last_finished) << "a committed draw was lost in round " << round;
    last_finished = c.finished;
  }
  EXPECT_GT(killed, 0) << "no round was killed mid-run; the plan is too small for this machine";

  // The last resume runs to the end: the plan is complete, each key exactly once.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) run_child(path);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
  Check c = check_store(path);
  EXPECT_EQ(c.finished, kPlanSize);
  auto store = Store::open(path);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*(*store)->draw_count(), kPlanSize);
  EXPECT_EQ(*(*store)->count_key(DrawKey{"m", item_name(kPlanSize / 2), "none", "c", 0}), 1);
  RawDb raw(path);
  EXPECT_EQ(raw.one("SELECT count(*) FROM outcomes"), std::to_string(kPlanSize * kOutcomes));
}

}  // namespace
}  // namespace nf
