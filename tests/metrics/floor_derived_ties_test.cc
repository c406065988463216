// Issue 37 (tester s9 F2, F11): the pooled floor leaves a task's derived outcomes out (MCQ
// `correct` is a function of `choice`: pooling both counted every replicate pair twice and
// averaged a rate with a subset of itself), and the majority-vote floor counts the
// comparisons it leaves out as ties. Numbers are hand counts written out beside each check,
// and the tie counts are also checked against a brute-force enumeration.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/test_data.h"
#include "core/task_kinds.h"
#include "metrics/analyze.h"
#include "metrics/floor.h"
#include "metrics/floor_frame.h"
#include "store/store.h"
#include "util/rng.h"

namespace nf {
namespace {

using nlohmann::json;

// One MCQ draw's two outcomes, as the task scores them (task/mcq.cc): the key is option 0 (A).
void add_mcq(std::vector<OutcomeRow>& rows, const std::string& cell_config, const std::string& item, int rep,
             int choice) {
  rows.push_back({"sim", cell_config, "none", item, item, rep, "choice", static_cast<double>(choice), ""});
  rows.push_back({"sim", cell_config, "none", item, item, rep, "correct", choice == 0 ? 1.0 : 0.0, ""});
}

// The rows as the integer-coded frame the store's scan gives analyze (metrics/floor_frame.h).
OutcomeFrame frame_of(const std::vector<OutcomeRow>& rows) {
  OutcomeFrame f;
  std::map<std::string, uint32_t> codes[6];
  auto code = [&](int col, std::vector<std::string>& dict, const std::string& s) {
    auto [it, fresh] = codes[col].try_emplace(s, static_cast<uint32_t>(dict.size()));
    if (fresh) dict.push_back(s);
    return it->second;
  };
  for (const auto& r : rows) {
    f.subject.push_back(code(0, f.dict.subjects, r.subject));
    f.config.push_back(code(1, f.dict.configs, r.config));
    f.condition.push_back(code(2, f.dict.conditions, r.condition));
    f.item.push_back(code(3, f.dict.items, r.item));
    f.cluster.push_back(code(4, f.dict.clusters, r.cluster));
    f.outcome.push_back(code(5, f.dict.outcomes, r.outcome));
    f.label.push_back(0);
    f.replicate.push_back(r.replicate);
    f.value.push_back(r.value);
    f.cluster_given.push_back(1);
  }
  return f;
}

const FloorRow* find_row(const std::vector<FloorRow>& rows, const std::string& outcome) {
  for (const auto& r : rows)
    if (r.outcome == outcome) return &r;
  return nullptr;
}

// Two items x 4 replicates:
//   q1 choices A A B C  -> choice: C(4,2)=6 pairs, agreeing pairs C(2,2)=1, discordant 5;
//                          correct 1 1 0 0: agreeing C(2,2)+C(2,2)=2, discordant 4
//   q2 choices B B B B  -> choice 0/6, correct 0 0 0 0 -> 0/6 (both unanimous)
// choice floor 5/12, correct 4/12; the old pooled row summed both: 9/24 (every pair twice).
std::vector<OutcomeRow> two_items() {
  std::vector<OutcomeRow> rows;
  const int q1[] = {0, 0, 1, 2}, q2[] = {1, 1, 1, 1};
  for (int r = 0; r < 4; ++r) {
    add_mcq(rows, "t", "q1", r, q1[r]);
    add_mcq(rows, "t", "q2", r, q2[r]);
  }
  return rows;
}

TEST(PooledFloor, McqDeclaresCorrectDerivedFromChoice) {
  const auto d = derived_outcomes_of("mcq");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], (std::pair<std::string, std::string>{"correct", "choice"}));
  EXPECT_TRUE(derived_outcomes_of("vignette_agent").empty());
  EXPECT_TRUE(derived_outcomes_of("").empty());  // an imported store has no task
}

TEST(PooledFloor, DerivedOutcomeLeftOutOfPooledRowButKeptAsItsOwnRow) {
  const auto rows = two_items();
  const BootstrapOptions boot{200, 5, 0.95};
  const DerivedOutcomes derived{{"correct", "choice"}};
  auto with = compute_floor(rows, 1, boot, derived);
  ASSERT_TRUE(with.ok()) << with.status().to_string();
  const FloorRow* choice = find_row(*with, "choice");
  const FloorRow* correct = find_row(*with, "correct");
  const FloorRow* pooled = find_row(*with, "pooled");
  ASSERT_TRUE(choice && correct && pooled);
  EXPECT_EQ(choice->discordant, 5);
  EXPECT_EQ(choice->comparisons, 12);
  EXPECT_EQ(correct->discordant, 4);  // the per-outcome row stays
  EXPECT_EQ(correct->comparisons, 12);
  // The pooled row is the choice floor: same pairs, same n, same unanimous cells (q2 only).
  EXPECT_EQ(pooled->discordant, 5);
  EXPECT_EQ(pooled->comparisons, 12);
  EXPECT_EQ(pooled->unanimous_cells, 1);
  EXPECT_EQ(pooled->items, 2);
  EXPECT_DOUBLE_EQ(pooled->rate, choice->rate);
  EXPECT_DOUBLE_EQ(pooled->wilson_low, choice->wilson_low);
  EXPECT_DOUBLE_EQ(pooled->wilson_high, choice->wilson_high);
  EXPECT_DOUBLE_EQ(pooled->ci_low, choice->ci_low);
  EXPECT_DOUBLE_EQ(pooled->ci_high, choice->ci_high);
  EXPECT_EQ(pooled->pooled_over, std::vector<std::string>{"choice"});
  EXPECT_EQ(pooled->derived_excluded, std::vector<std::string>{"correct"});
  const json j = floor_row_to_json(*pooled);
  EXPECT_EQ(j["pooled_over"], json::array({"choice"}));
  EXPECT_EQ(j["derived_excluded"], json::array({"correct"}));

  // Without a declaration (an imported store) every outcome is independent: 9/24 as before,
  // unanimous cells 2 (q2's choice and correct).
  auto without = compute_floor(rows, 1, boot);
  ASSERT_TRUE(without.ok());
  const FloorRow* p0 = find_row(*without, "pooled");
  ASSERT_NE(p0, nullptr);
  EXPECT_EQ(p0->discordant, 9);
  EXPECT_EQ(p0->comparisons, 24);
  EXPECT_EQ(p0->unanimous_cells, 2);
  EXPECT_EQ(p0->pooled_over, (std::vector<std::string>{"choice", "correct"}));
  EXPECT_TRUE(p0->derived_excluded.empty());

  // The frame path (what analyze runs) gives the same rows.
  auto frame_rows = compute_floor_frame(floor_input_of(frame_of(rows)), 1, boot, derived);
  ASSERT_TRUE(frame_rows.ok());
  const FloorRow* fp = find_row(*frame_rows, "pooled");
  ASSERT_NE(fp, nullptr);
  EXPECT_EQ(fp->discordant, 5);
  EXPECT_EQ(fp->comparisons, 12);
  EXPECT_EQ(fp->unanimous_cells, 1);
  EXPECT_EQ(fp->pooled_over, std::vector<std::string>{"choice"});
  EXPECT_EQ(fp->derived_excluded, std::vector<std::string>{"correct"});
  EXPECT_DOUBLE_EQ(fp->ci_high, pooled->ci_high);
}

TEST(PooledFloor, DerivedOutcomeWithoutItsSourceInTheCellIsPooled) {
  std::vector<OutcomeRow> rows;
  for (int r = 0; r < 3; ++r) rows.push_back({"s", "t", "none", "q1", "q1", r, "correct", r == 0 ? 1.0 : 0.0, ""});
  auto fr = compute_floor(rows, 1, {100, 1, 0.95}, {{"correct", "choice"}});
  ASSERT_TRUE(fr.ok());
  const FloorRow* p = find_row(*fr, "pooled");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->discordant, 2);  // 1 0 0: pairs (1,0) x 2 disagree of C(3,2) = 3
  EXPECT_EQ(p->comparisons, 3);
  EXPECT_EQ(p->pooled_over, std::vector<std::string>{"correct"});
}

// Brute force: every ordered pair of disjoint k-subsets, halved; returns {all, with a tie}.
std::pair<int64_t, int64_t> brute_pairs_and_ties(const std::vector<double>& v, int k) {
  const int n = static_cast<int>(v.size());
  auto tied = [&](unsigned mask) {
    std::map<double, int> cnt;
    for (int i = 0; i < n; ++i)
      if (mask >> i & 1u) ++cnt[v[i]];
    int best = -1, at_best = 0;
    for (auto [x, m] : cnt) {
      if (m > best) best = m, at_best = 1;
      else if (m == best) ++at_best;
    }
    return at_best > 1;
  };
  int64_t all = 0, ties = 0;
  for (unsigned a = 0; a < (1u << n); ++a) {
    if (__builtin_popcount(a) != k) continue;
    for (unsigned b = 0; b < (1u << n); ++b) {
      if (__builtin_popcount(b) != k || (a & b)) continue;
      ++all;
      if (tied(a) || tied(b)) ++ties;
    }
  }
  return {all / 2, ties / 2};
}

TEST(MajorityTies, PossiblePairsAreTheClosedForm) {
  // C(n, R') C(n - R', R') / 2
  EXPECT_EQ(majority_vote_pairs(4, 2), 3);     // 6 x 1 / 2
  EXPECT_EQ(majority_vote_pairs(10, 2), 630);  // 45 x 28 / 2: the tester's 100 items -> 63,000
  EXPECT_EQ(majority_vote_pairs(10, 3), 2100); // 120 x 35 / 2
  EXPECT_EQ(majority_vote_pairs(5, 3), 0);     // two disjoint vote sets need 2R' <= n
  EXPECT_EQ(majority_vote_pairs(6, 3), 10);    // 20 x 1 / 2
}

TEST(MajorityTies, RowsCountTheComparisonsLeftOutAsTies) {
  // Item a: 1 1 0 0 at R' = 2: 3 ways to split into two pairs; {11} vs {00} is the only one
  //   without a 1-0 vote set (1 comparison, discordant); the other 2 have ties.
  // Item b: 1 1 1 0: every split pairs {1,1} with {1,0}: 3 ties, 0 comparisons.
  std::vector<OutcomeRow> rows;
  const double a[] = {1, 1, 0, 0}, b[] = {1, 1, 1, 0};
  for (int r = 0; r < 4; ++r) {
    rows.push_back({"s", "t", "none", "a", "a", r, "correct", a[r], ""});
    rows.push_back({"s", "t", "none", "b", "b", r, "correct", b[r], ""});
  }
  auto fr = compute_floor(rows, 2, {100, 1, 0.95});
  ASSERT_TRUE(fr.ok());
  const FloorRow* c = find_row(*fr, "correct");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->discordant, 1);
  EXPECT_EQ(c->comparisons, 1);
  EXPECT_EQ(c->possible_comparisons, 6);
  EXPECT_EQ(c->tie_excluded, 5);
  const json j = floor_row_to_json(*c);
  EXPECT_EQ(j["tie_excluded"], 5);
  EXPECT_EQ(j["possible_comparisons"], 6);
  EXPECT_DOUBLE_EQ(j["tie_excluded_share"].get<double>(), 5.0 / 6.0);
  // The plain floor has no tie fields.
  auto plain = compute_floor(rows, 1, {100, 1, 0.95});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(floor_row_to_json(*find_row(*plain, "correct")).contains("tie_excluded"));
}

TEST(MajorityTies, TieCountsMatchBruteForceOnBothPaths) {
  Rng rng(37);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 2 + static_cast<int>(rng.uniform_int(9));
    const int k = 2 + static_cast<int>(rng.uniform_int(3));  // R' = 1 is the plain floor (no votes)
    const int cats = 2 + static_cast<int>(rng.uniform_int(2));
    std::vector<double> v(n);
    for (auto& x : v) x = static_cast<double>(rng.uniform_int(cats));
    std::vector<OutcomeRow> rows;
    for (int r = 0; r < n; ++r) rows.push_back({"s", "t", "none", "q", "q", r, "o", v[r], ""});
    auto fr = compute_floor(rows, k, {50, 1, 0.95});
    ASSERT_TRUE(fr.ok());
    const auto [all, ties] = brute_pairs_and_ties(v, k);
    const FloorRow* row = find_row(*fr, "o");
    ASSERT_NE(row, nullptr);
    SCOPED_TRACE("n " + std::to_string(n) + " k " + std::to_string(k));
    EXPECT_EQ(row->possible_comparisons, all);
    EXPECT_EQ(row->tie_excluded, ties);
    EXPECT_EQ(row->comparisons + row->tie_excluded, row->possible_comparisons);
    auto frame = compute_floor_frame(floor_input_of(frame_of(rows)), k, {50, 1, 0.95});
    ASSERT_TRUE(frame.ok());
    const FloorRow* frow = find_row(*frame, "o");
    ASSERT_NE(frow, nullptr);
    EXPECT_EQ(frow->possible_comparisons, all);
    EXPECT_EQ(frow->tie_excluded, ties);
  }
}

// analyze_store reads the task from the study recorded in the store: an MCQ study's pooled
// floor is its choice floor; an imported store (no task) pools every outcome.
TEST(PooledFloor, AnalyzeUsesTheStudysTaskAndImportedStoresPoolEverything) {
  for (const bool mcq : {true, false}) {
    SCOPED_TRACE(mcq ? "mcq study" : "imported");
    testing::TempDir t;
    auto store = std::move(Store::open(t / "s.sqlite")).value();
    const json spec = mcq ? json{{"name", "x"}, {"task", "mcq"}} : json{{"name", "x"}, {"imported", true}};
    ASSERT_TRUE(store->put_study({"x", mcq ? "h" : "", 1, spec}).ok());
    const int q1[] = {0, 0, 1, 2}, q2[] = {1, 1, 1, 1};
    for (const char* item : {"q1", "q2"}) {
      ASSERT_TRUE(store->put_item(item, item, json::object()).ok());
      for (int r = 0; r < 4; ++r) {
        Draw d;
        d.key = DrawKey{"sim", item, "none", "t", r};
        d.cluster = item;
        const int c = item == std::string("q1") ? q1[r] : q2[r];
        d.outcomes = {{"correct", c == 0 ? 1.0 : 0.0, ""}, {"choice", static_cast<double>(c), ""}};
        ASSERT_TRUE(store->put_draw(d).ok());
      }
    }
    AnalyzeOptions o;
    o.analyses = {{"floor", json::object()}};
    o.bootstrap.resamples = 1000;
    auto res = analyze_store(*store, o);
    ASSERT_TRUE(res.ok()) << res.status().to_string();
    bool found = false;
    for (const auto& r : (*res)["analyses"]["floor"]["rows"]) {
      if (r["outcome"] != "pooled") continue;
      found = true;
      EXPECT_EQ(r["discordant"], mcq ? 5 : 9);
      EXPECT_EQ(r["comparisons"], mcq ? 12 : 24);
      EXPECT_EQ(r["derived_excluded"], mcq ? json::array({"correct"}) : json::array());
    }
    EXPECT_TRUE(found);
  }
}

}  // namespace
}  // namespace nf
