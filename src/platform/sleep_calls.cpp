// The C library's sleeping and yielding calls, wrapped so that a task which waits for another task by
// polling with them can be preempted (seed 003 ch. 3; engine/README.md, "Preemption").
//
// Why: a tick that lands in a system library is deferred (preempt_signal.hpp, in_system_library), and a
// loop such as `while (!flag) std::this_thread::sleep_for(100us);` is inside the C library, asleep, at
// nearly every tick. Deferred for ever, that task kept its worker: on one worker the sibling that would set
// the flag ran seconds to minutes later under the per-worker timers, and never under the monitor (an
// outside-user campaign). A yield loop (sched_yield) waited up to seconds too.
//
// How: the handler, deferring a tick for a task that made no progress in a whole interval because it is in
// a system library, marks its thread with the worker's progress signature (defer_to_sleep_exit). Each
// wrapper below calls the C library's function and then, only when its thread is marked and the call came
// from the program's code (its return address is in no system library; nanosleep and clock_nanosleep may
// also come from the C++ runtime, whose sleep_for keeps nothing but its remaining time on its stack), the
// engine's hook, which preempts the task there if its progress has not moved since the mark. The call is
// over by then: nothing of the C library's is half done. A call from another system library (a shared
// allocator spinning with sched_yield may hold its lock) leaves the mark for a call of the program's.
// Unmarked, a wrapper costs its call one thread-local load and a branch beside a system call.
//
// These definitions are the program's own (libroost is linked into it), so the dynamic linker binds the
// program's calls and those of the shared libraries it uses (libstdc++'s std::this_thread::sleep_for,
// which calls nanosleep) to them; the C library's own internal calls are bound inside it and never come
// here. Each forwards to the next definition in the loader's search order (RTLD_NEXT: a sanitizer's
// interceptor, else the C library's), looked up once before the program's static constructors. Where
// libroost is linked into a shared object instead (a plugin), the calls are not bound here, and install()
// says so once. Also wrapped: poll, select and epoll_wait, which a loop uses to sleep (`poll(nullptr, 0, 1)`,
// `select` with a timeout, an event loop's timed `epoll_wait`): such a loop waiting for a sibling task was in
// the kernel at every tick and never preempted (an outside-user campaign); a call without a timeout only
// pays the unmarked branch. And their forms with a signal mask, ppoll, pselect and epoll_pwait, for the same
// loops written with them. And the reads a loop polls a descriptor with, read, recv, recvfrom and recvmsg: a
// task reading a non-blocking pipe or socket until a sibling task writes to it was in the kernel or the C
// library at every tick and kept its worker for good (named as a gap in earlier notes); a blocking one
// returns only with data, so its return is as good a place as any. Not wrapped: waits that end only when
// something wakes them (mutexes, condition variables, futexes, a blocking read that nothing feeds), which a
// tick does not end; the user guide says so.
#include "platform/preempt_signal.hpp"

#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace roost::platform::preempt {

namespace {
// Set by the tick's handler, read and cleared by the same thread's next wrapped call from the program's
// code: initial-exec, segment-relative (the handler may write them). The signature tells the hook whether
// the task moved on since that tick (a mark left long ago by a tick deferred in malloc, say, must not
// preempt an unrelated later call).
__thread bool t_marked __attribute__((tls_model("initial-exec"))) = false;
__thread std::uint64_t t_mark_progress __attribute__((tls_model("initial-exec"))) = 0;
std::atomic<sleep_exit_fn> g_on_sleep_exit{nullptr};

// The C library's definitions (RTLD_NEXT: the next after the program's, a sanitizer's interceptor or the C
// library's), looked up once before the program's static constructors, so that no wrapped call makes a
// dlsym (the loader's lock, an allocation: nanosleep, clock_nanosleep and sleep are async-signal-safe, and
// a -static program's dlsym fails, every time). Null before then and in a -static program: the wrappers
// make the system call themselves.
struct next_definitions {
  int (*nanosleep)(const struct timespec*, struct timespec*) = nullptr;
  int (*clock_nanosleep)(clockid_t, int, const struct timespec*, struct timespec*) = nullptr;
  int (*usleep)(useconds_t) = nullptr;
  unsigned (*sleep)(unsigned) = nullptr;
  int (*sched_yield)() = nullptr;
  int (*poll)(struct pollfd*, nfds_t, int) = nullptr;
  int (*select)(int, fd_set*, fd_set*, fd_set*, struct timeval*) = nullptr;
  int (*epoll_wait)(int, struct epoll_event*, int, int) = nullptr;
  int (*ppoll)(struct pollfd*, nfds_t, const struct timespec*, const sigset_t*) = nullptr;
  int (*pselect)(int, fd_set*, fd_set*, fd_set*, const struct timespec*, const sigset_t*) = nullptr;
  int (*epoll_pwait)(int, struct epoll_event*, int, int, const sigset_t*) = nullptr;
  ssize_t (*read)(int, void*, size_t) = nullptr;
  ssize_t (*recv)(int, void*, size_t, int) = nullptr;
  ssize_t (*recvfrom)(int, void*, size_t, int, struct sockaddr*, socklen_t*) = nullptr;
  ssize_t (*recvmsg)(int, struct msghdr*, int) = nullptr;
};
next_definitions g_next;

template <class Fn>
void look_up(Fn& f, const char* name) {
  f = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}
__attribute__((constructor(101))) void look_up_next_definitions() {
  look_up(g_next.nanosleep, "nanosleep");
  look_up(g_next.clock_nanosleep, "clock_nanosleep");
  look_up(g_next.usleep, "usleep");
  look_up(g_next.sleep, "sleep");
  look_up(g_next.sched_yield, "sched_yield");
  look_up(g_next.poll, "poll");
  look_up(g_next.select, "select");
  look_up(g_next.epoll_wait, "epoll_wait");
  look_up(g_next.ppoll, "ppoll");
  look_up(g_next.pselect, "pselect");
  look_up(g_next.epoll_pwait, "epoll_pwait");
  look_up(g_next.read, "read");
  look_up(g_next.recv, "recv");
  look_up(g_next.recvfrom, "recvfrom");
  look_up(g_next.recvmsg, "recvmsg");
}

// After the C library's call returned: the engine's hook, if a tick was deferred in a system library while
// this thread's task made no progress, and the call came from the program's code, where nothing of a
// library's is half done (`caller`: the wrapper's return address). From another system library (a shared
// allocator's spin, which may hold its lock) the mark waits for a call of the program's; from the C++
// runtime only its sleep_for's nanosleep, which keeps nothing but its remaining time (cxx_ok). errno is
// the call's whatever the hook does (it keeps it).
// A child of fork() is a copy of the forking task's thread without its runtime: a mark copied with it made
// the child's next wrapped call preempt the task there and run its sibling tasks in the child (a task that
// forked after a tick was deferred in the C library, then read a pipe before exec: its siblings ran in 4 to
// 15 children of 4 a run; an outside-user campaign). The child forgets it, and so does the forking thread
// before the fork: libraries' child handlers registered before roost's run before its own, and a wrapped
// call of theirs would meet the mark (a review). The parent then waits for the next tick to preempt the task.
void forget_the_mark() { t_marked = false; }
__attribute__((constructor)) void watch_forks_for_marks() {
  ::pthread_atfork(&forget_the_mark, nullptr, &forget_the_mark);
}

inline void after_call(const void* caller, bool cxx_ok) {
  if (!t_marked) [[likely]] return;
  const auto pc = reinterpret_cast<std::uintptr_t>(caller);
  if (cxx_ok ? in_system_library_but_cxx_runtime(pc) : in_system_library(pc)) return;
  t_marked = false;
  if (sleep_exit_fn f = g_on_sleep_exit.load(std::memory_order_acquire)) f(t_mark_progress);
}
}  // namespace

void defer_to_sleep_exit(std::uint64_t progress) {
  t_mark_progress = progress;
  t_marked = true;
}
void set_sleep_exit_hook(sleep_exit_fn f) { g_on_sleep_exit.store(f, std::memory_order_release); }

}  // namespace roost::platform::preempt

namespace preempt = roost::platform::preempt;

// Weak: a program (or another library linked into it) that defines one of these itself keeps its own, and
// the link does not fail on two definitions; its calls then reach the C library without the hook. Default
// visibility whatever the build's (-fvisibility=hidden left them unexported: libstdc++'s sleep_for then
// bound to the C library's, and the warning blamed a plugin: a review).
#define ROOST_SLEEP_CALL __attribute__((weak, visibility("default")))

// In a -static program these definitions take the place of the C library's (a weak definition met first
// satisfies every reference, so the C library's member is never linked), and there is no next definition:
// the fallbacks call the C library's own implementations under the names it gives them for itself, which
// it exports in its shared form too (__nanosleep, __sched_yield), so they stay cancellation points
// (pthread_cancel). clock_nanosleep's has no such name: its fallback makes the system call with
// asynchronous cancellation on for its duration, as a cancellation point does, and answers a thread's
// CPU-time clock with EINVAL, as the C library does (an outside-user campaign: a -static program's sleeping
// threads could no longer be cancelled, and that clock gave EOPNOTSUPP).
#ifdef __GLIBC__
extern "C" int __nanosleep(const struct timespec* req, struct timespec* rem);
extern "C" int __sched_yield();
extern "C" int __poll(struct pollfd* fds, nfds_t n, int timeout_ms);
extern "C" int __select(int n, fd_set* r, fd_set* w, fd_set* e, struct timeval* timeout);
extern "C" ssize_t __read(int fd, void* buf, size_t n);
#else  // another C library (musl has none of these names): the system calls, no cancellation points
namespace {
int __nanosleep(const struct timespec* req, struct timespec* rem) {
  return static_cast<int>(syscall(SYS_nanosleep, req, rem));
}
int __sched_yield() { return static_cast<int>(syscall(SYS_sched_yield)); }
int __poll(struct pollfd* fds, nfds_t n, int timeout_ms) {
  struct timespec ts{timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  return static_cast<int>(syscall(SYS_ppoll, fds, n, timeout_ms < 0 ? nullptr : &ts, nullptr, 0));
}
int __select(int n, fd_set* r, fd_set* w, fd_set* e, struct timeval* timeout) {
  return static_cast<int>(syscall(SYS_select, n, r, w, e, timeout));
}
ssize_t __read(int fd, void* buf, size_t n) { return syscall(SYS_read, fd, buf, n); }
}  // namespace
#endif

namespace roost::platform::preempt {
namespace {
// The fallbacks with the C library's conventions (above).
int fallback_clock_nanosleep(clockid_t clock, int flags, const struct timespec* req, struct timespec* rem) {
  if (clock == CLOCK_THREAD_CPUTIME_ID) return EINVAL;
  const int saved = errno;  // the error is the return value, errno unchanged
  int type = 0;
  pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
  const int r = syscall(SYS_clock_nanosleep, clock, flags, req, rem) == 0 ? 0 : errno;
  pthread_setcanceltype(type, &type);
  errno = saved;
  return r;
}
int fallback_usleep(useconds_t usec) {
  const struct timespec ts{static_cast<time_t>(usec / 1000000), static_cast<long>(usec % 1000000) * 1000};
  return __nanosleep(&ts, nullptr);
}
unsigned fallback_sleep(unsigned seconds) {  // the unslept seconds, truncated, as glibc's
  struct timespec ts{static_cast<time_t>(seconds), 0};
  return __nanosleep(&ts, &ts) == 0 ? 0u : static_cast<unsigned>(ts.tv_sec);
}
// epoll_wait has no internal name: the system call (epoll_pwait without a mask where there is no epoll_wait),
// with asynchronous cancellation for its duration, as clock_nanosleep's fallback.
int fallback_epoll_wait(int fd, struct epoll_event* events, int n, int timeout_ms) {
  int type = 0;
  pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
#ifdef SYS_epoll_wait
  const long r = syscall(SYS_epoll_wait, fd, events, n, timeout_ms);
#else
  const long r = syscall(SYS_epoll_pwait, fd, events, n, timeout_ms, nullptr, 0);
#endif
  const int saved = errno;
  pthread_setcanceltype(type, &type);
  errno = saved;
  return static_cast<int>(r);
}
// The masked forms have no internal names either: their system calls, with asynchronous cancellation for
// their duration. The kernel writes the time left into the timeout, which the C library's callers pass as
// const: a copy is given, as the C library gives one. _NSIG / 8: the kernel's signal set size.
template <class Call>
long with_async_cancel(Call call) {
  int type = 0;
  pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
  const long r = call();
  const int saved = errno;
  pthread_setcanceltype(type, &type);
  errno = saved;
  return r;
}
int fallback_ppoll(struct pollfd* fds, nfds_t n, const struct timespec* timeout, const sigset_t* mask) {
  struct timespec left{};
  if (timeout) left = *timeout;
  return static_cast<int>(
      with_async_cancel([&] { return syscall(SYS_ppoll, fds, n, timeout ? &left : nullptr, mask, _NSIG / 8); }));
}
int fallback_pselect(int n, fd_set* r, fd_set* w, fd_set* e, const struct timespec* timeout, const sigset_t* mask) {
  struct timespec left{};
  if (timeout) left = *timeout;
  struct {
    const sigset_t* set;
    std::size_t bytes;
  } masked{mask, _NSIG / 8};  // pselect6's sixth argument
  return static_cast<int>(with_async_cancel(
      [&] { return syscall(SYS_pselect6, n, r, w, e, timeout ? &left : nullptr, mask ? &masked : nullptr); }));
}
int fallback_epoll_pwait(int fd, struct epoll_event* events, int n, int timeout_ms, const sigset_t* mask) {
  return static_cast<int>(
      with_async_cancel([&] { return syscall(SYS_epoll_pwait, fd, events, n, timeout_ms, mask, _NSIG / 8); }));
}
// The receives' internal names are the C library's private ones: their system calls (recv is recvfrom
// without an address), cancellation points as above.
ssize_t fallback_recvfrom(int fd, void* buf, size_t n, int flags, struct sockaddr* from, socklen_t* from_len) {
  return with_async_cancel([&] { return syscall(SYS_recvfrom, fd, buf, n, flags, from, from_len); });
}
ssize_t fallback_recvmsg(int fd, struct msghdr* msg, int flags) {
  return with_async_cancel([&] { return syscall(SYS_recvmsg, fd, msg, flags); });
}
}  // namespace
}  // namespace roost::platform::preempt

// The definitions under names of their own (hidden: install() compares the process's binding with these
// addresses, which a program's own definition or a plugin's PIC code would not give), and the public names
// as weak aliases of them. Each takes its caller's address itself (after_call).
extern "C" {

__attribute__((visibility("hidden"))) int roost_nanosleep(const struct timespec* req, struct timespec* rem) {
  const int r = preempt::g_next.nanosleep ? preempt::g_next.nanosleep(req, rem) : __nanosleep(req, rem);
  preempt::after_call(__builtin_return_address(0), true);
  return r;
}

__attribute__((visibility("hidden"))) int roost_clock_nanosleep(clockid_t clock, int flags,
                                                                 const struct timespec* req, struct timespec* rem) {
  const int r = preempt::g_next.clock_nanosleep ? preempt::g_next.clock_nanosleep(clock, flags, req, rem)
                                                : preempt::fallback_clock_nanosleep(clock, flags, req, rem);
  preempt::after_call(__builtin_return_address(0), true);
  return r;
}

__attribute__((visibility("hidden"))) int roost_usleep(useconds_t usec) {
  const int r = preempt::g_next.usleep ? preempt::g_next.usleep(usec) : preempt::fallback_usleep(usec);
  preempt::after_call(__builtin_return_address(0), false);
  return r;
}

__attribute__((visibility("hidden"))) unsigned roost_sleep(unsigned seconds) {
  const unsigned r = preempt::g_next.sleep ? preempt::g_next.sleep(seconds) : preempt::fallback_sleep(seconds);
  preempt::after_call(__builtin_return_address(0), false);
  return r;
}

__attribute__((visibility("hidden"))) int roost_sched_yield() noexcept {
  const int r = preempt::g_next.sched_yield ? preempt::g_next.sched_yield() : __sched_yield();
  preempt::after_call(__builtin_return_address(0), false);
  return r;
}

__attribute__((visibility("hidden"))) int roost_poll(struct pollfd* fds, nfds_t n, int timeout_ms) {
  const int r = preempt::g_next.poll ? preempt::g_next.poll(fds, n, timeout_ms) : __poll(fds, n, timeout_ms);
  preempt::after_call(__builtin_return_address(0), false);
  return r;
}

__attribute__((visibility("hidden"))) int roost_select(int n, fd_set* r, fd_set* w, fd_set* e, struct timeval* timeout) {
  const int got = preempt::g_next.select ? preempt::g_next.select(n, r, w, e, timeout) : __select(n, r, w, e, timeout);
  preempt::after_call(__builtin_return_address(0), false);
  return got;
}

__attribute__((visibility("hidden"))) int roost_epoll_wait(int fd, struct epoll_event* events, int n, int timeout_ms) {
  const int r = preempt::g_next.epoll_wait ? preempt::g_next.epoll_wait(fd, events, n, timeout_ms)
                                           : preempt::fallback_epoll_wait(fd, events, n, timeout_ms);
  preempt::after_call(__builtin_return_address(0), false);
  return r;
}

__attribute__((visibility("hidden"))) int roost_ppoll(struct pollfd* fds, nfds_t n, const struct timespec* timeout,
                                                       const sigset_t* mask) {
  const int r = preempt::g_next.ppoll ? preempt::g_next.ppoll(fds, n, timeout, mask)
                                      : preempt::fallback_ppoll(fds, n, timeout, mask);
  preempt::after_call(__builtin_return_address(0), false);
  return r;
}

__attribute__((visibility("hidden"))) int roost_pselect(int n, fd_set* r, fd_set* w, fd_set* e,
                                                         const struct timespec* timeout, const sigset_t* mask) {
  const int got = preempt::g_next.pselect ? preempt::g_next.pselect(n, r, w, e, timeout, mask)
                                          : preempt::fallback_pselect(n, r, w, e, timeout, mask);
  preempt::after_call(__builtin_return_address(0), false);
  return got;
}

__attribute__((visibility("hidden"))) int roost_epoll_pwait(int fd, struct epoll_event* events, int n, int timeout_ms,
                                                             const sigset_t* mask) {
  const int r = preempt::g_next.epoll_pwait ? preempt::g_next.epoll_pwait(fd, events, n, timeout_ms, mask)
                                            : preempt::fallback_epoll_pwait(fd, events, n, timeout_ms, mask);
  preempt::after_call(__builtin_return_address(0), false);
  return r;
}

__attribute__((visibility("hidden"))) ssize_t roost_read(int fd, void* buf, size_t n) {
  const ssize_t r = preempt::g_next.read ? preempt::g_next.read(fd, buf, n) : __read(fd, buf, n);
  preempt::after_call(__builtin_return_address(0), false);
  return r;
}

__attribute__((visibility("hidden"))) ssize_t roost_recv(int fd, void* buf, size_t n, int flags) {
  const ssize_t r = preempt::g_next.recv ? preempt::g_next.recv(fd, buf, n, flags)
                                         : preempt::fallback_recvfrom(fd, buf, n, flags, nullptr, nullptr);
  preempt::after_call(__builtin_return_address(0), false);
  return r;
}

__attribute__((visibility("hidden"))) ssize_t roost_recvfrom(int fd, void* buf, size_t n, int flags, struct sockaddr* from,
                                                              socklen_t* from_len) {
  const ssize_t r = preempt::g_next.recvfrom ? preempt::g_next.recvfrom(fd, buf, n, flags, from, from_len)
                                             : preempt::fallback_recvfrom(fd, buf, n, flags, from, from_len);
  preempt::after_call(__builtin_return_address(0), false);
  return r;
}

__attribute__((visibility("hidden"))) ssize_t roost_recvmsg(int fd, struct msghdr* msg, int flags) {
  const ssize_t r = preempt::g_next.recvmsg ? preempt::g_next.recvmsg(fd, msg, flags) : preempt::fallback_recvmsg(fd, msg, flags);
  preempt::after_call(__builtin_return_address(0), false);
  return r;
}

ROOST_SLEEP_CALL int nanosleep(const struct timespec* req, struct timespec* rem) __attribute__((alias("roost_nanosleep")));
ROOST_SLEEP_CALL int clock_nanosleep(clockid_t clock, int flags, const struct timespec* req, struct timespec* rem)
    __attribute__((alias("roost_clock_nanosleep")));
ROOST_SLEEP_CALL int usleep(useconds_t usec) __attribute__((alias("roost_usleep")));
ROOST_SLEEP_CALL unsigned sleep(unsigned seconds) __attribute__((alias("roost_sleep")));
ROOST_SLEEP_CALL int sched_yield() noexcept __attribute__((alias("roost_sched_yield")));
ROOST_SLEEP_CALL int poll(struct pollfd* fds, nfds_t n, int timeout_ms) __attribute__((alias("roost_poll")));
ROOST_SLEEP_CALL int select(int n, fd_set* r, fd_set* w, fd_set* e, struct timeval* timeout)
    __attribute__((alias("roost_select")));
ROOST_SLEEP_CALL int epoll_wait(int fd, struct epoll_event* events, int n, int timeout_ms) __attribute__((alias("roost_epoll_wait")));
ROOST_SLEEP_CALL int ppoll(struct pollfd* fds, nfds_t n, const struct timespec* timeout, const sigset_t* mask)
    __attribute__((alias("roost_ppoll")));
ROOST_SLEEP_CALL int pselect(int n, fd_set* r, fd_set* w, fd_set* e, const struct timespec* timeout, const sigset_t* mask)
    __attribute__((alias("roost_pselect")));
ROOST_SLEEP_CALL int epoll_pwait(int fd, struct epoll_event* events, int n, int timeout_ms, const sigset_t* mask)
    __attribute__((alias("roost_epoll_pwait")));
ROOST_SLEEP_CALL ssize_t read(int fd, void* buf, size_t n) __attribute__((alias("roost_read")));
ROOST_SLEEP_CALL ssize_t recv(int fd, void* buf, size_t n, int flags) __attribute__((alias("roost_recv")));
ROOST_SLEEP_CALL ssize_t recvfrom(int fd, void* buf, size_t n, int flags, struct sockaddr* from, socklen_t* from_len)
    __attribute__((alias("roost_recvfrom")));
ROOST_SLEEP_CALL ssize_t recvmsg(int fd, struct msghdr* msg, int flags) __attribute__((alias("roost_recvmsg")));

}  // extern "C"

namespace roost::platform::preempt {
// Whether the process binds these calls to the definitions above: not where libroost is linked into a
// shared object (a plugin: the program and the C library come first in the loader's order) or the program
// defines one itself (its definition wins over the weak one). Asked of the loader, by name, against the
// hidden names' addresses: &::nanosleep in PIC code is itself the process's binding (an outside-user
// campaign: the check passed in a plugin and the warning never came).
bool sleep_calls_bound_here() {
  return ::dlsym(RTLD_DEFAULT, "nanosleep") == reinterpret_cast<void*>(&roost_nanosleep) &&
         ::dlsym(RTLD_DEFAULT, "sched_yield") == reinterpret_cast<void*>(&roost_sched_yield) &&
         ::dlsym(RTLD_DEFAULT, "usleep") == reinterpret_cast<void*>(&roost_usleep) &&
         ::dlsym(RTLD_DEFAULT, "clock_nanosleep") == reinterpret_cast<void*>(&roost_clock_nanosleep) &&
         ::dlsym(RTLD_DEFAULT, "sleep") == reinterpret_cast<void*>(&roost_sleep);
}
}  // namespace roost::platform::preempt
