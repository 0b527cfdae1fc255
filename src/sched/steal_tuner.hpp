// Whether a scheduler's imbalance repair pays, measured on the program's own iterations (a roost extension:
// seed 003 evaluates "ADWS" and "ADWS (no steal)" as two schedulers, §4.4, Fig. 4.22).
//
// Why: a stolen task reads its data from the cache of the worker it was dealt to. When the cores are far
// apart (a VM whose host placed the vCPUs on distant cores, a multi-socket machine) that costs more than
// the imbalance it repairs, and each steal makes the next one: adws on heat2d 512x200 at 2 workers took
// 30.8 ms with stealing and 12.1 ms without while a cache line's round trip was ~300 ns, and 11.3 ms both
// ways at ~90 ns (src/sched/README.md, "stealing cascade"). With wrong hints the opposite holds: without
// stealing, hint error alpha = 1 cost 61%.
//
// How (ROOST_ADWS_STEAL=auto): iterations (runtime::run calls) run with the current setting; every so
// often kSamples trial iterations run with the other one, and the other wins if the median of their times
// is below the median of the last kSamples iterations before the trial by more than kMargin (medians and a
// margin: single iterations on the VM of the figures vary by 10-20%). The first trial comes after
// kFirstTrialAfter iterations; a trial that keeps the setting doubles the wait before the next one (up to
// kMaxWait), a switch resets it, so a machine that changes state is followed within kMinWait iterations
// while a steady one pays for trials rarely. The first iteration of each trial and of each return is not
// timed: the mapping changes there.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "platform/platform.hpp"
#include "roost/options.hpp"

namespace roost::sched {

class steal_tuner {
 public:
  static constexpr unsigned kFirstTrialAfter = 8;  // iterations before the first trial
  static constexpr unsigned kMinWait = 32;         // iterations between trials, after a switch
  static constexpr unsigned kMaxWait = 512;        // ... at most, after trials that kept the setting
  static constexpr unsigned kSamples = 6;          // timed iterations on each side of a comparison
  static constexpr double kMargin = 0.10;          // the other setting must be this much faster to win

  explicit steal_tuner(adws_stealing s) : adaptive_(s == adws_stealing::adaptive), stealing_(s != adws_stealing::off) {}

  // Read by thieves on every steal attempt.
  bool stealing() const { return stealing_.load(std::memory_order_relaxed); }

  // Around each root run(), on the calling thread (the policies' iteration hooks). They read the clock
  // only when adaptive; the overloads take it from the caller (the tests' synthetic clock).
  void iteration_begin() {
    if (adaptive_) iteration_begin(platform::os::now_ns());
  }
  void iteration_end() {
    if (adaptive_) iteration_end(platform::os::now_ns());
  }
  void iteration_begin(std::uint64_t now_ns);
  void iteration_end(std::uint64_t now_ns);

  // "stealing on" / "stealing off" / "stealing adaptive, now on (2 switches; last trial: ...)".
  std::string describe() const;

  // The comparison, on its own for the tests: true when `other`'s median is below `current`'s by more
  // than kMargin. Needs kSamples of each.
  static bool other_wins(const std::vector<double>& current, const std::vector<double>& other);

 private:
  enum class phase : std::uint8_t { steady, trial };
  void decide();
  void set_stealing(bool on) { stealing_.store(on, std::memory_order_relaxed); }

  const bool adaptive_;
  std::atomic<bool> stealing_;
  phase phase_ = phase::steady;
  unsigned wait_ = kFirstTrialAfter;  // steady iterations left before the next trial
  unsigned next_wait_ = kMinWait;
  unsigned skip_ = 1;                  // iterations not to time: the program's first, the first after a change
  std::uint64_t begin_ns_ = 0;
  std::vector<double> steady_, trial_;  // recent iteration times, ns
  mutable std::mutex m_;  // describe() may run on another thread than the iterations
  unsigned switches_ = 0, trials_ = 0;
  std::string last_trial_;
};

}  // namespace roost::sched
