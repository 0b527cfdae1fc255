#include "sched/steal_tuner.hpp"

#include <algorithm>
#include <cstdio>

namespace roost::sched {

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
void keep_last(std::vector<double>& v, double t) {
  v.push_back(t);
  if (v.size() > steal_tuner::kSamples) v.erase(v.begin());
}
}  // namespace

bool steal_tuner::other_wins(const std::vector<double>& current, const std::vector<double>& other) {
  if (current.size() < kSamples || other.size() < kSamples) return false;
  return median(other) < median(current) * (1.0 - kMargin);
}

void steal_tuner::iteration_begin(std::uint64_t now_ns) {
  if (adaptive_) begin_ns_ = now_ns;
}

void steal_tuner::iteration_end(std::uint64_t now_ns) {
  if (!adaptive_) return;
  const double t = static_cast<double>(now_ns - begin_ns_);
  if (skip_ > 0) --skip_;
  else if (phase_ == phase::steady) keep_last(steady_, t);
  else keep_last(trial_, t);

  if (phase_ == phase::steady) {
    if (wait_ > 0) --wait_;
    if (wait_ == 0 && steady_.size() >= kSamples) {  // try the other setting
      phase_ = phase::trial;
      trial_.clear();
      set_stealing(!stealing());
      skip_ = 1;
    }
  } else if (trial_.size() >= kSamples) {
    decide();
  }
}

void steal_tuner::decide() {
  const bool trial_on = stealing();
  const bool win = other_wins(steady_, trial_);
  const double on_us = median(trial_on ? trial_ : steady_) / 1e3, off_us = median(trial_on ? steady_ : trial_) / 1e3;
  char buf[160];
  std::snprintf(buf, sizeof buf, "iteration medians %.1f us with stealing, %.1f us without", on_us, off_us);
  {
    std::lock_guard<std::mutex> lk(m_);
    ++trials_;
    if (win) ++switches_;
    last_trial_ = buf;
  }
  if (win) {  // keep the trial's setting; its samples are the steady ones now
    steady_ = trial_;
    next_wait_ = kMinWait;
  } else {    // back to the setting we had
    set_stealing(!trial_on);
    skip_ = 1;
    next_wait_ = std::min(next_wait_ * 2, kMaxWait);
  }
  trial_.clear();
  wait_ = next_wait_;
  phase_ = phase::steady;
}

std::string steal_tuner::describe() const {
  if (!adaptive_) return stealing() ? "stealing on" : "stealing off";
  std::lock_guard<std::mutex> lk(m_);
  std::string s = std::string("stealing adaptive (ROOST_ADWS_STEAL=auto), now ") + (stealing() ? "on" : "off");
  if (trials_ == 0) return s + ", no trial yet";
  s += " after " + std::to_string(trials_) + " trial" + (trials_ == 1 ? "" : "s") + " and " +
       std::to_string(switches_) + " switch" + (switches_ == 1 ? "" : "es") + "; last: " + last_trial_;
  return s;
}

}  // namespace roost::sched
