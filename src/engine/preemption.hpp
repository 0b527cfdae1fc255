// Preemption of long-running tasks by a timer signal: signal-yield (seed 003 ch. 3; digest §4.2, §4.4).
// This file is the engine's side: the workers' timers and what a tick does. The OS side (the signal, its
// handler, the timers' system calls) is platform/preempt_signal.hpp; the argument why a tick never lands
// where the scheduler cannot resume from is in engine/README.md, "Preemption".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "platform/preempt_signal.hpp"

namespace roost::engine {

// The timer signal's handler body, on the interrupted thread.
void on_preempt_tick(void* ucontext);

// One runtime's timers: one per worker, each signalling its worker's thread (per-worker timers, §3.4).
// Aligned, worker i's ticks fall i/n of the interval after worker 0's, so no two workers' ticks coincide
// and their signals do not contend for the kernel's lock; naive, they all tick at the same instants.
// Each timer is touched only by its worker's thread (worker 0's by the thread calling run, one at a time).
class preemption_timers {
 public:
  preemption_timers(std::uint64_t interval_ns, bool aligned, unsigned workers);
  ~preemption_timers();
  preemption_timers(const preemption_timers&) = delete;

  // On worker `id`'s thread: makes its timer if this thread has none yet, and arms it.
  void arm_here(unsigned id);
  // On worker `id`'s thread: stops its ticks (worker 0 at the end of a run: the caller's thread is not a
  // worker between runs, and its system calls must not be interrupted then).
  void disarm_here(unsigned id);
  // On worker `id`'s thread, at its end.
  void destroy_here(unsigned id);

  std::uint64_t interval_ns() const { return interval_ns_; }
  bool aligned() const { return aligned_; }

 private:
  std::uint64_t interval_ns_;
  bool aligned_;
  std::uint64_t base_ns_;  // the instant worker 0's ticks are aligned to
  std::vector<platform::preempt::thread_timer> timers_;
};

}  // namespace roost::engine
