// Preemption of long-running tasks (ROOST_PREEMPT=signal|klt; seed 003 ch. 3).
//
// roost's tasks are user-level threads that switch only at scheduling points: a spawn, a wait, a task's
// end. A task that spins until another task acts (a flag set by a later sibling, a busy barrier in a
// nested library) never reaches one, so the task it waits for may never run on its worker, and with as
// many spinners as workers the program hangs. With ROOST_PREEMPT on, each worker's timer ticks every
// ROOST_PREEMPT_INTERVAL (1ms); a tick that finds a task in its own code, with no scheduling point since
// the previous tick, suspends it, queues it behind the worker's other work, and the worker schedules. The
// task resumes later on the same worker, by returning from the tick, its errno as it was: under
// KLT-switching nothing it sees changes but the time (signal-yield: below).
// How it is suspended is the thesis's thread type (digest §4.6), the runtime's default by ROOST_PREEMPT and
// a task's own by roost::preempt_as (below):
//  * signal-yield (ROOST_PREEMPT=signal): the worker's kernel thread switches to its scheduler and runs the
//    worker's next tasks; the task resumes on the kernel thread that serves the worker then: the same one,
//    unless the worker's tasks mix the two types (roost::preempt_as) and a KLT-switching task holds that
//    thread, when it is another (the thesis's signal-yield, digest §4.2: for code that does not depend on
//    its kernel thread). The cheaper type. The next tasks see the thread's thread_local values as the
//    preempted task left them (and may change them under it), and a lock it holds is held by their thread
//    too. A task that resumes on another kernel thread gets its errno value there, but code compiled to
//    keep errno's address (glibc declares __errno_location const, so GCC reuses it across a loop) reads
//    and writes the old thread's errno: in a mix with KLT-switching tasks, read errno right after the call
//    that set it, or ask for klt (an outside-user campaign read other tasks' values);
//  * KLT-switching (ROOST_PREEMPT=klt): the task keeps its kernel thread, which sleeps with it while a
//    spare kernel thread serves the worker, and wakes when the worker comes to the task again. Its
//    thread_local values and errno stay its own, a recursive or error-checking lock it holds is not the
//    next tasks' to take, and it unlocks on the thread that locked. Each preemption costs two futex
//    hand-overs more (roost-bench --preempt-cost), and a kernel thread per task preempted at once.
//
// A tick is deferred, to the next one, while the task is in:
//  * the runtime's own code (a spawn, a wait, a numa_alloc, per_worker::local, entering or leaving a
//    final region; making, destroying or describing a runtime, set_task_observer, set_touch_consumer,
//    default_distribution and set_default_distribution, whose process-wide locks the next task of the
//    thread would otherwise find taken): the scheduler's state is never seen half changed;
//  * a system library: the C library and the dynamic loader, the C++ runtime and unwinder, the sanitizer
//    runtimes. Their locks (malloc's, stdio's) and per-thread state would otherwise be met, taken and half
//    changed, by the next task of the same OS thread. A tick deferred there for a task that made no
//    progress for an interval is taken when the task's next call of nanosleep, clock_nanosleep, usleep,
//    sleep or sched_yield returns (std::this_thread::sleep_for and yield reach them): a loop that waits
//    for another task by sleeping or yielding, which is inside the C library at nearly every tick, is
//    preempted at its call's return, within about an interval (before, it waited seconds to minutes, or
//    for ever under ROOST_PREEMPT_TIMER=monitor: an outside-user campaign). libroost defines those five
//    functions (weak: a program's own definitions win) and forwards each to the C library's. A task blocked
//    in the kernel (a mutex, a condition variable, a futex, poll, read) is not preempted: it holds its
//    worker's thread until woken. The system libraries are known
//    as shared objects: a program with the C library linked in (-static) is refused preemption (a
//    config_error), one with the C++ runtime linked in (-static-libstdc++) is told so once, on stderr;
//  * a replacement allocator loaded as a shared object (jemalloc, tcmalloc, mimalloc: the object that
//    provides malloc, free or operator new), for the same reason; one linked into the program is told so
//    once, on stderr;
//  * a signal handler of the program's (the interrupted code blocked more signals than its thread does
//    while it serves a worker: a handler blocks its own signal), or code that blocked signals itself: the
//    task under a handler may be inside any of the above;
//  * a roost::non_preemptible region (below).
//
// What code must not do under preemption, as with any preemptive M:N threads (digest §4.6):
//  * hold a lock that another task of the program takes, outside a non_preemptible region: a task
//    preempted while holding it, and a task of the same worker that then blocks on it, block that
//    worker's OS thread for good (under either type: KLT-switching only makes the blocked thread another
//    one). Wrap such critical sections in non_preemptible, or use a lock that yields to the runtime;
//  * read, then write back, a per_worker element across a point where it could be preempted: another task
//    of the same worker may update the element in between. Do it inside non_preemptible;
//  * initialise a function-local static (or run std::call_once) for longer than an interval outside a
//    non_preemptible region: the C++ runtime holds the variable's guard for the whole initialiser, which
//    is the task's own code, so a task preempted there and a task of the same worker that reaches the same
//    static block that worker as a lock would (a review). Put the first use in non_preemptible, or
//    initialise the static before runtime::run.
// An interrupted system call is restarted (SA_RESTART) where the kernel allows it; those it never restarts
// (poll, epoll_wait, nanosleep and the others signal(7) lists) return EINTR as they would for any signal.
// The signal is SIGURG: a program with its own SIGURG handler cannot use ROOST_PREEMPT (a config_error says
// so; one installed after the runtime was made is a usage_error at the next runtime::run), and a thread
// calling runtime::run with SIGURG blocked is warned once.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <cstdint>

#include "roost/detail/abi.hpp"

namespace roost {

// The thesis's three thread types (seed 003 §3.3, digest §4.6).
enum class preemption : std::uint8_t {
  off,     // never preempted (as roost::non_preemptible)
  signal,  // signal-yield
  klt,     // KLT-switching
};

namespace detail {
// Out of line (src/api/preempt.cpp): warns once when a task asks for a type of preemption from a runtime
// that does not preempt (ROOST_PREEMPT=off: no timer ticks, so the choice cannot take effect).
void note_preempt_choice(fiber_abi* f, preemption how) noexcept;
// A roost::usage_error naming a value of `how` that is no preemption (a number cast to the enum).
[[noreturn]] void throw_bad_preemption(preemption how);
}  // namespace detail

// While it lives, the task that made it is preempted as `how` says, whatever the runtime's default: a task
// that calls code relying on its kernel thread (thread_local state, a lock held across a long wait) asks for
// klt under a runtime that uses signal, a hot loop that must not pay for a switch asks for off. It applies
// to the task's own code in its scope; a child it spawns there runs with the runtime's default unless it
// runs inline on the task's stack. Nests, and the innermost wins: a preempt_as(signal) or (klt) inside a
// preempt_as(off) makes the task preemptible again while the inner scope lives (a library's region marked off that calls
// back into code asking for klt; the outer off won, and a spin there hung: an outside-user campaign). A
// roost::non_preemptible region is not a preempt_as: nothing inside it makes the task preemptible. Outside
// a task, nothing. Under ROOST_PREEMPT=off no task is ever preempted: asking for signal or klt there is
// told once, on stderr. A value of `how` that is none of the three (a number cast to the enum) is a
// roost::usage_error, thrown before the scope changed anything (it was taken for off without a word).
class preempt_as {
 public:
  explicit preempt_as(preemption how)
      : f_(detail::running_fiber()),
        kind_(how == preemption::signal ? 1 : how == preemption::klt ? 2 : 0),
        saved_(f_ ? f_->preempt_kind.load(std::memory_order_relaxed) : 0) {
    if (how != preemption::off && kind_ == 0) [[unlikely]] detail::throw_bad_preemption(how);
    if (!f_) return;
    if (kind_ == 0) {  // off: one more raise, counted as a scope's
      detail::preempt_off_add(*f_, 1);
      ++f_->off_scopes;
      std::atomic_signal_fence(std::memory_order_seq_cst);  // nothing of the region moves above the raise
      return;
    }
    detail::note_preempt_choice(f_, how);
    f_->preempt_kind.store(kind_, std::memory_order_relaxed);
    // The outer off scopes' raises, taken back until this scope ends (after the kind: a tick between the two
    // preempts as this scope says).
    taken_back_ = f_->off_scopes;
    f_->off_scopes = 0;
    if (taken_back_) detail::preempt_off_add(*f_, -static_cast<std::int32_t>(taken_back_));
    std::atomic_signal_fence(std::memory_order_seq_cst);  // nothing of the region moves above the store
  }
  ~preempt_as() {
    if (!f_) return;
    std::atomic_signal_fence(std::memory_order_seq_cst);  // nor below these
    if (kind_ == 0) {
      --f_->off_scopes;
      detail::preempt_off_add(*f_, -1);
      return;
    }
    if (taken_back_) detail::preempt_off_add(*f_, static_cast<std::int32_t>(taken_back_));
    f_->off_scopes = taken_back_;
    f_->preempt_kind.store(saved_, std::memory_order_relaxed);
  }
  preempt_as(const preempt_as&) = delete;
  preempt_as& operator=(const preempt_as&) = delete;

 private:
  detail::fiber_abi* f_;  // the scope lives on the task's stack: the same fiber at both ends
  std::uint8_t kind_;     // fiber_abi::preempt_kind while it lives (1 signal, 2 klt); 0 for off
  std::uint8_t saved_;
  std::uint32_t taken_back_ = 0;  // signal or klt: the outer off scopes' raises it took back
};

// While it lives, the task that made it is not preempted (a critical section under a lock other tasks
// take, a read-modify-write of a per_worker element). Nests; costs two stores; outside a task, nothing.
// It covers everything that runs on the task's stack meanwhile, the children a wait() inside it runs inline
// too: under ws-help and cats, whose joins run children on the waiting task's stack, a child that spins
// there until another runs is never preempted, and the program hangs where other schedulers finish (an
// outside-user campaign). Keep waits, and code that waits for other tasks, outside the region.
class non_preemptible {
 public:
  non_preemptible() noexcept : scope_(detail::running_fiber()) {}
  non_preemptible(const non_preemptible&) = delete;
  non_preemptible& operator=(const non_preemptible&) = delete;

 private:
  detail::no_preempt_scope scope_;
};

}  // namespace roost

#include "roost/detail/min_max_back.hpp"
