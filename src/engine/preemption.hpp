// Preemption of long-running tasks by a timer signal: signal-yield (seed 003 ch. 3; digest §4.2, §4.4).
// This file is the engine's side: the workers' timers and what a tick does. The OS side (the signal, its
// handler, the timers' system calls) is platform/preempt_signal.hpp; the argument why a tick never lands
// where the scheduler cannot resume from is in engine/README.md, "Preemption".
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "platform/platform.hpp"
#include "platform/preempt_signal.hpp"
#include "roost/options.hpp"

namespace roost::detail {
struct fiber_abi;
}

namespace roost::engine {

struct worker;

// The timer signal's handler body, on the interrupted thread.
void on_preempt_tick(void* ucontext);
// The hook of a sleeping or yielding call of the C library on a thread where a tick was deferred inside a
// system library (platform/sleep_calls.cpp): preempts the stuck task there, after the call.
void on_sleep_exit(std::uint64_t progress_at_mark);
// Suspends f's task, running on w, until it is resumed (false, counted as a deferred tick, if it cannot be
// now). With the tick's signal blocked in the calling thread.
bool preempt_running_task(worker& w, detail::fiber_abi& f);

// Says once, on stderr, that a worker could not make the idle fiber a preemption needs (out of memory or
// address space): until one can be made no tick preempts, and a task that spins until another runs spins on.
// Out of line and cold: called by the scheduling loop only (engine.hpp, find_work).
[[gnu::cold, gnu::noinline]] void note_no_idle_fiber() noexcept;

// One runtime's timers (seed 003 §3.4, digest §4.4), in one of five designs (ROOST_PREEMPT_TIMER):
//  - per-worker, aligned: a timer per worker, signalling its worker's thread; worker i's ticks fall i/n of
//    the interval after worker 0's, so no two workers' ticks coincide and contend for the kernel's lock;
//  - per-worker, naive: the same, all ticking at the same instants;
//  - chained (per-process): worker 0's timer alone. Each tick is passed on from the worker it reaches to
//    at most one next worker (by id) that may need it: one that is not asleep and whose progress signature
//    (worker.hpp) did not move since the chain last looked at it. That worker passes it on in
//    turn. So a worker whose tasks spawn, wait or end is not interrupted at all, and the signals of one
//    tick follow each other instead of coinciding. (The thesis's chain forwards to the next worker running
//    a preemptive thread; every task is preemptible here, so "may be stuck" is the sharper test.)
//  - per-worker CPU time (not in the thesis): a timer per worker on its thread's CPU-time clock. A sleeping
//    worker is never ticked, and the kernel checks these timers at its own scheduler tick, so they add no
//    interrupt: on a VM, where a timer interrupt costs ~15 us, the only design whose cost does not show
//    (roost-bench --preempt-timers). Its ticks come at the kernel's tick granularity (CONFIG_HZ).
//  - monitor (not in the thesis; Go's sysmon is the model): no timer on any worker. A thread of the
//    runtime's own, which takes no task, wakes every interval during a run and looks at every worker as the
//    chain does, signalling each one that may be stuck. A worker whose tasks pass scheduling points is never
//    interrupted: every tick of the other designs interrupts a worker (worker 0's, in the chained one), and
//    on a VM a tick with an empty handler cost +3% at 1 ms, over the thesis's 1% before roost does anything.
// Between two runs worker 0's timer ticks at most once more: it is left armed at a run's end, and the next
// run on the same thread finds it still on its phase and arms nothing (platform::preempt::linger); a tick
// before that disarms it, and runs no tick hook. So in the chained design nothing but that tick comes
// between runs, and the monitor sleeps until the next run.
class preemption_timers {
 public:
  // workers: the runtime's, by id; they outlive this object's last tick.
  // setting: what turned preemption on (e.g. "ROOST_PREEMPT='signal'"), for the handler's errors.
  preemption_timers(std::uint64_t interval_ns, preempt_timer_design design, std::vector<worker*> workers,
                    const std::string& setting);
  // Before each run: the tick's handler is still roost's (platform::preempt::check_installed).
  void check_handler() const;
  ~preemption_timers();
  void monitor_loop();  // the monitor design's thread
  preemption_timers(const preemption_timers&) = delete;

  // A kernel thread starts or stops serving worker `id`; `t` is that thread's own timer, which signals it,
  // armed on the worker's phase while the thread serves. Every thread that serves a worker has a timer of
  // its own: under KLT-switching a worker moves between threads (engine/klt.hpp), and a timer signals only
  // the thread it was made for. In the chained design only the thread serving worker 0 is armed; the
  // others are recorded as the ones the chain signals. Async-signal-safe (a task's thread calls both in a
  // tick's handler); unserve also ends worker 0's ticks at the end of a run, when its thread is no worker.
  // `tid` is the serving thread's id, which the monitor signals (it makes no timer).
  // `linger`: worker 0's thread at the end of a back-to-back run, whose timer is left armed. serve_from
  // returns whether the thread's timer was still lingering for this runtime (then it arms nothing).
  bool serve_from(unsigned id, const platform::preempt::thread_timer& t, long tid);
  void unserve(unsigned id, const platform::preempt::thread_timer& t, bool linger = false);
  // Whether worker 0's next tick comes more than `ns` after now: a run's end leaves the timer lingering only
  // then (engine_base::run_root, with twice the gap before this run), so that a loop that sleeps between runs
  // is not cut short by the lingering tick. Always under CPU-time timers (a sleep spends no CPU time).
  bool worker0_tick_later_than(std::uint64_t ns) const;
  // On a thread about to serve worker `id`: a worker's thread that inherited a mask blocking the signal
  // unblocks it; run's caller (id 0) is warned once instead (its mask is the program's), called once it
  // serves (the mask start_serving noted).
  void check_mask_here(unsigned id);

  // Chained design, in the handler on worker `from`'s thread: passes the tick on (async-signal-safe:
  // atomics and one tgkill). A no-op in the per-worker designs.
  void pass_on(unsigned from);
  std::uint64_t interval_ns() const { return interval_ns_; }

 private:
  std::uint64_t interval_ns_;
  preempt_timer_design design_;
  std::uint64_t base_ns_;  // the instant worker 0's ticks are aligned to
  std::uint64_t serial_;   // this object among the process's, never 0: the owner of a lingering timer
  std::vector<worker*> workers_;
  std::string setting_;  // what turned preemption on, for errors
  // Chained: each worker's thread id while its thread runs (0 otherwise), and the progress signature the
  // chain saw there at its last look. Written by the worker's thread and by the chain's handlers.
  std::unique_ptr<std::atomic<long>[]> tids_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> chain_seen_;
  // Monitor: whether worker 0 is served (a run is under way), whether to stop, and whether the monitor
  // sleeps until a run starts. It sleeps on this word (platform::preempt::wait_word); a stop wakes it, and
  // a run's start if it sleeps.
  static constexpr std::uint32_t kMonitorServing = 1, kMonitorStop = 2, kMonitorAsleep = 4;
  std::atomic<std::uint32_t> monitor_word_{0};
  // Started by platform::native_platform::start_thread, not std::thread: a runtime made inside a task of
  // another would give it the one CPU its worker is pinned to, and the monitor would then share that CPU
  // with the worker it must interrupt; start_thread starts it on the CPUs the creator had before roost
  // pinned it (platform/README.md).
  platform::native_platform::thread_handle monitor_ = 0;
  // Chained and monitor: whether worker j may be stuck, the look both make (the chain's at most once a tick).
  bool may_be_stuck(std::size_t j, long& tid);
};

}  // namespace roost::engine
