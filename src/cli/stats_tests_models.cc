// `noisefloor stats` entries for agreement, ANOVA and logistic regression (stub).
#include "cli/commands.h"

namespace nf::cli {
void register_model_stats_tests(std::vector<StatsTest>&) {}
}  // namespace nf::cli
