// The --rounds summary (rounds.hpp) on measurements with known answers.
#include "driver/rounds.hpp"

#include <gtest/gtest.h>

namespace {

using bench::measurement;

measurement ran(const char* variant, unsigned workers, int round, double median, double c2c = 60, bool ok = true) {
  measurement m{"heat2d", variant, "64x2", workers, {median}, median, ok, ""};
  m.c2c_ns = c2c;
  m.round = round;
  return m;
}

const bench::round_summary_row& row(const bench::round_summary& s, const std::string& v, unsigned w) {
  for (const auto& r : s.rows)
    if (r.variant == v && r.workers == w) return r;
  throw std::runtime_error("no row " + v);
}

TEST(Rounds, RatiosAreTakenInsideEachRoundAndTheirMedianReported) {
  // Round 2 ran everything twice as slow: per-round ratios stay the same, times do not.
  std::vector<measurement> all = {ran("serial", 1, 1, 10), ran("ws", 2, 1, 8), ran("adws", 2, 1, 4),
                                  ran("serial", 1, 2, 20), ran("ws", 2, 2, 16), ran("adws", 2, 2, 8),
                                  ran("serial", 1, 3, 10), ran("ws", 2, 3, 8), ran("adws", 2, 3, 6)};
  auto s = bench::summarize_rounds(all, 3, 60);
  EXPECT_EQ(s.near_rounds, 3);
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(s.rows[0].variant, "serial");  // first-measured order
  const auto& a = row(s, "adws", 2);
  EXPECT_DOUBLE_EQ(a.median_s, 6);                  // median of 4, 8, 6
  EXPECT_DOUBLE_EQ(a.vs_ws, 0.5);                   // median of 0.5, 0.5, 0.75
  EXPECT_DOUBLE_EQ(a.vs_serial, 0.4);               // median of 0.4, 0.4, 0.6
  EXPECT_DOUBLE_EQ(a.spread, 2.0);                  // 8 / 4
  EXPECT_EQ(a.rounds_used, 3);
  EXPECT_DOUBLE_EQ(row(s, "ws", 2).vs_ws, 1.0);
  EXPECT_LT(row(s, "serial", 1).vs_ws, 0);          // no ws at one worker in these rounds
}

TEST(Rounds, ARoundWithAFarMeasurementIsLeftOutButItsFailedCheckIsNot) {
  std::vector<measurement> all = {ran("serial", 1, 1, 10), ran("ws", 2, 1, 8),
                                  ran("serial", 1, 2, 10), ran("ws", 2, 2, 30, 320, false),
                                  ran("serial", 1, 3, 10), ran("ws", 2, 3, 10)};
  auto s = bench::summarize_rounds(all, 3, 55);
  EXPECT_EQ(s.near_rounds, 2);
  const auto& w = row(s, "ws", 2);
  EXPECT_EQ(w.rounds_used, 2);
  EXPECT_DOUBLE_EQ(w.median_s, 9);  // rounds 1 and 3 only
  EXPECT_FALSE(w.check_passed);     // round 2's failure is reported all the same
  EXPECT_EQ(row(s, "serial", 1).rounds_used, 2);
}

TEST(Rounds, WhenEveryRoundIsFarAllAreUsedAndTheSummarySaysSo) {
  std::vector<measurement> all = {ran("ws", 2, 1, 8, 300), ran("ws", 2, 2, 12, 310)};
  auto s = bench::summarize_rounds(all, 2, 55);
  EXPECT_EQ(s.near_rounds, 0);
  EXPECT_EQ(row(s, "ws", 2).rounds_used, 2);
  EXPECT_DOUBLE_EQ(row(s, "ws", 2).median_s, 10);
}

TEST(Rounds, AnUnknownRoundTripNeverMakesARoundFar) {
  std::vector<measurement> all = {ran("ws", 2, 1, 8, -1), ran("ws", 2, 2, 12, 500)};
  auto s = bench::summarize_rounds(all, 2, -1);
  EXPECT_EQ(s.near_rounds, 2);
}

TEST(Rounds, AVariantThatCouldNotRunKeepsItsReason) {
  measurement m{"nqueens", "floor-help", "8", 1, {}, 0, false, "no such version of this benchmark"};
  m.round = 1;
  auto s = bench::summarize_rounds({ran("serial", 1, 1, 10), m}, 1, 60);
  const auto& r = row(s, "floor-help", 1);
  EXPECT_EQ(r.rounds_used, 0);
  EXPECT_EQ(r.note, "no such version of this benchmark");
}

TEST(Rounds, TheSummaryIsWrittenAsJsonLinesWithNullForAMissingReference) {
  measurement m{"heat", "cats", "64x32x4", 1, {}, 0, false, "scheduler not implemented yet"};
  m.round = 1;
  auto s = bench::summarize_rounds({ran("serial", 1, 1, 0.5), ran("adws", 2, 1, 0.25), m}, 1, 60);
  const std::string j = bench::round_summary_json("heat", "64x32x4", s);
  EXPECT_EQ(j,
            "{\"summary\":true,\"bench\":\"heat\",\"size\":\"64x32x4\",\"variant\":\"serial\",\"workers\":1,"
            "\"median\":0.5,\"spread\":1,\"vs_serial\":1,\"vs_ws\":null,\"rounds_used\":1,\"rounds\":1,"
            "\"near_rounds\":1,\"check\":true,\"note\":\"\"}\n"
            "{\"summary\":true,\"bench\":\"heat\",\"size\":\"64x32x4\",\"variant\":\"adws\",\"workers\":2,"
            "\"median\":0.25,\"spread\":1,\"vs_serial\":0.5,\"vs_ws\":null,\"rounds_used\":1,\"rounds\":1,"
            "\"near_rounds\":1,\"check\":true,\"note\":\"\"}\n"
            "{\"summary\":true,\"bench\":\"heat\",\"size\":\"64x32x4\",\"variant\":\"cats\",\"workers\":1,"
            "\"median\":null,\"spread\":null,\"vs_serial\":null,\"vs_ws\":null,\"rounds_used\":0,\"rounds\":1,"
            "\"near_rounds\":1,\"check\":true,\"note\":\"scheduler not implemented yet\"}\n");  // no check failed
}

}  // namespace

// The overhead modes' medians and quartiles (--trace-overhead, --preempt-*): of an even number of rounds the
// median is the mean of the middle two (it was the upper one, by the nearest rank).
TEST(Quantiles, AnEvenCountsMedianIsTheMeanOfTheMiddleTwo) {
  EXPECT_DOUBLE_EQ(bench::median_of({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(bench::median_of({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(bench::quantile({1, 2, 3, 4, 5}, 0.25), 2);
  EXPECT_DOUBLE_EQ(bench::quantile({1, 2, 3, 4}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(bench::quantile({7}, 0.75), 7);
  EXPECT_DOUBLE_EQ(bench::quantile({}, 0.5), 0);
  EXPECT_DOUBLE_EQ(bench::quantile({1, 2}, 1.0), 2);
}
