// util/strings.h: the progress-line duration format shared by `run` and `judge`.
#include "util/strings.h"
#include "util/bound_text.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace nf {
namespace {

TEST(FormatDuration, MinutesSecondsThenHours) {
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(9.4), "0:09");
  EXPECT_EQ(format_duration(9.6), "0:10");
  EXPECT_EQ(format_duration(61), "1:01");
  EXPECT_EQ(format_duration(3599), "59:59");
  EXPECT_EQ(format_duration(3600), "1:00:00");
  EXPECT_EQ(format_duration(3600 + 5 * 60 + 7), "1:05:07");
  EXPECT_EQ(format_duration(26 * 3600 + 59 * 60 + 59), "26:59:59");
}

TEST(FormatDuration, UnknownEta) {
  EXPECT_EQ(format_duration(-1), "--:--");
  EXPECT_EQ(format_duration(NAN), "--:--");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "--:--");
}

TEST(DidYouMean, SuggestsOnlyCloseNames) {
  EXPECT_EQ(did_you_mean("flor", {"floor", "fairness"}), " (did you mean 'floor'?)");
  EXPECT_EQ(did_you_mean("zzzzzz", {"floor", "fairness"}), "");
}

// Byte-wise order, as SQLite's BINARY collation: upper case before lower, "a" before "a2".
TEST(SortedRanks, ByteWiseOrderOfDictionaryEntries) {
  EXPECT_EQ(sorted_ranks({"b", "a2", "B", "a"}), (std::vector<uint32_t>{3, 2, 0, 1}));
  EXPECT_TRUE(sorted_ranks({}).empty());
}

TEST(Strings, FormatBoundShowsWhatThreeDecimalsHide) {
  // Wilson bounds, /usr/bin/python3 -c "from statsmodels.stats.proportion import proportion_confint as pc;
  //   print(pc(0,9000,method='wilson'), pc(9000,9000,method='wilson'), pc(0,160,method='wilson'),
  //   pc(0,200000,method='wilson'))"  (statsmodels 0.13.5)
  //   -> (~0, 0.000426646652794048) (0.999573353347206, 1.0) (0.0, 0.023446195171505202) (0.0, 1.9206925190409682e-05)
  EXPECT_EQ(format_bound(0.000426646652794048), "0.00043");
  EXPECT_EQ(format_bound(0.999573353347206), "0.99957");
  EXPECT_EQ(format_bound(0.023446195171505202), "0.023");
  EXPECT_EQ(format_bound(1.9206925190409682e-05), "1.9e-05");
  EXPECT_EQ(format_bound(0.0), "0.000");
  EXPECT_EQ(format_bound(1.0), "1.000");
  EXPECT_EQ(format_bound(-0.0003), "-0.0003");  // a kappa bound just below 0
  EXPECT_EQ(format_bound(0.5), "0.500");
  EXPECT_EQ(format_bound(0.00049, 2), "0.00049");
  EXPECT_EQ(format_bound(std::nan("")), "n/a");
  EXPECT_EQ(format_bound(-2.710505431213761e-20), "0.000");  // statsmodels' Wilson low for 0/9000: residue
  EXPECT_EQ(format_bound(0.9999999999999999), "1.000");
}

}  // namespace
}  // namespace nf
