// The OS side of preemption (seed 003 ch. 3, digest §4): the timer signal, its handler's installation,
// per-thread timers, and the one question the handler asks about the code it interrupted: is it a system
// library's? The engine's side, what a tick does to the running task, is engine/preemption.cpp.
//
// Linux only: a timer that signals one thread (SIGEV_THREAD_ID) is a Linux extension, as the thesis notes.
#pragma once
#include <atomic>
#include <csignal>
#include <cstdint>
#include <string>
#include <ctime>
#include <vector>

namespace roost::platform::preempt {

// SIGURG, as Go's asynchronous preemption: ignored by default, used by almost no program, and not one of
// the signals a debugger stops at. A program with a handler of its own for it cannot use preemption.
inline constexpr int kSignal = SIGURG;

// What the handler runs, with the interrupted context (a ucontext_t*).
using tick_fn = void (*)(void* ucontext);

// Installs the process's handler for kSignal (SA_RESTART: interrupted system calls restart where the kernel
// allows it) on the first call; later calls only count. Throws roost::config_error when the program has a
// handler of its own for kSignal, naming `setting` (e.g. "ROOST_PREEMPT='klt'") as what asked for the
// handler. uninstall() puts the previous disposition back at the last call.
void install(tick_fn on_tick, const std::string& setting);
void uninstall();
// Throws roost::usage_error, naming `setting`, when kSignal's handler is no longer roost's: the program
// installed its own (or ignores the signal) after the runtime was made, and no task would be preempted
// again (a spin-wait would then hang). One sigaction(2) call: made at every runtime::run while
// preemption is on.
void check_installed(const std::string& setting);

// In a process whose loaded objects are named `loaded` (the dynamic loader's list: "" for the program, then
// its shared objects): "the C library" when it is not among them, else "". A system library linked into the
// program (-static) cannot be told apart from the program's own code, whose ticks are not deferred
// (in_system_library), so a tick could land inside its locks: stdio's and malloc's. The next task of the
// thread then wrote into a half-written stdio buffer (an outside-user campaign: lines cut and mixed under
// signal-yield). install() refuses it with a config_error; a C++ runtime linked in (static_cxx_runtime) is
// told once on stderr.
std::string static_system_libraries(const std::vector<std::string>& loaded);
bool static_cxx_runtime(const std::vector<std::string>& loaded);
// Whether the C++ runtime that libroost's code calls is linked into the program (or into another object not
// named as one), where a shared one is loaded too: found by the thread-local block that holds its exception
// state. install() tells it as it tells static_cxx_runtime.
bool cxx_runtime_in_program();

// After a preempted task resumed, maybe on another kernel thread of its worker (signal-yield, engine/
// preemption.cpp): what the handler's return restores of a thread's own state from `ucontext` is made the
// calling thread's. Its alternate signal stack: rt_sigreturn sets the thread's sigaltstack from the frame,
// so a task the first thread had been interrupted on gave its stack to the thread that resumed it (two
// threads on one stack for their overflow reports, one freed with the first thread; found in review). And,
// where `interrupted_on` (thread_tag() in the handler, before the task was suspended) is another thread,
// its signal mask: the mask the calling thread serves its worker with (note_serving_mask), in place of the
// first thread's. The first thread's mask went with the task: run()'s caller came back from
// run() with a spare's mask, and, blocking more than the mask it had noted, deferred every later tick (a
// review's program: a spinner then hung). Not under TSan, which runs the handler late on a copy of the
// context and then gives the thread the mask it saved on the interrupted one. One sigaltstack(2) call:
// async-signal-safe.
void adopt_thread_state(void* ucontext, const void* interrupted_on);
// Tells the calling thread from the others (the address of a thread-local): async-signal-safe.
const void* thread_tag();

// The interrupted instruction's address, from the handler's `ucontext`; under TSan, for a signal it delivered
// late, the call into TSan's runtime where the thread is then (preempt_signal.cpp, late_delivery_call_site).
std::uintptr_t interrupted_pc(const void* ucontext);
// The interrupted code's floating-point control state, from the handler's `ucontext`, in
// detail::fp_control::capture's form (0 where the context holds none). The handler itself starts with the
// kernel's default state (Linux gives a handler a clean FPU), which a task suspended from it would pass on.
std::uint64_t interrupted_fp_state(const void* ucontext);
// Whether `pc` lies in a system library: the C library and the dynamic loader, the C++ runtime and
// unwinder, and the sanitizer runtimes. Their code keeps state per OS thread and takes locks (malloc's
// arenas, stdio, the unwinder's FDE cache) that another task on the same thread would then find taken by a
// task that cannot run: a tick there is deferred. So is a tick in the shared object that provides malloc,
// free or operator new when that is not the C library (jemalloc, tcmalloc, mimalloc, preloaded or linked
// as shared objects): their arenas' locks are the same hazard (a review). An allocator linked into the
// program itself cannot be told from the program's code: install() says so once on stderr. The ranges are
// read once, at install.
bool in_system_library(std::uintptr_t pc);
// The same, less the C++ runtime's code (libstdc++, libc++).
bool in_system_library_but_cxx_runtime(std::uintptr_t pc);

// Whether the interrupted context blocked a signal that its thread does not block while it serves a worker
// (note_serving_mask): then the tick interrupted a signal handler of the program's (which blocks its own
// signal while it runs) or code that blocked signals itself. The task below the handler may be anywhere, in
// malloc's locks or a deque operation half done, which its address does not show: a tick there is
// deferred (a review: a program's SIGALRM handler, interrupted by a tick, let the next task of the thread
// wait for ever on the malloc lock the task under the handler held). Async-signal-safe.
bool interrupted_with_more_blocked(const void* ucontext);
// Notes the calling thread's signal mask as the one its tasks run with: called as a thread begins to serve
// a worker while preemption is on (one pthread_sigmask(2) call).
void note_serving_mask();

// Whether the mask note_serving_mask noted on the calling thread blocks kSignal (no system call).
bool blocked_while_serving();
// Signal mask of the calling thread.
bool blocked_here();
void unblock_here();
// Blocks kSignal in the calling thread, as the kernel does while its handler runs; unblock_here undoes it.
void block_here();
// Where a preemption switches away from the task it suspends (a tick's handler, a sleeping call's exit):
// gives the thread the mask its other tasks run with, the one it serves its worker with (note_serving_mask).
// The kernel's handler mask is the serving one and kSignal (the handler's sa_mask is empty), and a sleeping
// call's exit blocked kSignal alone (block_here): kSignal is unblocked, and the handler's return (or the
// caller) restores the rest. TSan runs a handler it delivers late with every signal blocked, and the thread
// ran its other tasks so, and after them the program: signals sent to it were never delivered (a test's
// SIGUSR2, `timeout`'s SIGTERM). Under TSan the serving mask is set whole (TSan restores the task's own when
// the handler returns). So under TSan a task that blocked signals itself and is preempted at a sleeping
// call's exit (more_blocked_here cannot tell it there) comes back with the serving mask; giving it back its
// own at its resumption hung 3 runs in 12 of a test of random trees with spinners (not understood).
void unblock_for_other_tasks();
// Whether the calling thread blocks a signal that it does not block while it serves a worker
// (note_serving_mask): it runs a signal handler of the program's, or code that blocked signals itself.
// interrupted_with_more_blocked's question, asked outside a handler. One pthread_sigmask(2) call.
bool more_blocked_here();

// A tick deferred in a system library for a stuck task, ended at a library call's exit (sleep_calls.cpp).
// The handler marks its thread with the worker's progress signature at that tick (defer_to_sleep_exit,
// async-signal-safe: thread-local stores); the thread's next call of nanosleep, clock_nanosleep, usleep,
// sleep or sched_yield made from the program's code (or from the C++ runtime's, whose sleep_for calls
// nanosleep) then calls the hook with that signature after the C library's call returned (the engine's:
// engine/preemption.cpp, on_sleep_exit). nullptr: none.
using sleep_exit_fn = void (*)(std::uint64_t progress_at_mark);
void defer_to_sleep_exit(std::uint64_t progress);
void set_sleep_exit_hook(sleep_exit_fn f);
// Whether the process's definitions of those calls are sleep_calls.cpp's (libroost is in the executable).
bool sleep_calls_bound_here();

// A periodic timer that signals one thread: on CLOCK_MONOTONIC, or on the thread's own CPU-time clock
// (CLOCK_THREAD_CPUTIME_ID), which the kernel checks at its scheduler tick.
struct thread_timer {
  timer_t id{};
  bool valid = false;
  long tid = 0;  // the thread it signals
  bool cpu_time = false;
};
// For the calling thread. Throws std::system_error when the kernel refuses.
thread_timer create_for_this_thread(bool cpu_time = false);
// First expiry at `first_ns` (absolute CLOCK_MONOTONIC time; for a CPU-time timer, after `interval_ns` of
// the thread's CPU time from now, and `first_ns` is not used), then every `interval_ns`.
void arm(const thread_timer& t, std::uint64_t first_ns, std::uint64_t interval_ns);
void disarm(const thread_timer& t);
void destroy(thread_timer& t);
long this_thread_id();

// A timer left ticking after its thread stopped serving worker 0 at the end of a run (engine_base::run_root),
// so that back-to-back runs make no timer system call: arming and disarming it at every run cost heat2d's
// 1024x100 steps, a run each of about 0.45 ms, 4% of their time on a VM (two timer_settime calls and the
// clock-event reprogramming behind each), more than its ticks. What ends it:
//  - resume_lingering, when the thread serves again: true when t still ticks on the phase of `owner` (the
//    preemption_timers of that runtime), which then arms nothing; the thread is no longer lingering anyway;
//  - the thread's next tick, in the handler (one timer_settime, async-signal-safe), which runs no tick hook
//    then: the thread serves no worker;
//  - end_lingering(owner), when that runtime's timers go away, from any thread: the handler may be
//    uninstalled next, and a tick must not reach the program's own disposition of kSignal;
//  - destroy(t) on its thread (the thread's end, or another clock for the next runtime).
// `owner` is never 0. On the calling thread, t being the calling thread's timer, except end_lingering.
void linger(const thread_timer& t, std::uint64_t owner);
bool resume_lingering(const thread_timer& t, std::uint64_t owner);
void end_lingering(std::uint64_t owner);
// For tests: whether the calling thread's timer lingers now, and whether the timer it last left to linger
// is armed, with what interval (timer_gettime).
struct linger_state {
  bool lingering = false;
  bool armed = false;
  std::uint64_t interval_ns = 0;
};
linger_state linger_state_here();
// The calling thread's timer slack (prctl PR_SET_TIMERSLACK) lowered to at most `at_most_ns`; returns the
// slack before, for restore_timer_slack (0: unchanged). A tick interrupts a sleep, and the remaining time
// nanosleep gives back includes the slack, so with a slack near the interval a sleep_for never ended (an
// outside-user campaign and a review: 50 us against the default 50 us slack, or 100 us under a launcher's
// larger one). System calls only: async-signal-safe.
unsigned long lower_timer_slack(std::uint64_t at_most_ns);
void restore_timer_slack(unsigned long before);
// Sends kSignal to thread `tid` of this process (tgkill): async-signal-safe, for a handler that passes its
// tick on (the chained timer, engine/preemption.hpp).
void signal_thread(long tid);

// For the monitor design's thread (engine/preemption.hpp): it blocks every signal, and it sleeps on a word
// until the word is no longer `expected` or, with a deadline (absolute CLOCK_MONOTONIC ns; 0: none), until
// then. wake_word wakes it: a system call, async-signal-safe (a handler that moves a worker to another
// kernel thread calls it).
void block_all_signals_here();
void wait_word(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::uint64_t deadline_ns);
void wake_word(std::atomic<std::uint32_t>& word);

}  // namespace roost::platform::preempt
