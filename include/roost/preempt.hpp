// Preemption of long-running tasks (ROOST_PREEMPT=signal; seed 003 ch. 3, "signal-yield").
//
// roost's tasks are user-level threads that switch only at scheduling points: a spawn, a wait, a task's
// end. A task that spins until another task acts (a flag set by a later sibling, a busy barrier in a
// nested library) never reaches one, so the task it waits for may never run on its worker, and with as
// many spinners as workers the program hangs. With ROOST_PREEMPT=signal each worker's timer ticks every
// ROOST_PREEMPT_INTERVAL (1ms); a tick that finds a task in its own code suspends it, queues it behind the
// worker's other work, and the worker schedules. The task resumes later on the same worker (the same OS
// thread), by returning from the tick: nothing it sees changes but the time.
//
// A tick is deferred, to the next one, while the task is in:
//  * the runtime's own code (a spawn, a wait, a numa_alloc, per_worker::local, entering or leaving a
//    final region): the scheduler's state is never seen half changed;
//  * a system library: the C library and the dynamic loader, the C++ runtime and unwinder, the sanitizer
//    runtimes. Their locks (malloc's, stdio's) and per-thread state would otherwise be met, taken and half
//    changed, by the next task of the same OS thread. A loop that spends almost all its time inside such
//    a call (sched_yield, say) is preempted only when a tick lands in its own instructions;
//  * a roost::non_preemptible region (below).
//
// What code must not do under preemption, as with any preemptive M:N threads (digest §4.6):
//  * hold a lock that another task of the program takes, outside a non_preemptible region: a task
//    preempted while holding it, and a task of the same worker that then blocks on it, block that
//    worker's OS thread for good. Wrap such critical sections in non_preemptible, or use a lock that
//    yields to the runtime;
//  * read, then write back, a per_worker element across a point where it could be preempted: another task
//    of the same worker may update the element in between. Do it inside non_preemptible.
// An interrupted system call is restarted (SA_RESTART) where the kernel allows it; those it never restarts
// (poll, epoll_wait, nanosleep and the others signal(7) lists) return EINTR as they would for any signal.
// The signal is SIGURG: a program with its own SIGURG handler cannot use ROOST_PREEMPT=signal (a
// config_error says so), and a thread calling runtime::run with SIGURG blocked is warned once.
#pragma once
#include "roost/detail/abi.hpp"

namespace roost {

// While it lives, the task that made it is not preempted (a critical section under a lock other tasks
// take, a read-modify-write of a per_worker element). Nests; costs two stores; outside a task, nothing.
class non_preemptible {
 public:
  non_preemptible() noexcept : scope_(detail::running_fiber()) {}
  non_preemptible(const non_preemptible&) = delete;
  non_preemptible& operator=(const non_preemptible&) = delete;

 private:
  detail::no_preempt_scope scope_;
};

}  // namespace roost
