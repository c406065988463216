// Temporary stub; replaced by cmd_serve_sim.cc.
#include <cstdio>

#include "cli/commands.h"

namespace nf::cli {
int cmd_serve_sim(int, char**) { std::fputs("serve-sim: not yet built\n", stderr); return 4; }
}  // namespace nf::cli
