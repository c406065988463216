// Slow tier: the multi-worker SIGKILL scenario at a larger scale (8 workers, 4 killed,
// 19,200 planned draws); the default tier runs 4 workers over 3,840 (worker_cli_test.cc).
#include "cli/worker_test_util.h"

namespace nf {
namespace {

TEST(WorkerCliSlow, EightWorkersFourKilledMidRunStoreEveryPlannedDrawOnceAndMatchSqlite) {
  worker_test::worker_kill_scenario(/*reps=*/100, /*workers=*/8, /*killed=*/4, /*majority_floor=*/false);
}

}  // namespace
}  // namespace nf
