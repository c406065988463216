// compute_floor_frame (metrics/floor_frame.h, issue 14) must give exactly compute_floor's
// FloorRow values: on the imported FairMedAgent model-A draws (the published floor,
// seed 000 §IV.A) and on synthetic stores with several cells, categorical values, ties
// (even vote sizes), missing clusters, inconsistent clusters, cached and failed draws;
// and the closed-form majority count must equal the enumeration on random items.
#include "metrics/floor_frame.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>

#include "common/test_data.h"
#include "metrics/floor.h"
#include "runner/import.h"
#include "store/store.h"
#include "util/rng.h"

namespace nf {
namespace {

namespace fs = std::filesystem;

void expect_same_double(double a, double b, const std::string& what) {
  if (std::isnan(a) || std::isnan(b)) {
    EXPECT_TRUE(std::isnan(a) && std::isnan(b)) << what << ": " << a << " vs " << b;
  } else {
    EXPECT_EQ(a, b) << what;
  }
}

void expect_same_rows(const std::vector<FloorRow>& a, const std::vector<FloorRow>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string w = a[i].subject + "|" + a[i].config + "|" + a[i].condition + "|" + a[i].outcome;
    EXPECT_EQ(a[i].subject, b[i].subject) << i;
    EXPECT_EQ(a[i].config, b[i].config) << i;
    EXPECT_EQ(a[i].condition, b[i].condition) << i;
    EXPECT_EQ(a[i].outcome, b[i].outcome) << i;
    EXPECT_EQ(a[i].vote_size, b[i].vote_size) << w;
    EXPECT_EQ(a[i].discordant, b[i].discordant) << w;
    EXPECT_EQ(a[i].comparisons, b[i].comparisons) << w;
    EXPECT_EQ(a[i].items, b[i].items) << w;
    EXPECT_EQ(a[i].unanimous_cells, b[i].unanimous_cells) << w;
    EXPECT_EQ(a[i].clusters, b[i].clusters) << w;
    EXPECT_EQ(a[i].items_observed, b[i].items_observed) << w;
    EXPECT_EQ(a[i].valid_draws, b[i].valid_draws) << w;
    EXPECT_EQ(a[i].possible_comparisons, b[i].possible_comparisons) << w;
    EXPECT_EQ(a[i].tie_excluded, b[i].tie_excluded) << w;
    EXPECT_EQ(a[i].pooled_over, b[i].pooled_over) << w;
    EXPECT_EQ(a[i].derived_excluded, b[i].derived_excluded) << w;
    EXPECT_EQ(a[i].degenerate, b[i].degenerate) << w;
    EXPECT_EQ(a[i].ci_method, b[i].ci_method) << w;
    expect_same_double(a[i].percentile_low, b[i].percentile_low, w + " percentile_low");
    expect_same_double(a[i].percentile_high, b[i].percentile_high, w + " percentile_high");
    expect_same_double(a[i].rate, b[i].rate, w + " rate");
    expect_same_double(a[i].ci_low, b[i].ci_low, w + " ci_low");
    expect_same_double(a[i].ci_high, b[i].ci_high, w + " ci_high");
    expect_same_double(a[i].wilson_low, b[i].wilson_low, w + " wilson_low");
    expect_same_double(a[i].wilson_high, b[i].wilson_high, w + " wilson_high");
  }
}

// compute_floor on outcome_rows vs both frame paths, for each vote size and both
// include_cached settings.
void expect_frame_equals_rows(Store& store, const std::vector<int>& vote_sizes) {
  const BootstrapOptions boot{300, 11, 0.9};
  for (bool cached : {true, false}) {
    auto rows = store.outcome_rows(cached);
    ASSERT_TRUE(rows.ok()) << rows.status().to_string();
    auto frame = store.outcome_frame(cached);
    ASSERT_TRUE(frame.ok()) << frame.status().to_string();
    ASSERT_EQ(frame->size(), rows->size());
    for (int v : vote_sizes) {
      SCOPED_TRACE("vote size " + std::to_string(v) + (cached ? " with cached" : " without cached"));
      auto want = compute_floor(*rows, v, boot);
      auto got = compute_floor_frame(store, cached, v, boot);
      auto got2 = compute_floor_frame(*frame, v, boot);
      ASSERT_EQ(want.ok(), got.ok()) << (want.ok() ? got.status().to_string() : want.status().to_string());
      ASSERT_EQ(want.ok(), got2.ok());
      if (!want.ok()) {
        EXPECT_EQ(want.status().to_string(), got.status().to_string());
        EXPECT_EQ(want.status().to_string(), got2.status().to_string());
        continue;
      }
      ASSERT_FALSE(want->empty());
      expect_same_rows(*want, *got);
      expect_same_rows(*want, *got2);
    }
  }
  auto most = max_item_replicates(store, true);
  ASSERT_TRUE(most.ok());
  auto rows = store.outcome_rows(true);
  std::map<std::string, int> count;
  int want = 0;
  for (const auto& o : *rows)
    want = std::max(want, ++count[o.subject + "|" + o.config + "|" + o.condition + "|" + o.item + "|" + o.outcome]);
  EXPECT_EQ(*most, want);
}

TEST(FloorFrame, FairMedAgentModelAImportedEqualsComputeFloor) {
  testing::TempDir dir;
  const std::string csv = (fs::path(dir.path()) / "model_a.csv").string();
  testing::write_text(csv, testing::fairmedagent_model_a_csv());
  auto store = Store::open((fs::path(dir.path()) / "a.sqlite").string());
  ASSERT_TRUE(store.ok());
  auto sum = import_long_draws_file(csv, **store, "fma");
  ASSERT_TRUE(sum.ok()) << sum.status().to_string();
  expect_frame_equals_rows(**store, {1, 2, 3, 5});
  // And it is the published floor (seed 000 §IV.A): pooled 374 / 4320.
  auto fr = compute_floor_frame(**store, true, 1, {200, 7, 0.95});
  ASSERT_TRUE(fr.ok());
  EXPECT_EQ(fr->back().outcome, "pooled");
  EXPECT_EQ(fr->back().discordant, 374);
  EXPECT_EQ(fr->back().comparisons, 4320);
}

TEST(FloorFrame, SyntheticStoresEqualComputeFloor) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    testing::TempDir dir;
    auto store = Store::open((fs::path(dir.path()) / "s.sqlite").string());
    ASSERT_TRUE(store.ok());
    Rng rng(seed);
    for (const char* subject : {"zeta", "alpha"})
      for (const char* config : {"t=0.7", "t=0"})
        for (const char* condition : {"shuffle", "none"})
          for (int item = 0; item < 25; ++item) {
            const int reps = 1 + static_cast<int>(rng.uniform_int(9));  // 1..9 replicates
            for (int r = 0; r < reps; ++r) {
              Draw d;
              d.key = {subject, "q" + std::to_string(item * 7 % 25), condition, config, r};
              // Some items without a cluster (-> the item), one with a cluster that changes
              // over replicates (compute_floor keeps the last), the rest in 6 clusters.
              d.cluster = item % 5 == 0 ? "" : item == 3 ? std::string(r % 2 ? "zz" : "aa") : "c" + std::to_string(item % 6);
              d.status = rng.uniform_int(15) == 0 ? DrawStatus::kParseError : DrawStatus::kOk;
              d.cached = rng.uniform_int(4) == 0;
              const double p = static_cast<double>(item % 4) / 4.0;
              d.outcomes = {{"correct", rng.uniform() < p ? 1.0 : 0.0, ""},
                            {"choice", static_cast<double>(rng.uniform_int(item % 3 + 1)), ""},
                            {"sign", rng.uniform() < 0.5 ? -0.0 : 0.0, ""}};  // -0 == 0: one category
              if (item % 4 == 1) d.outcomes.push_back({"score", rng.uniform() < 0.2 ? 0.5 : 0.25, ""});
              ASSERT_TRUE((*store)->put_draw(d).ok());
            }
          }
    expect_frame_equals_rows(**store, {1, 2, 3, 4});
  }
}

TEST(FloorFrame, TooManyReplicatesGivesTheSameError) {
  testing::TempDir dir;
  auto store = Store::open((fs::path(dir.path()) / "s.sqlite").string());
  ASSERT_TRUE(store.ok());
  for (int r = 0; r < 64; ++r) {
    Draw d;
    d.key = {"m", "q", "none", "default", r};
    d.cluster = "q";
    d.outcomes = {{"correct", static_cast<double>(r % 2), ""}};
    ASSERT_TRUE((*store)->put_draw(d).ok());
  }
  auto got = compute_floor_frame(**store, true, 3, {100, 1, 0.95});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kFailedPrecondition);
  expect_frame_equals_rows(**store, {1, 3});
}

// compute_floor_frames (every vote size's intervals from one batch of resamples, as
// `analyze` runs floor + majority_floor) must give each vote size exactly its own
// compute_floor_frame rows, and a vote size's error only to that vote size.
TEST(FloorFrame, SeveralVoteSizesAtOnceEqualOneAtATime) {
  testing::TempDir dir;
  auto store = Store::open((fs::path(dir.path()) / "s.sqlite").string());
  ASSERT_TRUE(store.ok());
  Rng rng(7);
  for (int item = 0; item < 60; ++item) {
    const int reps = item == 5 ? 63 : 2 + static_cast<int>(rng.uniform_int(9));  // item 5: too many for R' = 3
    for (int r = 0; r < reps; ++r) {
      Draw d;
      d.key = {item % 2 ? "m1" : "m2", "q" + std::to_string(item), "none", "default", r};
      d.cluster = "c" + std::to_string(item % 13);
      d.outcomes = {{"correct", rng.uniform() < 0.3 ? 1.0 : 0.0, ""},
                    {"choice", static_cast<double>(rng.uniform_int(3)), ""}};
      ASSERT_TRUE((*store)->put_draw(d).ok());
    }
  }
  auto input = read_floor_input(**store, true);
  ASSERT_TRUE(input.ok());
  const BootstrapOptions boot{400, 3, 0.9};
  const std::vector<int> sizes{1, 2, 3, 1};
  auto all = compute_floor_frames(*input, sizes, boot);
  ASSERT_EQ(all.size(), sizes.size());
  for (size_t k = 0; k < sizes.size(); ++k) {
    SCOPED_TRACE("vote size " + std::to_string(sizes[k]));
    auto one = compute_floor_frame(*input, sizes[k], boot);
    ASSERT_EQ(one.ok(), all[k].ok());
    if (!one.ok()) {
      EXPECT_EQ(one.status().to_string(), all[k].status().to_string());
      continue;
    }
    expect_same_rows(*one, *all[k]);
  }
  EXPECT_TRUE(all[0].ok());
  EXPECT_FALSE(all[2].ok());  // 63 replicates: exact enumeration for R' = 3 is too large
}

// The same imported draws in three file orders: item by item (every series' items arrive
// in increasing code order, the aggregation's index-free path), replicate by replicate and
// shuffled by draw (items met again after others: the aggregation switches to its index
// part-way), with the second cell's items in reverse. 64,000 values, 16 outcome chunks: the
// combined read of `analyze` (read_status_and_floor_input: the values consumed on a second
// thread while the draws are read) and the separate read must both give compute_floor's rows
// on the outcome rows, for the floor and the majority floor at once.
TEST(FloorFrame, ImportedDrawsInAnyOrderEqualComputeFloor) {
  struct Draw1 {
    std::string subject, condition;
    int item, replicate;
  };
  std::vector<Draw1> item_major, replicate_major;
  for (const char* subject : {"m2", "m1"})
    for (const char* condition : {"none", "swap"}) {
      const bool reverse = std::string(condition) == "swap";
      for (int i = 0; i < 800; ++i)
        for (int r = 0; r < 5; ++r) item_major.push_back({subject, condition, reverse ? 799 - i : i, r});
      for (int r = 0; r < 5; ++r)
        for (int i = 0; i < 800; ++i) replicate_major.push_back({subject, condition, reverse ? 799 - i : i, r});
    }
  std::vector<Draw1> shuffled = item_major;
  Rng shuffle(5);
  for (size_t i = shuffled.size(); i > 1; --i) std::swap(shuffled[i - 1], shuffled[shuffle.uniform_int(i)]);
  const BootstrapOptions boot{200, 17, 0.95};
  for (const auto* order : {&item_major, &replicate_major, &shuffled}) {
    SCOPED_TRACE(order == &item_major ? "item by item" : order == &replicate_major ? "replicate by replicate" : "shuffled");
    std::ostringstream csv;
    csv << "subject,item,cluster,condition,config,replicate,outcome,value\n";
    for (const Draw1& d : *order) {
      // Values from the draw's key (any order gives the same draws): a binary outcome that
      // varies with the replicate on some items, a 3-category one, a constant one.
      const uint64_t h = static_cast<uint64_t>(d.item * 31 + d.replicate * 7 + (d.subject == "m1" ? 3 : 0));
      const std::string key = d.subject + ",q" + std::to_string(d.item) + ",c" + std::to_string(d.item % 37) + "," +
                              d.condition + ",default," + std::to_string(d.replicate) + ",";
      csv << key << "correct," << (d.item % 3 == 0 ? h % 2 : d.item % 2) << "\n";
      csv << key << "choice," << (d.item % 4 == 0 ? h % 3 : 1) << "\n";
      csv << key << "flag,0\n";
      csv << key << "long," << ((h / 3) % 2) << "\n";
    }
    testing::TempDir dir;
    const std::string path = (fs::path(dir.path()) / "draws.csv").string();
    testing::write_text(path, csv.str());
    auto store = Store::open((fs::path(dir.path()) / "s.sqlite").string());
    ASSERT_TRUE(store.ok());
    auto sum = import_long_draws_file(path, **store, "orders");
    ASSERT_TRUE(sum.ok()) << sum.status().to_string();
    ASSERT_EQ(sum->draws, 16000);
    auto rows = (*store)->outcome_rows(false);
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->size(), 64000u);
    std::optional<FloorInput> input;
    Status input_status = Status::Ok();
    int64_t answers = 0;
    auto counts = read_status_and_floor_input(
        **store, false, [&](std::string_view, std::string_view, std::string_view, std::string_view) { ++answers; },
        &input, &input_status);
    ASSERT_TRUE(counts.ok() && input_status.ok()) << counts.status().to_string() << input_status.to_string();
    EXPECT_EQ(answers, 16000);
    ASSERT_TRUE(input.has_value());
    auto both = compute_floor_frames(*input, {1, 3}, boot);
    ASSERT_EQ(both.size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      const int v = k == 0 ? 1 : 3;
      SCOPED_TRACE("vote size " + std::to_string(v));
      auto want = compute_floor(*rows, v, boot);
      ASSERT_TRUE(want.ok() && both[k].ok());
      ASSERT_EQ(want->size(), 2u * 2 * 5);  // per cell: 4 outcomes and the pooled row
      expect_same_rows(*want, *both[k]);
    }
    expect_frame_equals_rows(**store, {1, 3});
  }
}

TEST(FloorFrame, ClosedFormMajorityEqualsEnumeration) {
  Rng rng(99);
  for (int trial = 0; trial < 400; ++trial) {
    const int n = static_cast<int>(rng.uniform_int(15));
    const int cats = 1 + static_cast<int>(rng.uniform_int(4));
    std::vector<double> values(n);
    std::vector<int> counts(cats);
    for (auto& v : values) {
      const int c = static_cast<int>(rng.uniform_int(cats));
      v = c;
      ++counts[c];
    }
    for (int k = 1; 2 * k <= n; ++k) {
      auto want = majority_vote_disagreement(values, k);
      ASSERT_TRUE(want.ok());
      EXPECT_EQ(majority_vote_disagreement_counts(counts, k), *want) << "n=" << n << " k=" << k;
    }
  }
}

}  // namespace
}  // namespace nf
