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
// A setter called from inside calls of the same kind (a listener that replaces itself, or one whose call
// made another that did) gives up the calling thread's counts first, all of them, and does not wait for
// them: otherwise two workers each removing the listener from inside it waited for each other (one held
// the setters' lock and drained, the other, counted, waited for the lock), and so did one thread whose
// calls nest (a review). The calls it was inside go on past the setter uncounted, so they must not use
// the listener they ran in once it returns (the setters' headers say so). Callers keep the task from being
// preempted inside (a call suspended there would keep a setter on its worker waiting for ever).
#pragma once
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>
#include <utility>

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
    thread_counts& counts = mine();  // before the count: a failure to make them leaves nothing counted
    calls_[phase][stripe].n.fetch_add(1, std::memory_order_seq_cst);
    ++counts.at[phase][stripe];
    ++t_held;
    struct uncount {  // also when f throws; not when a setter inside gave this thread's counts up
      unsigned phase, stripe, given_up_before;
      ~uncount() {
        if (t_given_up != given_up_before) return;
        --t_mine->at[phase][stripe];
        --t_held;
        calls_[phase][stripe].n.fetch_sub(1, std::memory_order_release);
      }
    } u{phase, stripe, t_given_up};
    if (auto* listener = load()) f(listener);
  }

  // Registers the fork handler below: once, before any call can be in flight (the .cpp that defines a kind's
  // calls does it when the library is loaded), so that a call() pays nothing for it.
  static bool watch_forks() {
    static const bool registered = (::pthread_atfork(nullptr, nullptr, &after_fork_in_child), true);
    return registered;
  }

  // Runs `swap` (which exchanges the listener, seq_cst, and returns the one it replaced) and returns what it
  // returned once no call can still reach that one. Setters one at a time: what swap does besides (a hook
  // bit) stays in the order of the swaps, and each setter flips the phase once.
  template <class Swap>
  static auto replace(Swap&& swap) {
    if (t_held != 0) give_up_this_threads_calls();
    std::lock_guard<std::mutex> lk(setter_mu_);
    auto replaced = swap();
    const unsigned old = phase_.load(std::memory_order_relaxed);
    drain(old ^ 1u);
    phase_.store(old ^ 1u, std::memory_order_seq_cst);
    drain(old);
    return replaced;
  }

 private:
  // A child of fork() has the forking thread alone: the calls other threads had in flight never end there,
  // and a setter in the child waited for them for ever (an outside-user campaign: set_touch_consumer and
  // set_task_observer hung after a fork made while another thread was inside a callback). The child keeps
  // the forking thread's own counts, and a setters' lock held by another thread is made anew.
  static void after_fork_in_child() {
    for (unsigned p = 0; p < 2; ++p)
      for (unsigned k = 0; k < kStripes; ++k)
        calls_[p][k].n.store(t_mine ? t_mine->at[p][k] : 0, std::memory_order_relaxed);
    ::new (static_cast<void*>(&setter_mu_)) std::mutex;
  }

  static constexpr unsigned kStripes = 64;
  struct alignas(64) count {
    std::atomic<std::int64_t> n{0};
  };
  // Until no call is counted in `phase`.
  static void drain(unsigned phase) {
    for (unsigned k = 0; k < kStripes; ++k)
      while (calls_[phase][k].n.load(std::memory_order_seq_cst) > 0) std::this_thread::yield();
  }
  static void give_up_this_threads_calls() {
    for (unsigned p = 0; p < 2; ++p)
      for (unsigned k = 0; k < kStripes; ++k)
        if (const std::uint32_t mine = std::exchange(t_mine->at[p][k], 0))  // t_held != 0: made
          calls_[p][k].n.fetch_sub(mine, std::memory_order_release);
    t_held = 0;
    ++t_given_up;
  }

  static inline count calls_[2][kStripes];
  static inline std::atomic<unsigned> phase_{0};
  static inline std::mutex setter_mu_;
  // The calling thread's counted calls, by phase and stripe, and in all; how many times a setter on this
  // thread gave them up (a call counted before that is not uncounted again). The counts by stripe live on
  // the heap, made at the thread's first call and freed when it ends: as thread_local arrays they were 1 KiB
  // of the library's 1.3 KiB of TLS, all of it static TLS (initial-exec variables elsewhere make it so),
  // and a second shared library linking roost could not be dlopen'ed ("cannot allocate memory in static
  // TLS block": glibc keeps about 1.6 KiB for all of them; an outside-user campaign).
  struct thread_counts {
    std::uint32_t at[2][kStripes] = {};
  };
  static thread_counts& mine() {
    if (t_mine) [[likely]] return *t_mine;
    return make_mine();
  }
  __attribute__((noinline)) static thread_counts& make_mine() {
    static const ::pthread_key_t key = [] {
      ::pthread_key_t k;
      const auto free_at_exit = [](void* p) {
        t_mine = nullptr;
        delete static_cast<thread_counts*>(p);
      };
      if (::pthread_key_create(&k, free_at_exit) != 0) throw std::bad_alloc();
      return k;
    }();
    auto* made = new thread_counts;
    ::pthread_setspecific(key, made);
    t_mine = made;
    return *made;
  }
  static inline thread_local thread_counts* t_mine = nullptr;
  static inline thread_local std::uint32_t t_held = 0;
  static inline thread_local unsigned t_given_up = 0;
};

}  // namespace roost::detail
