// Temporary stub; replaced by cmd_stats.cc and stats_tests_core.cc.
#include <cstdio>

#include "cli/commands.h"

namespace nf::cli {
int cmd_stats(int, char**) { std::fputs("stats: not yet built\n", stderr); return 4; }
void register_core_stats_tests(std::vector<StatsTest>&) {}
}  // namespace nf::cli
