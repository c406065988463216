// The analysis registry (DESIGN.md "Extension points"): every analysis a study file may
// name is registered, names are unique, and an unknown name or option is refused.
#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <set>

#include "spec/study.h"

namespace nf {
namespace {

TEST(AnalysisRegistry, EveryStudyAnalysisIsRegisteredOnce) {
  std::set<std::string> seen;
  for (const auto& e : analysis_registry()) {
    EXPECT_TRUE(seen.insert(e.name).second) << "registered twice: " << e.name;
    EXPECT_FALSE(e.summary.empty()) << e.name;
    EXPECT_TRUE(static_cast<bool>(e.run)) << e.name;
  }
  for (const auto& name : known_analyses()) EXPECT_NE(find_analysis(name), nullptr) << name;
  EXPECT_EQ(find_analysis("flor"), nullptr);
}

}  // namespace
}  // namespace nf
