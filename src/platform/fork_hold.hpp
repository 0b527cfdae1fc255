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
#pragma once
#include <pthread.h>

#include <mutex>

namespace roost::platform {

// `M`: a mutex of static storage duration.
template <std::mutex& M>
void hold_across_forks() {
  ::pthread_atfork([] { M.lock(); }, [] { M.unlock(); }, [] { M.unlock(); });
}
// `Get`: returns the mutex (made on first use and never destroyed).
template <std::mutex& (*Get)()>
void hold_across_forks_of() {
  ::pthread_atfork([] { Get().lock(); }, [] { Get().unlock(); }, [] { Get().unlock(); });
}

}  // namespace roost::platform
