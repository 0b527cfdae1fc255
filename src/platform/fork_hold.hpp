// Process-wide locks held across fork(), so that a child can use roost.
//
// fork() copies only the calling thread, and every lock as it stands: one that another thread held is held
// for good in the child, whose first runtime then waits for it for ever. An outside-user campaign forked
// children that made a runtime while another thread made and destroyed runtimes, and found children hung on
// each process-wide lock a runtime's making takes (preemption's handler, the started engines, hwloc's own,
// the touch listeners, the stack guards, the sayings). Each such lock is registered here: the fork's prepare
// handler takes it, so that no other thread is inside it when the child is copied, and both sides release
// it after. The data it guards is whole in the child.
//
// Register from a constructor function (`__attribute__((constructor))`, before main): registered at a first
// use, a fork during that use could still copy the lock held. The mutex must never be destroyed (a
// namespace-scope one, or one made with new and kept). Prepare handlers run in the reverse order of
// registration: two locks one nests inside the other must be registered together, in nesting order
// (page_placement.cpp does so by hand). A std::shared_mutex cannot be released this way in the child, whose
// thread id differs from the parent's (glibc's rwlock reads its writer by id): page_placement.cpp makes its
// one anew there.
//
// A task that forks takes these locks in its prepare handlers and holds them until its parent or child
// handlers give them back: preempted meanwhile, it left them held for the next task of its thread, which
// waited for ever on one (under ThreadSanitizer, which delivers a tick right after an intercepted call, such
// as each lock: every fork of a task under preemption hung its process; an outside-user campaign). So each
// prepare handler turns the running task's preemption off before it takes its lock, and each parent and child
// handler turns it back on after it gave its lock back: whatever order the handlers run in, the task is not
// preempted while it holds one. The engine gives the means (engine_base.cpp, before main); off any task the
// handlers change nothing.
#pragma once
#include <pthread.h>

#include <atomic>
#include <mutex>

namespace roost::platform {

// Adds `delta` to the preemption count of the task running on the calling thread, if one runs there. Set by
// a constructor function before main, before any fork of the module's handlers can run, so that a prepare
// handler and its release both find it or neither does. No thread-local count of its own: every plugin's copy
// of roost takes static TLS, of which a process has little (tests/plugins/host.cpp; one int more and a third
// plugin no longer loaded).
using task_preemption_fn = void (*)(int delta);
inline std::atomic<task_preemption_fn> g_task_preemption{nullptr};
inline void preemption_off_for_fork() {
  if (task_preemption_fn f = g_task_preemption.load(std::memory_order_acquire)) f(1);
}
inline void preemption_back_after_fork() {
  if (task_preemption_fn f = g_task_preemption.load(std::memory_order_acquire)) f(-1);
}

// `M`: a mutex of static storage duration.
template <std::mutex& M>
void hold_across_forks() {
  ::pthread_atfork([] { preemption_off_for_fork(); M.lock(); },
                   [] { M.unlock(); preemption_back_after_fork(); },
                   [] { M.unlock(); preemption_back_after_fork(); });
}
// `Get`: returns the mutex (made on first use and never destroyed).
template <std::mutex& (*Get)()>
void hold_across_forks_of() {
  ::pthread_atfork([] { preemption_off_for_fork(); Get().lock(); },
                   [] { Get().unlock(); preemption_back_after_fork(); },
                   [] { Get().unlock(); preemption_back_after_fork(); });
}

}  // namespace roost::platform
