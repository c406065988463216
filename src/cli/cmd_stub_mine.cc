// Temporary stubs while the commands are written (removed when each lands).
#include <cstdio>

#include "cli/commands.h"

namespace nf::cli {
int cmd_audit(int, char**) { std::fputs("audit: not yet built\n", stderr); return 4; }
int cmd_run(int, char**) { std::fputs("run: not yet built\n", stderr); return 4; }
int cmd_analyze(int, char**) { std::fputs("analyze: not yet built\n", stderr); return 4; }
int cmd_import(int, char**) { std::fputs("import: not yet built\n", stderr); return 4; }
int cmd_export(int, char**) { std::fputs("export: not yet built\n", stderr); return 4; }
}  // namespace nf::cli
