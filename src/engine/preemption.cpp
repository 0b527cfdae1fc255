#include "engine/preemption.hpp"

#include <pthread.h>

#include <cerrno>
#include <cstdio>
#include <atomic>

#include "engine/critical_windows.hpp"
#include "engine/engine_base.hpp"
#include "engine/worker.hpp"
#include "platform/platform.hpp"
#include "platform/say_once.hpp"
#include "roost/detail/fp_control.hpp"

namespace roost::engine {

void note_no_idle_fiber() noexcept {
  ROOST_SAY_ONCE("roost: preemption: no stack could be made for the fiber a preempted task leaves its worker to (out "
                 "of memory or address space): ticks are deferred until one can be, and a task that waits for "
                 "another by spinning may wait for ever; give the process more memory or address space (ulimit -v), "
                 "or fewer live tasks\n");
}

namespace {
inline void set_off(detail::fiber_abi& f, std::uint32_t v) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  f.preempt_off.store(v, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
}
inline void bump(std::atomic<std::uint64_t>& c) { c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
// errno of the thread that calls it. Out of line, so that the location is asked for again: GCC takes
// __errno_location for a const function and kept the one read at the tick's entry, and a signal-yield task
// may resume on another kernel thread of its worker (one a KLT-switching task of the worker does not hold),
// whose errno the return then has to set, not the old thread's (TSan: "signal handler spoils errno").
__attribute__((noinline)) void set_errno_here(int value) { errno = value; }
}  // namespace

// Runs on the thread the tick interrupted, on the interrupted stack. It calls nothing that is not
// async-signal-safe unless it interrupted a task's own code outside every system library, where nothing the
// runtime or libc keeps is half changed (engine/README.md, "Preemption").
void on_preempt_tick(void* ucontext) {
  const int saved_errno = errno;
  // initial-exec TLS: a segment-relative load, safe in a handler. nullptr: not a worker now (worker 0's
  // thread between runs, a worker thread at its end).
  detail::fiber_abi* f = detail::t_running_fiber;
  if (f) {
    auto* w = static_cast<worker*>(f->worker);
    // First the next worker's tick (chained timer), which must not wait for this task to be resumed.
    if (w && w->preempt)
      if (preemption_timers* t = w->eng->preemption()) t->pass_on(w->id);
    const std::uintptr_t pc = platform::preempt::interrupted_pc(ucontext);
    if (f->preempt_off.load(std::memory_order_relaxed) != 0 || !w || !w->preempt) {
      // The runtime's own code, or a non_preemptible region: the next tick tries again.
      if (w) bump(w->ticks_deferred);
    } else if (in_critical_window(pc)) {
      bump(w->ticks_deferred);  // inside an inline deque operation (abi.hpp, critical windows)
    } else if (const std::uint64_t progress = progress_signature(*w); progress != w->progress_at_tick) {
      // The worker passed a scheduling point or pushed or popped its deque since the last tick: its task is
      // not stuck. Preemption is the fallback for a task that runs a whole interval without one (digest
      // §4.1); preempting tasks that spawn and join anyway only reordered them, 5-10% of fib's time at 1 ms.
      w->progress_at_tick = progress;
    } else if (platform::preempt::in_system_library(pc)) {
      // A system library (its locks and per-thread state): the next tick tries again, and so does the
      // thread's next sleeping or yielding call when it returns (on_sleep_exit: a task that polls with them
      // is in the C library at nearly every tick).
      bump(w->ticks_deferred);
      platform::preempt::defer_to_sleep_exit(progress);
    } else if (platform::preempt::interrupted_with_more_blocked(ucontext)) {
      // Inside a signal handler of the program's: the task under it may be anywhere (preempt_signal.hpp).
      bump(w->ticks_deferred);
    } else {
      // The task's floating-point state, not the handler's default, is what its suspension saves and what
      // the worker goes on with (engine.hpp, on_arrival): the task's children it runs meanwhile start with
      // it. The handler's return restores the task's own state from the frame in any case.
      if (const std::uint64_t fp = platform::preempt::interrupted_fp_state(ucontext)) detail::fp_control::apply(fp);
      const void* const interrupted_on = platform::preempt::thread_tag();
      if (preempt_running_task(*w, *f))
        platform::preempt::adopt_thread_state(ucontext, interrupted_on);  // the thread it resumed on may be another
    }
  }
  set_errno_here(saved_errno);
}

// Suspends f's task, the one running on w, and returns once it is resumed; false if it could not be
// suspended now (counted as deferred). Called with kSignal blocked in the calling thread: by the kernel in
// the tick's handler, by on_sleep_exit outside it.
bool preempt_running_task(worker& w, detail::fiber_abi& f) {
  // From here the task's fiber is in the runtime again: a tick while we switch is deferred.
  set_off(f, 1);
  // The task's own choice of thread type (roost::preempt_as), else the runtime's. Returns when the task is
  // resumed, on this worker (counted then), on this same kernel thread unless the task is signal-yield and
  // a KLT-switching task of the worker holds this thread now (preempt.hpp); false if it could not be
  // suspended now (no pooled stack to schedule on without allocating here, no spare thread): the next tick
  // tries again.
  const std::uint8_t kind = f.preempt_kind.load(std::memory_order_relaxed);
  bool (*preempt)(worker&) = kind == 1 ? w.preempt_by[0] : kind == 2 ? w.preempt_by[1] : w.preempt;
  const bool done = preempt(w);
  bump(done ? w.preemptions : w.ticks_deferred);
  set_off(f, 0);
  return done;
}

// A sleeping or yielding call of the C library, made from the program's code, returned on a thread where a
// tick was deferred inside a system library while the worker's task had made no progress (its signature
// then: progress_at_mark; platform/sleep_calls.cpp). The call is over, so the task is in the program's code,
// with nothing of a library's half done: it is preempted here as a tick would, unless something since says
// not to (the handler's tests, asked again).
void on_sleep_exit(std::uint64_t progress_at_mark) {
  const int saved_errno = errno;  // the call's
  // As in the handler: the tick's signal blocked from here, so that no tick preempts the task between these
  // tests and the switch (it would be preempted twice); KLT-switching keeps it blocked while this thread
  // sleeps with the task (engine.hpp, preempt_klt), signal-yield unblocks it for the tasks that run
  // meanwhile. The thread that resumes the task serves its worker with it unblocked.
  // A signal handler of the program's, or code that blocked signals itself, first: the task under it may
  // be anywhere, as for a tick (preempt_signal.hpp).
  if (platform::preempt::more_blocked_here()) return;
  platform::preempt::block_here();
  detail::fiber_abi* f = detail::t_running_fiber;
  auto* w = f ? static_cast<worker*>(f->worker) : nullptr;
  // Not a worker's task now, the runtime's own code or a non_preemptible region, or progress since the tick
  // (the task passed a scheduling point, or it ended and this is another task's call).
  if (w && w->preempt && f->preempt_off.load(std::memory_order_relaxed) == 0 &&
      progress_signature(*w) == progress_at_mark)
    preempt_running_task(*w, *f);
  platform::preempt::unblock_here();
  set_errno_here(saved_errno);  // on the thread the task resumed on
}

namespace {
std::uint64_t next_serial() {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}
}  // namespace

preemption_timers::preemption_timers(std::uint64_t interval_ns, preempt_timer_design design,
                                     std::vector<worker*> workers, const std::string& setting)
    : interval_ns_(interval_ns),
      design_(design),
      base_ns_(platform::native_platform::now_ns()),
      serial_(next_serial()),
      workers_(std::move(workers)),
      setting_(setting),
      tids_(new std::atomic<long>[workers_.size()]),
      chain_seen_(new std::atomic<std::uint64_t>[workers_.size()]) {
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    tids_[i].store(0, std::memory_order_relaxed);
    chain_seen_[i].store(0, std::memory_order_relaxed);
  }
  platform::preempt::install(&on_preempt_tick, setting);
  platform::preempt::set_sleep_exit_hook(&on_sleep_exit);
  if (design_ == preempt_timer_design::monitor) {
    try {
      monitor_ = platform::native_platform::start_thread([this] { monitor_loop(); });
      // Named before the constructor returns, for top -H, gdb and the tests; a name is only a help, so a refusal is
      // ignored.
      (void)pthread_setname_np(static_cast<pthread_t>(monitor_), "roost-monitor");
    } catch (...) {
      platform::preempt::uninstall();
      throw;
    }
  }
}

// Worker j's thread, if it serves j, is awake and its progress signature has not moved since the last look
// (which this one records when it has).
bool preemption_timers::may_be_stuck(std::size_t j, long& tid) {
  tid = tids_[j].load(std::memory_order_relaxed);
  const worker& w = *workers_[j];
  if (tid == 0 || w.sleeping.load(std::memory_order_relaxed)) return false;
  const std::uint64_t progress = progress_signature(w);
  if (progress != chain_seen_[j].load(std::memory_order_relaxed)) {
    chain_seen_[j].store(progress, std::memory_order_relaxed);  // progress since the last look: not stuck
    return false;
  }
  return true;
}

void preemption_timers::pass_on(unsigned from) {
  if (design_ != preempt_timer_design::chained) return;
  long tid = 0;
  for (std::size_t j = from + 1; j < workers_.size(); ++j)
    if (may_be_stuck(j, tid)) {
      platform::preempt::signal_thread(tid);  // its handler goes on from j
      return;
    }
}

// Sleeps while no run is under way; during one, looks at every worker once an interval, on the same phase
// as worker 0's ticks in the other designs. A look that finds a worker stuck signals it: the handler then
// preempts its task if it, too, sees no progress since its last tick (on_preempt_tick), so a task that stops
// passing scheduling points is preempted after two or three intervals, as under the chained timer.
//
// A run's start wakes it only if it sleeps (kMonitorAsleep), and a run's end does not wake it: the monitor sees the
// end at its next look and sleeps then. Back-to-back runs (a loop of steps, each its own run) thus cost it no
// wake-up each: two futex wakes a run, and the monitor's wake-ups on the other CPU, cost heat2d's 0.45 ms
// runs 5-9% of their wall time on a VM.
void preemption_timers::monitor_loop() {
  platform::preempt::block_all_signals_here();
  std::uint64_t next = 0;
  for (;;) {
    std::uint32_t word = monitor_word_.load(std::memory_order_acquire);
    if (word & kMonitorStop) return;
    if (!(word & kMonitorServing)) {
      // Announced before the wait, which sleeps only while the word is still what was announced: a run
      // that starts after the announcement sees kMonitorAsleep and wakes it (serve_from).
      word = monitor_word_.fetch_or(kMonitorAsleep, std::memory_order_acq_rel) | kMonitorAsleep;
      if (!(word & (kMonitorServing | kMonitorStop))) platform::preempt::wait_word(monitor_word_, word, 0);
      monitor_word_.fetch_and(~kMonitorAsleep, std::memory_order_acq_rel);
      next = 0;
      continue;
    }
    const std::uint64_t now = platform::native_platform::now_ns();
    if (next == 0) next = now + interval_ns_;
    if (now < next) {
      platform::preempt::wait_word(monitor_word_, word, next);
      continue;  // on time, or woken early (stop), or the word changed (a run ended or began): look again
    }
    next += interval_ns_;
    if (next <= now) next = now + interval_ns_;  // the monitor lost its CPU for intervals: no burst to catch up
    long tid = 0;
    for (std::size_t j = 0; j < workers_.size(); ++j)
      if (may_be_stuck(j, tid)) platform::preempt::signal_thread(tid);
  }
}

preemption_timers::~preemption_timers() {
  // Before the handler may go: a timer of a thread that ran this runtime last must not tick into the
  // program's own disposition of the signal.
  platform::preempt::end_lingering(serial_);
  if (monitor_ != 0) {
    monitor_word_.fetch_or(kMonitorStop, std::memory_order_acq_rel);
    platform::preempt::wake_word(monitor_word_);
    platform::native_platform::join_thread(monitor_);
  }
  platform::preempt::uninstall();
}

void preemption_timers::check_handler() const { platform::preempt::check_installed(setting_); }

void preemption_timers::check_mask_here(unsigned id) {
  // Worker 0's thread is asked after start_serving noted its mask, which nothing here changes.
  if (id == 0 ? !platform::preempt::blocked_while_serving() : !platform::preempt::blocked_here()) return;
  if (id != 0) {
    platform::preempt::unblock_here();  // a worker thread inherited its creator's mask: ours to set
    return;
  }
  ROOST_SAY_ONCE("roost: ROOST_PREEMPT: the thread calling runtime::run blocks SIGURG, the preemption "
                         "signal; %s\n",
                 design_ == preempt_timer_design::chained
                     ? "under ROOST_PREEMPT_TIMER=chained every tick comes through it, so no task is preempted "
                       "while it does, and a task that spins until another runs may spin for ever; unblock SIGURG "
                       "in that thread (pthread_sigmask)"
                     : "tasks on worker 0 are not preempted while it does, and one that spins until another task "
                       "runs may spin for ever, whatever the number of workers (the task it waits for may be "
                       "queued behind it on worker 0); unblock SIGURG in that thread (pthread_sigmask)");
}

bool preemption_timers::serve_from(unsigned id, const platform::preempt::thread_timer& t, long tid) {
  // Ends the thread's lingering whatever the design (a monitor's signal must reach the tick hook).
  const bool still_armed = platform::preempt::resume_lingering(t, serial_);
  if (design_ == preempt_timer_design::monitor) {
    tids_[id].store(tid, std::memory_order_relaxed);  // looked at by the monitor from now on
    // A run: the monitor wakes if it sleeps (monitor_loop).
    if (id == 0 && (monitor_word_.fetch_or(kMonitorServing, std::memory_order_acq_rel) & kMonitorAsleep))
      platform::preempt::wake_word(monitor_word_);
    return still_armed;
  }
  if (design_ == preempt_timer_design::chained) {
    tids_[id].store(t.tid, std::memory_order_relaxed);  // reached by the chain from now on
    if (id != 0) return still_armed;
  }
  if (still_armed) return true;  // left at the end of this runtime's last run on this thread, on its phase
  // The first tick after now on this worker's phase: base + offset + k * interval.
  const std::uint64_t offset = design_ == preempt_timer_design::aligned ? interval_ns_ * id / workers_.size() : 0;
  const std::uint64_t now = platform::native_platform::now_ns();
  const std::uint64_t phase0 = base_ns_ + offset;
  const std::uint64_t k = now > phase0 ? (now - phase0) / interval_ns_ + 1 : 1;
  platform::preempt::arm(t, phase0 + k * interval_ns_, interval_ns_);
  return false;
}

bool preemption_timers::worker0_tick_later_than(std::uint64_t ns) const {
  if (design_ == preempt_timer_design::cputime) return true;
  const std::uint64_t now = platform::native_platform::now_ns();  // worker 0's phase is base_ns_ (offset 0)
  const std::uint64_t to_next = now < base_ns_ ? base_ns_ - now : interval_ns_ - (now - base_ns_) % interval_ns_;
  return to_next > ns;
}

void preemption_timers::unserve(unsigned id, const platform::preempt::thread_timer& t, bool linger) {
  if (linger && design_ != preempt_timer_design::monitor) platform::preempt::linger(t, serial_);
  else platform::preempt::disarm(t);
  if (design_ == preempt_timer_design::chained || design_ == preempt_timer_design::monitor)
    tids_[id].store(0, std::memory_order_relaxed);
  // Between runs the monitor sleeps, from its next look on (monitor_loop).
  if (design_ == preempt_timer_design::monitor && id == 0)
    monitor_word_.fetch_and(~kMonitorServing, std::memory_order_acq_rel);
}

}  // namespace roost::engine
