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
// a system library, marks the thread (defer_to_sleep_exit). Each wrapper below calls the C library's
// function and then, only when its thread is marked, the engine's hook, which preempts the task there, in
// the program's code after the call returned: nothing of the C library's is half done at that point (the
// call is over; libstdc++'s sleep_for, the one system library caller that reaches these through its PLT,
// keeps nothing but its loop's remaining time on its stack). Unmarked, a wrapper costs its call one
// thread-local load and a branch beside a system call.
//
// These definitions are the program's own (libroost is linked into it), so the dynamic linker binds the
// program's calls and those of the shared libraries it uses (libstdc++'s std::this_thread::sleep_for,
// which calls nanosleep) to them; the C library's own internal calls are bound inside it and never come
// here. Each forwards to the next definition in the loader's search order (RTLD_NEXT: a sanitizer's
// interceptor, else the C library's), looked up once. Not wrapped: blocking waits (mutexes, condition
// variables, futexes, poll, select, read), which sleep in the kernel until something wakes them, and a tick
// does not end; the user guide says so.
#include "platform/preempt_signal.hpp"

#include <dlfcn.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace roost::platform::preempt {

namespace {
// Set by the tick's handler, read and cleared by the same thread's next wrapped call: initial-exec, a
// segment-relative load (the handler may write it).
__thread bool t_preempt_at_sleep_exit __attribute__((tls_model("initial-exec"))) = false;
std::atomic<sleep_exit_fn> g_on_sleep_exit{nullptr};

// The next definition of `name` after the program's (RTLD_NEXT), looked up at the first call. nullptr where
// there is none (a program linked with -static): the callers then make the system call themselves.
template <class Fn>
Fn next_definition(std::atomic<Fn>& cache, const char* name) {
  Fn f = cache.load(std::memory_order_acquire);
  if (!f) {
    f = reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
    if (f) cache.store(f, std::memory_order_release);
  }
  return f;
}

// After the C library's call returned: the engine's hook, if a tick was deferred in the C library while
// this thread's task made no progress. errno is the call's whatever the hook does (it keeps it).
inline void after_call() {
  if (!t_preempt_at_sleep_exit) [[likely]] return;
  t_preempt_at_sleep_exit = false;
  if (sleep_exit_fn f = g_on_sleep_exit.load(std::memory_order_acquire)) f();
}

// Calls the next definition of `name` (or, without one, `by_syscall`) with `args`, then after_call().
template <class Fn, class BySyscall, class... Args>
auto call_then_check(std::atomic<Fn>& next, const char* name, BySyscall by_syscall, Args... args) {
  Fn f = next_definition(next, name);
  const auto r = f ? f(args...) : by_syscall(args...);
  after_call();
  return r;
}
}  // namespace

void defer_to_sleep_exit() { t_preempt_at_sleep_exit = true; }
void set_sleep_exit_hook(sleep_exit_fn f) { g_on_sleep_exit.store(f, std::memory_order_release); }

}  // namespace roost::platform::preempt

namespace preempt = roost::platform::preempt;

// Weak: a program (or another library linked into it) that defines one of these itself keeps its own, and
// the link does not fail on two definitions; its calls then reach the C library without the hook.
#define ROOST_SLEEP_CALL __attribute__((weak))

extern "C" {

ROOST_SLEEP_CALL int nanosleep(const struct timespec* req, struct timespec* rem) {
  static std::atomic<int (*)(const struct timespec*, struct timespec*)> next{nullptr};
  return preempt::call_then_check(next, "nanosleep", [](const struct timespec* q, struct timespec* m) {
    return static_cast<int>(syscall(SYS_nanosleep, q, m));
  }, req, rem);
}

ROOST_SLEEP_CALL int clock_nanosleep(clockid_t clock, int flags, const struct timespec* req, struct timespec* rem) {
  static std::atomic<int (*)(clockid_t, int, const struct timespec*, struct timespec*)> next{nullptr};
  return preempt::call_then_check(next, "clock_nanosleep", [](clockid_t c, int fl, const struct timespec* q,
                                                              struct timespec* m) {
    const int saved = errno;  // returns the error, as the C library's does, instead of setting errno
    const int r = syscall(SYS_clock_nanosleep, c, fl, q, m) == 0 ? 0 : errno;
    errno = saved;
    return r;
  }, clock, flags, req, rem);
}

ROOST_SLEEP_CALL int usleep(useconds_t usec) {
  static std::atomic<int (*)(useconds_t)> next{nullptr};
  return preempt::call_then_check(next, "usleep", [](useconds_t us) {
    const struct timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
    return static_cast<int>(syscall(SYS_nanosleep, &ts, nullptr));
  }, usec);
}

ROOST_SLEEP_CALL unsigned sleep(unsigned seconds) {
  static std::atomic<unsigned (*)(unsigned)> next{nullptr};
  return preempt::call_then_check(next, "sleep", [](unsigned sec) {
    struct timespec ts{static_cast<time_t>(sec), 0}, rem{0, 0};
    return syscall(SYS_nanosleep, &ts, &rem) == 0 ? 0u : static_cast<unsigned>(rem.tv_sec + (rem.tv_nsec > 0));
  }, seconds);
}

ROOST_SLEEP_CALL int sched_yield() noexcept {
  static std::atomic<int (*)()> next{nullptr};
  return preempt::call_then_check(next, "sched_yield", [] { return static_cast<int>(syscall(SYS_sched_yield)); });
}

}  // extern "C"
