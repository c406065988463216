// The task registry (core/task_kinds.h + runner/task_registry.h): every catalogued kind
// has exactly one factory and every factory a kind, so make_task never branches on names.
#include "runner/task_registry.h"

#include <gtest/gtest.h>

#include <set>

#include "core/task_kinds.h"
#include "perturb/descriptors.h"
#include "perturb/mcq_conditions.h"
#include "runner/runner.h"

namespace nf {
namespace {

TEST(TaskRegistryTest, EveryKindHasOneFactoryAndEveryFactoryAKind) {
  std::set<std::string> kinds;
  for (const auto& k : task_kinds()) {
    EXPECT_TRUE(kinds.insert(k.name).second) << "duplicate kind " << k.name;
    EXPECT_NE(find_task_factory(k.name), nullptr) << "kind " << k.name << " has no factory";
    EXPECT_FALSE(k.formats.empty()) << k.name;
    for (const auto& c : k.default_conditions)
      EXPECT_NE(std::find(k.conditions.begin(), k.conditions.end(), c), k.conditions.end()) << k.name << ": " << c;
  }
  for (const auto& r : task_registry()) EXPECT_TRUE(kinds.count(r.name)) << "factory " << r.name << " has no kind";
  EXPECT_EQ(find_task_factory("no_such_task"), nullptr);
}

TEST(TaskRegistryTest, PerturbConditionListsAreTheCatalogs) {
  // One list each, no mirrored copies (issue 10 item 7).
  EXPECT_EQ(&known_mcq_conditions(), &mcq_condition_names());
  EXPECT_EQ(&known_vignette_conditions(), &vignette_condition_names());
  EXPECT_EQ(find_task_kind("mcq")->conditions, known_mcq_conditions());
  EXPECT_EQ(find_task_kind("vignette_agent")->conditions, known_vignette_conditions());
}

TEST(TaskRegistryTest, UnknownTaskIsInvalidArgument) {
  Study st;
  st.task = "nope";
  auto t = make_task(st);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("unknown task 'nope'"), std::string::npos);
}

}  // namespace
}  // namespace nf
