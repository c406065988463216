// Tester finding 13 (session 9): an interrupted `run --refresh` after a server upgrade left
// one subject's draws answered by two served models, and the report pooled them without a
// word. analyze_store warns when a subject's answers come from more than one served model.
#include <gtest/gtest.h>

#include <string>

#include "common/test_data.h"
#include "metrics/analyze.h"
#include "store/store.h"

namespace nf {
namespace {

using nlohmann::json;

// A run study's store: subject "f" answered by `models[r % models.size()]` on replicate r,
// subject "g" always by "g-1".
json warnings_of(const std::vector<std::string>& models, bool run_study) {
  testing::TempDir t;
  auto store = std::move(Store::open(t / "s.sqlite")).value();
  const json spec = run_study ? json{{"name", "x"}, {"task", "mcq"}, {"subjects", json::array({{{"name", "f"}}})}}
                              : json{{"name", "x"}, {"imported", true}};
  EXPECT_TRUE(store->put_study({"x", "h", 1, spec}).ok());
  EXPECT_TRUE(store->put_item("q1", "q1", json::object()).ok());
  for (const char* subject : {"f", "g"}) {
    for (int r = 0; r < 4; ++r) {
      Draw d;
      d.key = DrawKey{subject, "q1", "none", "t", r};
      d.cluster = "q1";
      d.served_model = subject == std::string("g") ? "g-1" : models[static_cast<size_t>(r) % models.size()];
      d.outcomes = {{"correct", 1.0, ""}};
      EXPECT_TRUE(store->put_draw(d).ok());
    }
  }
  AnalyzeOptions o;
  o.analyses = {{"floor", json::object()}};
  o.bootstrap.resamples = 1000;
  auto res = analyze_store(*store, o);
  EXPECT_TRUE(res.ok()) << res.status().to_string();
  return res.ok() ? (*res)["warnings"] : json();
}

TEST(ServedModels, TwoServedModelsForOneSubjectAreWarned) {
  const json w = warnings_of({"m-B", "m-C"}, true);
  ASSERT_EQ(w.size(), 1u) << w.dump();
  const std::string text = w[0].get<std::string>();
  EXPECT_NE(text.find("subject 'f': its answers come from 2 served models (m-B, m-C)"), std::string::npos) << text;
  EXPECT_NE(text.find("--refresh"), std::string::npos) << text;
}

TEST(ServedModels, OneServedModelPerSubjectOrAnImportedStoreIsNotWarned) {
  EXPECT_EQ(warnings_of({"m-B"}, true), json::array());
  // Imported stores record no served model worth comparing (and are not read for it).
  EXPECT_EQ(warnings_of({"m-B", "m-C"}, false), json::array());
}

}  // namespace
}  // namespace nf
