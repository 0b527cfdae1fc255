// Calls in flight to a listener the program may replace and then delete: the task observer
// (set_task_observer) and the program's touch consumer (set_touch_consumer). The setter returns only once
// no call of the listener it replaced is running or can start, so the program may delete it then (it
// deleted one a worker was still calling: heap-use-after-frees found by outside-user campaigns).
//
// Two phases, as sleepable RCU counts its readers: a call counts itself in the current phase, then reads
// the listener; the setter swaps the listener, waits until the retired phase's count is zero, flips the
// phase and waits until the old phase's count is zero. New calls count in the new phase, so the waits end
// however busy the callers are. Why it is enough (every step seq_cst, one total order): a call whose count
// a wait did not see counted itself after that wait, so after the swap, and reads the listener installed
// then or later. Why both waits: a call that read the phase before the last flip may have counted itself
// in the retired phase after the last setter looked there, and then read the listener that setter
// installed, the one being replaced now (with the second wait alone, a TSan build saw a callback of a
// deleted observer). Striped by the caller's worker, so that workers do not share one counter's line.
//
// A call that replaces its own listener (from inside it) does not wait for itself. Callers keep the task
// from being preempted inside (a call suspended there would keep a setter on its worker waiting for ever).
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

namespace roost::detail {

// Tag: one set of counters per kind of listener (the calling thread's own phase is per kind too).
template <class Tag>
class listener_calls {
 public:
  // Counts a call on stripe `stripe` (a worker's id; any value), reads the listener with `load` and, when
  // there is one, calls `f` with it.
  template <class Load, class F>
  static void call(unsigned stripe, Load&& load, F&& f) {
    const unsigned phase = phase_.load(std::memory_order_seq_cst);
    stripe %= kStripes;
    std::atomic<std::int64_t>& n = calls_[phase][stripe].n;
    n.fetch_add(1, std::memory_order_seq_cst);
    const int outer_phase = t_phase;
    const unsigned outer_stripe = t_stripe;
    t_phase = static_cast<int>(phase);
    t_stripe = stripe;
    struct restore {  // also when f throws
      int p;
      unsigned s;
      std::atomic<std::int64_t>& n;
      ~restore() {
        t_phase = p;
        t_stripe = s;
        n.fetch_sub(1, std::memory_order_release);
      }
    } r{outer_phase, outer_stripe, n};
    if (auto* listener = load()) f(listener);
  }

  // Runs `swap` (which exchanges the listener, seq_cst, and returns the one it replaced) and returns what it
  // returned once no call can still reach that one. Setters one at a time: what swap does besides (a hook
  // bit) stays in the order of the swaps, and each setter flips the phase once.
  template <class Swap>
  static auto replace(Swap&& swap) {
    std::lock_guard<std::mutex> lk(setter_mu_);
    auto replaced = swap();
    const unsigned old = phase_.load(std::memory_order_relaxed);
    drain(old ^ 1u);
    phase_.store(old ^ 1u, std::memory_order_seq_cst);
    drain(old);
    return replaced;
  }

 private:
  static constexpr unsigned kStripes = 64;
  struct alignas(64) count {
    std::atomic<std::int64_t> n{0};
  };
  // Until no call is counted in `phase` (this thread's own, if it is one, not waited for).
  static void drain(unsigned phase) {
    for (unsigned k = 0; k < kStripes; ++k) {
      const std::int64_t mine = (t_phase == static_cast<int>(phase) && t_stripe == k) ? 1 : 0;
      while (calls_[phase][k].n.load(std::memory_order_seq_cst) > mine) std::this_thread::yield();
    }
  }

  static inline count calls_[2][kStripes];
  static inline std::atomic<unsigned> phase_{0};
  static inline std::mutex setter_mu_;
  // The phase and stripe a call on this thread counted itself in (-1: none).
  static inline thread_local int t_phase = -1;
  static inline thread_local unsigned t_stripe = 0;
};

}  // namespace roost::detail
