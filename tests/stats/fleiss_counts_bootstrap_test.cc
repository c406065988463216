// fleiss_kappa_counts_bootstrap (tester s9 finding 22.9: `stats fleiss --counts` gave no
// interval): the counts layout bootstraps the same items as the ratings layout, so with the
// same data, item order and seed the interval is identical to agreement_bootstrap over
// fleiss_kappa, with and without clusters, with equal and unequal raters per item.
#include "stats/agreement.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace nf::stats {
namespace {

// The ratings table whose per-item counts are `counts` (K categories), raters filled in
// category order; `missing` trailing empty cells per item make the rows ragged-with-gaps.
RatingTable ratings_of(const std::vector<int64_t>& counts, int64_t k, int raters) {
  RatingTable t;
  for (size_t i = 0; i < counts.size(); i += static_cast<size_t>(k)) {
    std::vector<std::optional<int64_t>> row;
    for (int64_t j = 0; j < k; ++j)
      for (int64_t c = 0; c < counts[i + static_cast<size_t>(j)]; ++c) row.emplace_back(j);
    while (static_cast<int>(row.size()) < raters) row.emplace_back(std::nullopt);
    t.push_back(std::move(row));
  }
  return t;
}

std::vector<int64_t> sample_counts(bool unequal) {
  std::vector<int64_t> c;
  for (int i = 0; i < 40; ++i) {
    const int64_t n = unequal ? 2 + i % 4 : 5;
    const int64_t a = (i * 7) % (n + 1), b = (n - a) * (i % 3) / 2;
    c.insert(c.end(), {a, b, n - a - b});
  }
  return c;
}

TEST(FleissCountsBootstrap, SameIntervalAsTheRatingsLayout) {
  for (bool unequal : {false, true}) {
    for (bool clustered : {false, true}) {
      const auto counts = sample_counts(unequal);
      const RatingTable t = ratings_of(counts, 3, 5);
      std::vector<std::string> clusters;
      if (clustered)
        for (size_t i = 0; i < t.size(); ++i) clusters.push_back("p" + std::to_string(i / 3));
      auto from_counts = fleiss_kappa_counts_bootstrap(counts, 3, 999, 20261202, 0.9, clusters);
      auto from_ratings = agreement_bootstrap(t, fleiss_kappa, 999, 20261202, 0.9, clusters);
      ASSERT_TRUE(from_counts.ok()) << from_counts.status().to_string();
      ASSERT_TRUE(from_ratings.ok()) << from_ratings.status().to_string();
      SCOPED_TRACE(testing::Message() << "unequal " << unequal << " clustered " << clustered);
      EXPECT_EQ(from_counts->estimate, from_ratings->estimate);
      EXPECT_EQ(from_counts->low, from_ratings->low);
      EXPECT_EQ(from_counts->high, from_ratings->high);
      EXPECT_EQ(from_counts->undefined, from_ratings->undefined);
      EXPECT_LT(from_counts->low, from_counts->estimate);
      EXPECT_GT(from_counts->high, from_counts->estimate);
      EXPECT_EQ(from_counts->seed, 20261202u);
      EXPECT_EQ(from_counts->resamples, 999);
    }
  }
}

TEST(FleissCountsBootstrap, ErrorsAndUndefined) {
  EXPECT_EQ(fleiss_kappa_counts_bootstrap({1, 2, 3}, 2, 10, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fleiss_kappa_counts_bootstrap({1, 2}, 0, 10, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fleiss_kappa_counts_bootstrap({1, 2, 2, 1}, 2, 0, 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fleiss_kappa_counts_bootstrap({1, 2, 2, 1}, 2, 10, 1, 1.0).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(fleiss_kappa_counts_bootstrap({1, 2, 2, 1}, 2, 10, 1, 0.95, {"a"}).status().code(),
            StatusCode::kInvalidArgument);
  // Every rating in one category: kappa itself is undefined, and the error says so.
  EXPECT_EQ(fleiss_kappa_counts_bootstrap({3, 0, 3, 0}, 2, 10, 1).status().code(), StatusCode::kUndefined);
}

}  // namespace
}  // namespace nf::stats
