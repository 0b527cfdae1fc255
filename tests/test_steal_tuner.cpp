// The adaptive stealing switch of adws and adws-ml (src/sched/steal_tuner.hpp), driven by a synthetic
// clock: each iteration takes what the test says the current setting costs.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "roost/roost.hpp"
#include "sched/steal_tuner.hpp"
#include "test_util.hpp"

using roost::adws_stealing;
using roost::sched::steal_tuner;
using roost_test::scoped_env;

namespace {

// Runs `n` iterations; cost(stealing, i) is iteration i's time in ns. Returns how many ran with stealing.
unsigned run(steal_tuner& t, std::uint64_t& clock, unsigned n, const std::function<double(bool, unsigned)>& cost) {
  unsigned on = 0;
  for (unsigned i = 0; i < n; ++i) {
    const bool s = t.stealing();
    on += s;
    t.iteration_begin(clock);
    clock += static_cast<std::uint64_t>(cost(s, i));
    t.iteration_end(clock);
  }
  return on;
}

}  // namespace

TEST(StealTuner, OtherWinsOnlyByMoreThanTheMarginOfMedians) {
  static_assert(steal_tuner::kSamples == 6 && steal_tuner::kMargin == 0.10, "the cases below assume these");
  const std::vector<double> cur{100, 100, 100, 100, 100, 100};
  EXPECT_TRUE(steal_tuner::other_wins(cur, {85, 88, 300, 85, 88, 86}));  // median 87 < 90
  EXPECT_FALSE(steal_tuner::other_wins(cur, {92, 92, 92, 92, 92, 92}));  // within the margin
  EXPECT_FALSE(steal_tuner::other_wins(cur, {50, 50, 50, 500, 500, 500}));  // median 275
  EXPECT_FALSE(steal_tuner::other_wins(cur, {10, 10, 10, 10, 10}));      // too few samples
  EXPECT_FALSE(steal_tuner::other_wins({100, 100}, {10, 10, 10, 10, 10, 10}));
}

TEST(StealTuner, FixedSettingsNeverChange) {
  for (auto s : {adws_stealing::on, adws_stealing::off}) {
    steal_tuner t(s);
    std::uint64_t clock = 0;
    // Whatever the times, a fixed setting stays.
    unsigned on = run(t, clock, 300, [](bool stealing, unsigned) { return stealing ? 3000.0 : 1000.0; });
    EXPECT_EQ(on, s == adws_stealing::on ? 300u : 0u);
    EXPECT_EQ(t.describe(), s == adws_stealing::on ? "stealing on" : "stealing off");
  }
}

TEST(StealTuner, AdaptiveTurnsStealingOffWhenItCostsAndBackWhenItPays) {
  steal_tuner t(adws_stealing::adaptive);
  std::uint64_t clock = 0;
  EXPECT_TRUE(t.stealing());  // starts as adws always did
  EXPECT_NE(t.describe().find("no trial yet"), std::string::npos) << t.describe();
  // Far apart: stealing makes iterations 2.5x slower (heat2d 512x200, 30.8 ms against 12.1 ms).
  run(t, clock, 20, [](bool stealing, unsigned) { return stealing ? 250e3 : 100e3; });
  EXPECT_FALSE(t.stealing()) << t.describe();
  EXPECT_NE(t.describe().find("now off after 1 trial and 1 switch"), std::string::npos) << t.describe();
  // It stays off while that holds: the trials with stealing lose, ever more rarely.
  unsigned on = run(t, clock, 2000, [](bool stealing, unsigned) { return stealing ? 250e3 : 100e3; });
  EXPECT_FALSE(t.stealing());
  EXPECT_LT(on, 2000u / 20) << "trials with stealing should be a few percent of the iterations";
  // Hint error: now stealing repairs imbalance (alpha = 1 cost 61% without it). Back on within one wait
  // at the longest plus a trial.
  run(t, clock, steal_tuner::kMaxWait + 2 * steal_tuner::kSamples + 2,
      [](bool stealing, unsigned) { return stealing ? 100e3 : 161e3; });
  EXPECT_TRUE(t.stealing()) << t.describe();
  EXPECT_NE(t.describe().find("2 switches"), std::string::npos) << t.describe();
}

TEST(StealTuner, AdaptiveKeepsStealingWhenBothAreAlikeAndTriesRarely) {
  steal_tuner t(adws_stealing::adaptive);
  std::uint64_t clock = 0;
  // Near and balanced: the same time either way, with noise.
  unsigned on = run(t, clock, 4000, [](bool, unsigned i) { return 100e3 + 3e3 * static_cast<double>(i % 7); });
  EXPECT_TRUE(t.stealing()) << t.describe();
  EXPECT_GT(on, 4000u - 4000u / 20) << "the trials without stealing should be rare";
  EXPECT_NE(t.describe().find("0 switches"), std::string::npos) << t.describe();
}

TEST(StealTuner, AutoIsAValidSettingAndABadOneSaysSo) {
  {
    scoped_env a("ROOST_ADWS_STEAL", "auto");
    EXPECT_EQ(roost::resolve({}).adws_steal, adws_stealing::adaptive);
  }
  {
    scoped_env a("ROOST_ADWS_STEAL", "off");
    EXPECT_EQ(roost::resolve({}).adws_steal, adws_stealing::off);
  }
  scoped_env bad("ROOST_ADWS_STEAL", "sometimes");
  try {
    roost::resolve({});
    FAIL() << "expected config_error";
  } catch (const roost::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("ROOST_ADWS_STEAL='sometimes'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("auto"), std::string::npos) << e.what();
  }
}

TEST(StealTuner, AdwsAndAdwsMlRunExactlyWithAutoAndSayWhatTheyChose) {
  for (const char* sched : {"adws", "adws-ml"}) {
    roost::options o;
    o.scheduler = sched;
    o.workers = 2;
    o.adws_steal = adws_stealing::adaptive;
    roost::runtime rt(o);
    std::vector<long> out(64);
    for (int it = 0; it < 40; ++it) {
      rt.run([&] {
        roost::parallel_for(std::size_t{0}, out.size(), 1, [&](std::size_t lo, std::size_t hi) {
          for (std::size_t i = lo; i < hi; ++i) out[i] = static_cast<long>(i) * it;
        });
      });
      for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], static_cast<long>(i) * it) << sched;
    }
    const std::string d = rt.describe();
    EXPECT_NE(d.find("stealing adaptive (ROOST_ADWS_STEAL=auto), now"), std::string::npos) << d;
    EXPECT_NE(d.find(" trial"), std::string::npos) << d;  // 40 iterations: the first trial has been decided
    EXPECT_EQ(d.find("no trial yet"), std::string::npos) << d;
  }
}
