// Preemption (ROOST_PREEMPT=signal|klt, include/roost/preempt.hpp): tasks that spin until a later task acts
// complete because a timer tick suspends them, under every scheduler and worker count, by signal-yield and
// by KLT-switching; with preemption off the same program hangs. No test waits for time to pass: a spinner ends when the task it waits for ran,
// which only a preemption makes possible, and the hang is observed from another process with a bound.
#include <gtest/gtest.h>
#include <signal.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <cerrno>
#include <dirent.h>
#include <dlfcn.h>
#include <fstream>
#include <sched.h>
#include <thread>

#include <poll.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/select.h>
#include <time.h>
#include <ucontext.h>
#if defined(__x86_64__)
#include <xmmintrin.h>  // TheStateATickPassesOnIsTheInterruptedCodes
#endif

#include "engine/critical_windows.hpp"
#include "engine/preemption.hpp"
#include "engine/worker.hpp"
#include "platform/fork_hold.hpp"
#include "platform/preempt_signal.hpp"
#include "roost/roost.hpp"
#include "test_util.hpp"

using roost_test::available_schedulers;
using roost_test::opts;
using roost_test::scheduler_test_name;

namespace {

roost::options preempting(const std::string& sched, unsigned workers, const char* interval = "1ms",
                          const char* timer = "aligned", const char* mode = "signal") {
  roost::options o = opts(sched, workers);
  o.preempt = mode;
  o.preempt_interval = interval;
  o.preempt_timer = timer;
  return o;
}

// Spins until `flag` is set: a loop of the program's own, with no call and no scheduling point.
void spin_until(const std::atomic<int>& flag) {
  while (flag.load(std::memory_order_acquire) == 0) {
  }
}

// Spins until `count` reaches `n`, as spin_until.
void spin_until_count(const std::atomic<int>& count, int n) {
  while (count.load(std::memory_order_acquire) < n) {
  }
}

// `spinners` tasks that each spin until the group's last task, spawned after them, sets the flag.
void spinners_then_setter(unsigned spinners) {
  std::atomic<int> flag{0};
  roost::task_group g;
  for (unsigned i = 0; i < spinners; ++i) g.run([&] { spin_until(flag); });
  g.run([&] { flag.store(1, std::memory_order_release); });
  g.wait();
}

class Preempt : public ::testing::TestWithParam<std::string> {};

TEST_P(Preempt, ASpinnerWaitingForALaterSiblingCompletesOnOneWorker) {
  for (const char* mode : {"signal", "klt"}) {
    roost::runtime rt(preempting(GetParam(), 1, "1ms", "aligned", mode));
    for (int i = 0; i < 3; ++i) rt.run([] { spinners_then_setter(1); });
    const char* said = std::string(mode) == "klt" ? "preemption: KLT-switching every 1 ms" : "preemption: signal-yield every 1 ms";
    EXPECT_NE(rt.describe().find(said), std::string::npos) << rt.describe();
  }
}

// A child of a group that escaped its creator (a rule break, docs/user-guide.md "Ownership") that was
// preempted on worker 0 and is still unfinished when the root ends: the worker resumes it before it leaves,
// as it runs what its own queue holds. It stayed in the worker's FIFO, for a later run at best, and was lost
// with the runtime. One worker: the child spins until the root went on after the spawn, which a work-first
// scheduler lets happen only by preempting the child; the others run the root first, and the child then ends
// at once from the worker's queue.
TEST_P(Preempt, AnEscapedChildPreemptedOnWorkerZeroEndsBeforeItsRunReturns) {
  for (const char* mode : {"signal", "klt"}) {
    alignas(roost::task_group) static unsigned char storage[sizeof(roost::task_group)];
    std::atomic<int> root_went_on{0}, ended{0};
    roost::task_group* g = nullptr;
    {
      roost::runtime rt(preempting(GetParam(), 1, "1ms", "aligned", mode));
      rt.run([&] {
        g = new (storage) roost::task_group();
        g->run([&] {
          spin_until(root_went_on);
          ended.fetch_add(1, std::memory_order_release);
        });
        root_went_on.store(1, std::memory_order_release);
      });
      EXPECT_EQ(ended.load(std::memory_order_acquire), 1) << mode;
      // Its child ended: destroyed outside run(), the group returns. (With the child unended it would end the
      // process; left undestroyed, the lost child's fiber goes with the runtime.)
      if (ended.load(std::memory_order_acquire) == 1) g->~task_group();
    }
    EXPECT_EQ(ended.load(std::memory_order_acquire), 1) << mode;
  }
}

// The tasks a thread runs while a task it preempted waits are given the mask the thread serves its worker
// with, and the caller's thread has its own back after run(): signals sent to it are delivered. Under TSan,
// whose late-delivered handlers run with every signal blocked, the thread ran them with that mask (only the
// tick's own signal unblocked), and a test's SIGUSR2 and `timeout`'s SIGTERM stayed pending for good once a
// preempted task was resumed elsewhere (preempt_signal.hpp, unblock_for_other_tasks). One worker: the setter
// runs only once a tick suspended the spinner, on the thread that serves that worker then (the caller's
// under signal-yield, a spare's under KLT-switching, which serves with the same mask).
TEST(PreemptThread, TasksRunWhileAnotherIsPreemptedHaveTheThreadsSignalMask) {
  sigset_t before;
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, nullptr, &before), 0);
  for (const char* mode : {"signal", "klt"}) {
    roost::runtime rt(preempting("ws", 1, "200us", "aligned", mode));
    for (int round = 0; round < 3; ++round) {
      sigset_t in_setter;
      sigemptyset(&in_setter);
      rt.run([&] {
        std::atomic<int> flag{0};
        roost::task_group g;
        g.run([&] { spin_until(flag); });
        g.run([&] {
          pthread_sigmask(SIG_BLOCK, nullptr, &in_setter);
          flag.store(1, std::memory_order_release);
        });
        g.wait();
      });
      sigset_t after_run;
      pthread_sigmask(SIG_BLOCK, nullptr, &after_run);
      for (int sig = 1; sig < 65; ++sig) {
        EXPECT_EQ(sigismember(&in_setter, sig), sigismember(&before, sig)) << mode << ", signal " << sig;
        EXPECT_EQ(sigismember(&after_run, sig), sigismember(&before, sig)) << mode << ", after run, signal " << sig;
      }
    }
    EXPECT_GE(rt.preemptions(), 3u) << mode;
  }
}

// A child of fork() makes a runtime of its own: its tasks are preempted as the parent's were. The calling
// thread kept its timer from the parent in a thread-local record (timers are not inherited), reused it, and
// the child's spinner hung (an outside-user campaign). alarm() only bounds that hang: the test's answer
// is the child's exit status, not a time.
TEST(PreemptFork, AChildOfForkHasTicksOfItsOwn) {
  for (const char* mode : {"signal", "klt"}) {
    {
      roost::runtime rt(preempting("ws", 1, "1ms", "aligned", mode));
      rt.run([] { spinners_then_setter(1); });  // this thread's timer is made in the parent
    }
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::alarm(60);
      roost::runtime rt(preempting("ws", 1, "1ms", "aligned", mode));
      rt.run([] { spinners_then_setter(1); });
      ::_exit(rt.preemptions() > 0 ? 0 : 3);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << mode << ": the child " << (WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                                          : "exited with " + std::to_string(WEXITSTATUS(status)));
  }
}

// A child of fork() forgets its thread's mark of a tick deferred in a system library: the child's next wrapped
// call preempted the forking task there, and the task's siblings ran in the child (under signal-yield), or the
// child waited for ever for a spare thread it does not have (KLT-switching): a task that forked after a tick was
// deferred in the C library, then read a pipe before exec (an outside-user campaign). Here the mark is made by
// hand, where a tick would leave it, and the child's wrapped call is usleep; a 10 s interval keeps real
// ticks out.
TEST(PreemptFork, AChildOfForkForgetsItsThreadsDeferredTick) {
  for (const char* mode : {"signal", "klt"}) {
    roost::runtime rt(preempting("ws-help", 1, "10s", "aligned", mode));
    int status = -1;
    rt.run([&] {
      std::atomic<int> sibling_ran{0};
      roost::task_group g;
      g.run([&] { sibling_ran.store(1, std::memory_order_release); });  // queued: ws-help
      auto* w = static_cast<roost::engine::worker*>(roost::detail::t_running_fiber->worker);
      roost::platform::preempt::defer_to_sleep_exit(roost::engine::progress_signature(*w));
      const pid_t child = ::fork();
      if (child == 0) {
        ::alarm(60);  // a child that waits for a spare thread for ever ends, and says so to the parent
        ::usleep(1);
        ::_exit(sibling_ran.load(std::memory_order_acquire) ? 3 : 0);
      }
      if (child > 0) ::waitpid(child, &status, 0);
      g.wait();
    });
    const std::string how = WIFSIGNALED(status)        ? "was killed by signal " + std::to_string(WTERMSIG(status))
                            : WEXITSTATUS(status) == 3 ? "ran the parent's sibling task"
                                                       : "exited with " + std::to_string(WEXITSTATUS(status));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << mode << ": the child " << how;
  }
}

// The locks roost holds across fork() turn the forking task's preemption off from each prepare handler to its
// release (platform/fork_hold.hpp): preempted while it held one, the task left it held for the next task of
// its thread, which waited for ever (every fork of a task under preemption hung its process under TSan, whose
// late delivery lands a tick right after each intercepted lock: an outside-user campaign). A handler of the
// test registered before one such lock's sees the task's count raised by that lock's prepare handler, and
// lowered back once the fork returned.
namespace {
std::atomic<bool> g_watch_fork{false};
std::atomic<std::int32_t> g_count_inside_fork{-1};
std::mutex g_test_fork_lock;
void look_at_count_in_fork() {
  if (!g_watch_fork.load(std::memory_order_relaxed)) return;
  if (auto* f = roost::detail::t_running_fiber)
    g_count_inside_fork.store(f->preempt_off.load(std::memory_order_relaxed), std::memory_order_relaxed);
}
}  // namespace
TEST(PreemptFork, ATaskHoldingRoostsForkLocksIsNotPreempted) {
  static const bool registered = [] {
    ::pthread_atfork(&look_at_count_in_fork, nullptr, nullptr);  // after the lock's prepare, which runs first
    roost::platform::hold_across_forks<g_test_fork_lock>();
    return true;
  }();
  ASSERT_TRUE(registered);
  roost::runtime rt(preempting("ws", 1, "10s"));
  std::int32_t before = -1, after = -1;
  int status = -1;
  rt.run([&] {
    auto* f = roost::detail::t_running_fiber;
    before = f->preempt_off.load(std::memory_order_relaxed);
    g_watch_fork.store(true, std::memory_order_relaxed);
    const pid_t child = ::fork();
    if (child == 0) ::_exit(f->preempt_off.load(std::memory_order_relaxed) == before ? 0 : 3);
    g_watch_fork.store(false, std::memory_order_relaxed);
    after = f->preempt_off.load(std::memory_order_relaxed);
    if (child > 0) ::waitpid(child, &status, 0);
  });
  EXPECT_EQ(g_count_inside_fork.load(), before + 1) << "the lock's prepare handler left preemption on";
  EXPECT_EQ(after, before);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's count is not back where it was";
}

// The same end to end: tasks of two workers fork under preemption at a 100 us interval, each child calls only
// _exit. Under TSan it hung 5 of 5 runs without the above (an outside-user campaign); a watchdog ends a hang.
TEST(PreemptFork, TasksThatForkUnderPreemptionFinish) {
  for (const char* mode : {"signal", "klt"}) {
    roost::runtime rt(preempting("ws", 2, "100us", "aligned", mode));
    std::atomic<int> exited_7{0};
    ::alarm(120);
    rt.run([&] {
      roost::parallel_for(0, 16, 1, [&](int) {
        const pid_t child = ::fork();
        if (child == 0) ::_exit(7);
        int status = 0;
        if (child > 0 && ::waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 7)
          exited_7.fetch_add(1, std::memory_order_relaxed);
      });
    });
    ::alarm(0);
    EXPECT_EQ(exited_7.load(), 16) << mode;
  }
}

// Worker 0's timer is left armed at the end of a run that followed the thread's previous one within an
// interval (platform::preempt::linger): back-to-back runs then make no timer system call. The run's last
// task blocks the signal, so that no tick can end the lingering before the test looks; the tick that then
// comes, delivered when the test unblocks it, disarms the timer; the next run arms it again and preempts.
void block_tick_signal(bool block) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, roost::platform::preempt::kSignal);
  pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &s, nullptr);
}
bool tick_signal_pending() {
  sigset_t s;
  sigpending(&s);
  return sigismember(&s, roost::platform::preempt::kSignal) == 1;
}
// Runs `rt` twice in a row, the second run's last task blocking the signal, until the second run began
// within an interval of the first's end (a busy machine may take the thread away between them): then its
// timer lingers. Returns the state it left, with the signal still blocked.
roost::platform::preempt::linger_state back_to_back_runs(roost::runtime& rt) {
  roost::platform::preempt::linger_state st;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    rt.run([] {});
    rt.run([] { block_tick_signal(true); });  // the root runs on this thread (worker 0's)
    st = roost::platform::preempt::linger_state_here();
    if (st.lingering) break;
    block_tick_signal(false);
  }
  return st;
}
// Spins until a tick is pending (a CPU-time timer ticks only while the thread uses CPU); false after 20 s.
bool wait_for_pending_tick() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!tick_signal_pending())
    if (std::chrono::steady_clock::now() > until) return false;
  return true;
}

TEST(PreemptLinger, ATickBetweenRunsDisarmsTheTimerThenTheNextRunArmsIt) {
  for (const char* timer : {"aligned", "chained", "cputime"})
    for (const char* mode : {"signal", "klt"}) {
      SCOPED_TRACE(std::string(timer) + ", " + mode);
      roost::runtime rt(preempting("ws", 1, "1ms", timer, mode));
      auto st = back_to_back_runs(rt);
      EXPECT_TRUE(st.lingering);
      EXPECT_TRUE(st.armed);
      EXPECT_EQ(st.interval_ns, 1'000'000u);
      const bool ticked = wait_for_pending_tick();
      block_tick_signal(false);  // the handler runs here, before pthread_sigmask returns
      ASSERT_TRUE(ticked) << "no tick in 20 s from a timer left armed";
      st = roost::platform::preempt::linger_state_here();
      EXPECT_FALSE(st.lingering);
      EXPECT_FALSE(st.armed);
      const auto preempted = rt.preemptions();
      rt.run([] {
        const auto in_run = roost::platform::preempt::linger_state_here();
        EXPECT_FALSE(in_run.lingering);
        EXPECT_TRUE(in_run.armed);
        spinners_then_setter(1);
      });
      EXPECT_GT(rt.preemptions(), preempted);
    }
}

// A lingering timer that a tick ended before the next run was a bet lost: that run leaves its timer
// disarmed, though it began within an interval of the last one's end. It lingered again: a sleep between
// runs, cut short by the tick, returned at once, the next run counted as back to back and lingered, and every
// later sleep was cut short (a loop of run(); nanosleep(50 ms) after one back-to-back pair got EINTR 10
// times in 10: an outside-user campaign). At 100 ms the tick comes within an interval of the run's end, and
// the next run begins at once after it: back to back by its start.
TEST(PreemptLinger, ARunAfterTheLingeringTimerTickedLeavesItDisarmed) {
  for (const char* timer : {"aligned", "naive", "chained"})
    for (const char* mode : {"signal", "klt"}) {
      SCOPED_TRACE(std::string(timer) + ", " + mode);
      roost::runtime rt(preempting("ws", 1, "100ms", timer, mode));
      auto st = back_to_back_runs(rt);
      ASSERT_TRUE(st.lingering);
      const bool ticked = wait_for_pending_tick();
      block_tick_signal(false);  // the tick ends the lingering here
      ASSERT_TRUE(ticked) << "no tick in 20 s from a timer left armed";
      rt.run([] {});
      st = roost::platform::preempt::linger_state_here();
      EXPECT_FALSE(st.lingering);
      EXPECT_FALSE(st.armed);
      // Back to back again after that: the bet is made again.
      st = back_to_back_runs(rt);
      EXPECT_TRUE(st.lingering);
      block_tick_signal(false);
    }
}

// A loop that sleeps between runs for half an interval or more never leaves its timer lingering: the next
// tick would come within twice the last gap (the timer ticks every interval), so it would cut the sleep short.
// It lingered whenever the run began within an interval of the last one's end, and half the sleeps of a loop
// of run(); nanosleep(500 us) at 1 ms returned EINTR (an outside-user campaign). Not a matter of timing: a
// sleep lasts at least what it asks, and a longer one (a loaded machine) is no longer back to back at all.
TEST(PreemptLinger, ALoopSleepingHalfAnIntervalBetweenRunsIsNeverCutShort) {
  for (const char* timer : {"aligned", "naive", "chained"})
    for (const char* mode : {"signal", "klt"}) {
      SCOPED_TRACE(std::string(timer) + ", " + mode);
      roost::runtime rt(preempting("ws", 1, "1ms", timer, mode));
      int cut_short = 0;
      for (int i = 0; i < 20; ++i) {
        rt.run([] {});
        EXPECT_FALSE(roost::platform::preempt::linger_state_here().lingering) << "run " << i;
        const timespec half{0, 600'000};
        if (::nanosleep(&half, nullptr) != 0 && errno == EINTR) ++cut_short;
      }
      EXPECT_EQ(cut_short, 0);
    }
}

// A run after a pause leaves nothing ticking: a program that runs once and then blocks gets no tick.
TEST(PreemptLinger, ARunAfterAPauseDisarmsItsTimer) {
  roost::runtime rt(preempting("ws", 1, "1ms"));
  rt.run([] {});
  // A pause of at least an interval (1 ms): sleep_for sleeps at least this long, and a loaded machine only
  // makes the pause longer, which the test's condition (not back to back) still holds for.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  rt.run([] {});
  const auto st = roost::platform::preempt::linger_state_here();
  EXPECT_FALSE(st.lingering);
  EXPECT_FALSE(st.armed);
}

// A runtime that goes away disarms the timer it left lingering on another thread, which is still alive:
// the handler may be uninstalled next, and no tick may reach the program's disposition of the signal.
TEST(PreemptLinger, DestroyingTheRuntimeDisarmsATimerLingeringOnAnotherThread) {
  std::optional<roost::runtime> rt;
  rt.emplace(preempting("ws", 1, "1ms"));
  std::atomic<int> step{0};
  roost::platform::preempt::linger_state before, after;
  std::thread t([&] {
    before = back_to_back_runs(*rt);
    step.store(1, std::memory_order_release);
    spin_until_count(step, 2);
    after = roost::platform::preempt::linger_state_here();
    block_tick_signal(false);  // a pending tick, if any, goes to the default disposition: ignored
  });
  spin_until_count(step, 1);
  rt.reset();
  step.store(2, std::memory_order_release);
  t.join();
  EXPECT_TRUE(before.lingering);
  EXPECT_TRUE(before.armed);
  EXPECT_FALSE(after.lingering);
  EXPECT_FALSE(after.armed);
}

// A timer left lingering by one runtime is not taken as armed by another on the same thread: that one ticks
// on its own interval and phase.
TEST(PreemptLinger, ASecondRuntimeOnTheThreadArmsItsOwnInterval) {
  roost::runtime a(preempting("ws", 1, "1ms"));
  roost::runtime b(preempting("ws", 1, "2ms"));
  back_to_back_runs(a);  // from here the thread's timer is the one linger_state_here reads
  block_tick_signal(false);
  for (int i = 0; i < 3; ++i) {
    a.run([] { EXPECT_EQ(roost::platform::preempt::linger_state_here().interval_ns, 1'000'000u); });
    b.run([] { EXPECT_EQ(roost::platform::preempt::linger_state_here().interval_ns, 2'000'000u); });
  }
  const auto before = b.preemptions();
  b.run([] { spinners_then_setter(1); });
  EXPECT_GT(b.preemptions(), before);
}

// A child of fork() made while the parent's timer lingers starts with nothing lingering: its own runtime arms
// a timer of its own and preempts.
TEST(PreemptLinger, AForkedChildOfALingeringThreadArmsItsOwnTimer) {
#ifdef ROOST_TSAN
  GTEST_SKIP() << "TSan refuses threads in the child of a multi-threaded fork (the parent's runtime lives)";
#endif
  roost::runtime rt(preempting("ws", 1, "1ms"));
  const auto st = back_to_back_runs(rt);
  // Whatever fails below, this thread gets the signal back: later tests preempt worker 0 on it.
  struct unblock_at_exit {
    ~unblock_at_exit() { block_tick_signal(false); }
  } unblock;
  ASSERT_TRUE(st.lingering);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(60);
    block_tick_signal(false);
    const bool clean = !roost::platform::preempt::linger_state_here().lingering;
    roost::runtime mine(preempting("ws", 1, "1ms"));
    mine.run([] { spinners_then_setter(1); });
    ::_exit(clean && mine.preemptions() > 0 ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// A task that waits for a later task by sleeping or yielding in a loop is inside the C library at nearly
// every tick, where ticks are deferred; the call's return preempts it (platform/sleep_calls.cpp). Before,
// such a task waited seconds to minutes under the per-worker timers and for ever under the monitor (an
// outside-user campaign). Each way of polling, in both spawn orders (the polling child spawned before the
// setter, which a work-first child runs at once; the polling parent after spawning the setter, which a
// help-first spawn leaves in the deque), with a timer that ticks only a stuck worker (monitor) and one that
// ticks every worker (aligned). Without the hook the monitor's runs hang: ctest's timeout reports it.
void poll_until(const std::atomic<int>& flag, int how) {
  while (flag.load(std::memory_order_acquire) == 0) {
    switch (how) {
      case 0: std::this_thread::sleep_for(std::chrono::microseconds(50)); break;
      case 1: usleep(50); break;
      case 2: {
        const timespec ts{0, 50000};
        clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
        break;
      }
      // The sleeps of poll, select and an event loop's epoll_wait: before they were wrapped, such a loop hung
      // on one worker under every timer (an outside-user campaign).
      case 3: ::poll(nullptr, 0, 1); break;
      case 4: {
        timeval tv{0, 100};
        ::select(0, nullptr, nullptr, nullptr, &tv);
        break;
      }
      case 5: {
        static const int ep = ::epoll_create1(EPOLL_CLOEXEC);  // no fd in it: each call waits out its 1 ms
        epoll_event e{};
        ::epoll_wait(ep, &e, 1, 1);
        break;
      }
      // Their forms with a signal mask, which were not wrapped (the same loop hung on one worker).
      case 6: {
        const timespec ts{0, 100000};
        ::ppoll(nullptr, 0, &ts, nullptr);
        break;
      }
      case 7: {
        const timespec ts{0, 100000};
        ::pselect(0, nullptr, nullptr, nullptr, &ts, nullptr);
        break;
      }
      case 8: {
        static const int ep = ::epoll_create1(EPOLL_CLOEXEC);
        epoll_event e{};
        sigset_t none;
        sigemptyset(&none);
        ::epoll_pwait(ep, &e, 1, 1, &none);
        break;
      }
      // Reads that find nothing yet: a non-blocking pipe's and a socket's (MSG_DONTWAIT). Such a loop was in
      // the kernel or the C library at every tick and kept its worker until those calls were wrapped.
      case 9: {
        static const int empty_pipe = [] {
          int fds[2];
          if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) std::abort();
          return fds[0];  // its write end stays open: each read says EAGAIN
        }();
        char c;
        if (::read(empty_pipe, &c, 1) != -1 || errno != EAGAIN) std::abort();
        break;
      }
      case 10: {
        static const int quiet_socket = [] {
          int fds[2];
          if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) std::abort();
          return fds[0];
        }();
        char c;
        if (::recv(quiet_socket, &c, 1, MSG_DONTWAIT) != -1 || errno != EAGAIN) std::abort();
        break;
      }
      default: std::this_thread::yield(); break;
    }
  }
}
constexpr int kPollingWays = 12;

TEST_P(Preempt, ATaskPollingWithSleepsOrYieldsForALaterTaskCompletesOnOneWorker) {
  for (const char* mode : {"signal", "klt"})
    for (const char* timer : {"monitor", "aligned"}) {
      roost::runtime rt(preempting(GetParam(), 1, "1ms", timer, mode));
      rt.run([] {});  // cats profiles a runtime's first run, which runs its tasks in another order
      const unsigned long long before = rt.preemptions();
      for (int how = 0; how < kPollingWays; ++how) {
        rt.run([how] {
          std::atomic<int> flag{0};
          roost::task_group g;
          g.run([&] { poll_until(flag, how); });
          g.run([&] { flag.store(1, std::memory_order_release); });
          g.wait();
        });
        rt.run([how] {
          std::atomic<int> flag{0};
          roost::task_group g;
          g.run([&] { flag.store(1, std::memory_order_release); });
          poll_until(flag, how);
          g.wait();
        });
      }
      // One order of the two waits for a preemption, under any policy: the child runs first, or the parent.
      EXPECT_GE(rt.preemptions() - before, static_cast<unsigned>(kPollingWays)) << mode << " " << timer;
    }
}

// A thread's mark outlives the run that left it, so a wrapped call on any thread may read the table of system
// libraries' code (preempt_signal.cpp) while another thread makes a runtime whose handler is the process's
// first, which reads the loaded libraries again. The table used to be rewritten from its start there: TSan
// saw the rewrite race with a wrapped read() of hwloc on a thread making another runtime (an outside-user
// campaign of runtimes on several threads). Meaningful under TSan, which `make test` runs: each new handler
// here is a first install, and the other thread's marked calls read the table all the while.
TEST(PreemptThread, MarkedCallsOnAnotherThreadReadTheLibraryTableWhileHandlersAreInstalled) {
  std::atomic<bool> stop{false};
  std::atomic<long> calls{0};
  std::thread other([&] {
    while (!stop.load(std::memory_order_acquire)) {
      // No task runs on this thread: the hook finds no worker and preempts nothing, after reading the table.
      roost::platform::preempt::defer_to_sleep_exit(0);
      EXPECT_EQ(sched_yield(), 0);
      calls.fetch_add(1, std::memory_order_relaxed);
    }
  });
  while (calls.load(std::memory_order_relaxed) == 0) std::this_thread::yield();  // the reads have begun
  for (int i = 0; i < 50; ++i) {
    roost::runtime rt(preempting("ws", 1, "1ms", "aligned", i % 2 ? "klt" : "signal"));
    EXPECT_EQ(rt.run([] { return 7; }), 7);
  }
  stop.store(true, std::memory_order_release);
  other.join();
  EXPECT_GT(calls.load(), 0);
}

// The hook itself, without waiting for a tick: a thread marked as a tick deferred in a system library marks
// it, whose task's progress has not moved since, is preempted when its next sleeping call returns, and the
// call's errno is the task's on the thread it resumes on. A mark whose progress moved on preempts nothing.
TEST(PreemptThread, AMarkedSleepCallPreemptsItsTaskAndKeepsTheCallsErrno) {
  for (const char* mode : {"signal", "klt"}) {
    roost::runtime rt(preempting("ws", 1, "100ms", "monitor", mode));
    int r = 0, err = 0, r_stale = 0;
    rt.run([&] {
      auto* w = static_cast<roost::engine::worker*>(roost::detail::t_running_fiber->worker);
      const timespec bad{0, -1};
      roost::platform::preempt::defer_to_sleep_exit(roost::engine::progress_signature(*w) + 1);  // moved on
      r_stale = sched_yield();
      // KLT-switching needs a spare thread, which the creator thread makes after start: until then the
      // preemption is deferred (as a tick's would be, to the next one), so mark again until it happens.
      const std::uint64_t done_before = w->preemptions.load(std::memory_order_relaxed);
      do {
        roost::platform::preempt::defer_to_sleep_exit(roost::engine::progress_signature(*w));
        errno = 0;
        r = nanosleep(&bad, nullptr);
        err = errno;
      } while (w->preemptions.load(std::memory_order_relaxed) == done_before && r == -1 && err == EINVAL);
    });
    EXPECT_EQ(r_stale, 0);
    EXPECT_EQ(r, -1);
    EXPECT_EQ(err, EINVAL) << mode;
    EXPECT_GE(rt.preemptions(), 1u) << mode;
  }
}

// The same for the reads a polling loop makes (read, recv, recvfrom, recvmsg on a descriptor that has
// nothing yet): a marked call is where its task is preempted, and the call's EAGAIN stays its errno. Before
// they were wrapped, a loop of them on one worker waited for a tick to land in its own code: 163-250 ms a
// run on average, up to 2.6 s (a 1 ms interval, "Intel(R) Xeon(R) Processor" VM), against 2-3 ms now.
TEST(PreemptThread, AMarkedReadThatFindsNothingPreemptsItsTaskAndKeepsEagain) {
  int pipe_fds[2], sock_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC), 0);
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock_fds), 0);
  for (const char* mode : {"signal", "klt"})
    for (int call = 0; call < 4; ++call) {
      roost::runtime rt(preempting("ws", 1, "100ms", "monitor", mode));
      long r = 0;
      int err = 0, tries = 0;
      rt.run([&] {
        auto* w = static_cast<roost::engine::worker*>(roost::detail::t_running_fiber->worker);
        const std::uint64_t done_before = w->preemptions.load(std::memory_order_relaxed);
        do {  // KLT-switching's first spare comes after start: marked again until the preemption happens
          ++tries;
          roost::platform::preempt::defer_to_sleep_exit(roost::engine::progress_signature(*w));
          char c;
          sockaddr_storage from{};
          socklen_t from_len = sizeof from;
          iovec v{&c, 1};
          msghdr m{};
          m.msg_iov = &v;
          m.msg_iovlen = 1;
          errno = 0;
          switch (call) {
            case 0: r = ::read(pipe_fds[0], &c, 1); break;
            case 1: r = ::recv(sock_fds[0], &c, 1, MSG_DONTWAIT); break;
            case 2: r = ::recvfrom(sock_fds[0], &c, 1, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &from_len); break;
            default: r = ::recvmsg(sock_fds[0], &m, MSG_DONTWAIT); break;
          }
          err = errno;
        } while (w->preemptions.load(std::memory_order_relaxed) == done_before && r == -1 && err == EAGAIN);
      });
      EXPECT_EQ(r, -1) << mode << " call " << call;
      EXPECT_EQ(err, EAGAIN) << mode << " call " << call;
      EXPECT_GE(rt.preemptions(), 1u) << mode << " call " << call;
      // Signal-yield preempts at the first marked call; a tick of the 100 ms monitor landing in this loop's
      // own code instead would take many calls.
      if (std::string(mode) == "signal") EXPECT_EQ(tries, 1) << "call " << call;
    }
  for (int fd : {pipe_fds[0], pipe_fds[1], sock_fds[0], sock_fds[1]}) ::close(fd);
}

// With each timer design: in the chained one, a tick reaches a worker other than 0 only through the chain;
// under the monitor, a worker is ticked only by the monitor thread.
TEST_P(Preempt, AsManySpinnersAsWorkersComplete) {
  for (const char* timer : {"aligned", "naive", "chained", "cputime", "monitor"})
    for (unsigned workers : {2u, 3u, 8u}) {
      // Under TSan a sleeping chain head passes no tick on (RandomTreesWithSpinners... says why), and
      // whether worker 0 sleeps here depends on the policy's placement.
      if (std::string(timer) == "chained" && roost_test::under_tsan()) continue;
      roost::runtime rt(preempting(GetParam(), workers, "1ms", timer));
      rt.run([&] { spinners_then_setter(workers); });
    }
  // KLT-switching: every spinner's thread sleeps with it, and spares serve the workers.
  for (const char* timer : {"aligned", "chained", "monitor"})
    for (unsigned workers : {2u, 3u, 8u}) {
      if (std::string(timer) == "chained" && roost_test::under_tsan()) continue;
      roost::runtime rt(preempting(GetParam(), workers, "1ms", timer, "klt"));
      rt.run([&] { spinners_then_setter(workers); });
    }
}

// Siblings that wait for each other (a busy barrier among the children of one group), more of them than the
// topology has sockets: every one must start. cab ran one subtree a socket at a time, and the preempted
// spinners kept their sockets' subtrees "running": 3 such siblings on 2 sockets hung (an outside-user
// campaign). Each sibling also spawns a child that spins at the barrier, so that a spinner runs on a core
// that is not its socket's head (the child, or the sibling's continuation stolen inside the socket). Three
// runs a runtime: cats profiles its first and runs the others bi-tier, as cab does.
TEST_P(Preempt, SiblingsAtABusyBarrierCompleteOnSeveralSockets) {
  struct shape {
    const char* topology;
    unsigned workers, siblings;
  };
  for (const shape& s : {shape{"pack:2 core:1 pu:1", 2, 3}, shape{"pack:2 core:2 pu:1", 4, 3}})
    for (const char* mode : {"signal", "klt"}) {
      roost::options o = preempting(GetParam(), s.workers, "1ms", "aligned", mode);
      o.topology = s.topology;
      roost::runtime rt(o);
      for (int run = 0; run < 3; ++run)
        rt.run([&] {
          const unsigned spinners = 2 * s.siblings;
          std::atomic<unsigned> arrived{0};
          auto arrive_and_spin = [&] {
            arrived.fetch_add(1, std::memory_order_acq_rel);
            while (arrived.load(std::memory_order_acquire) < spinners) {
            }
          };
          roost::task_group g;
          for (unsigned i = 0; i < s.siblings; ++i)
            g.run([&] {
              roost::task_group inner;
              inner.run(arrive_and_spin);
              arrive_and_spin();
              inner.wait();
            });
          g.wait();
          EXPECT_EQ(arrived.load(), spinners);
        });
    }
}

// A two-way join whose half that runs first spins until the other half ran: under work-first policies the
// first closure runs first, under help-first the second; both orders, so every policy spins in one. The
// inline joins (critical windows while preemption is on, abi.hpp) and the engine's are both reached this way.
TEST_P(Preempt, ATwoWayJoinWhoseRunningHalfSpinsCompletes) {
  for (const auto& [workers, mode] : {std::pair{1u, "signal"}, std::pair{2u, "signal"}, std::pair{1u, "klt"}, std::pair{2u, "klt"}}) {
    roost::runtime rt(preempting(GetParam(), workers, "200us", "aligned", mode));
    rt.run([] {
      for (int order = 0; order < 2; ++order) {
        std::atomic<int> flag{0};
        auto spin = [&] { spin_until(flag); };
        auto set = [&] { flag.store(1, std::memory_order_release); };
        if (order == 0) roost::parallel_invoke(spin, set);
        else roost::parallel_invoke(set, spin);
      }
    });
  }
}

// Random trees at a 100 us interval: every node adds its value; some children spin until a later sibling
// of theirs has run, others throw and are caught by their parent. The sum is exact and every task ran once.
struct tree_run {
  std::atomic<std::uint64_t> tasks{0};
  std::uint64_t expected_tasks = 0;
};

std::uint64_t node(tree_run& tr, std::uint64_t seed, int depth) {
  tr.tasks.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t value = seed % 1000;
  if (depth == 0) {
    volatile std::uint64_t x = seed;  // a little work of the task's own, where ticks land
    for (int i = 0; i < 2000; ++i) x = x * 6364136223846793005ull + 1;
    return value;
  }
  const unsigned fan = 2 + seed % 3;
  std::uint64_t part[4] = {};
  std::atomic<int> later_ran{0};
  roost::task_group g;
  for (unsigned c = 0; c < fan; ++c) {
    const std::uint64_t s = seed * 31 + c + 1;
    if (c == 0 && s % 4 == 0) {
      g.run([&] { spin_until(later_ran); });  // needs a preemption on one worker
    } else {
      g.run([&, c, s] {
        part[c] = node(tr, s, depth - 1);
        if (c == fan - 1) later_ran.store(1, std::memory_order_release);
      });
    }
  }
  g.wait();
  for (unsigned c = 0; c < fan; ++c) value += part[c];
  return value;
}

// The serial answer, and the task count.
std::uint64_t node_serial(std::uint64_t seed, int depth, std::uint64_t& tasks) {
  ++tasks;
  std::uint64_t value = seed % 1000;
  if (depth == 0) return value;
  const unsigned fan = 2 + seed % 3;
  for (unsigned c = 0; c < fan; ++c) {
    const std::uint64_t s = seed * 31 + c + 1;
    if (!(c == 0 && s % 4 == 0)) value += node_serial(s, depth - 1, tasks);
  }
  return value;
}

TEST_P(Preempt, RandomTreesWithSpinnersAreExactAtA100usInterval) {
  const int depth = roost_test::under_sanitizer() ? 3 : 5;
  // The chained timer's head is worker 0, whose handler passes every tick on, asleep or not: the kernel runs
  // a handler on a thread waiting in futex() and restarts the wait. Under TSan it does not: TSan defers a
  // signal that arrives outside its interceptors (the futex is a raw system call) until the thread runs
  // instrumented code again, so a sleeping head passes nothing on and a spinner elsewhere is never ticked.
  // Where the head is awake, the chain is tested under TSan too (AChainedTickReaches..., AsManySpinners...).
  const bool chain_with_sleeping_head = !roost_test::under_tsan();
  struct setting {
    unsigned workers;
    const char* timer;
    const char* mode;
  };
  const setting settings[] = {{1, "aligned", "signal"}, {2, "aligned", "signal"}, {3, "aligned", "signal"},
                              {3, "chained", "signal"}, {2, "cputime", "signal"}, {1, "aligned", "klt"},
                              {3, "aligned", "klt"},    {3, "chained", "klt"},    {3, "monitor", "signal"},
                              {3, "monitor", "klt"}};
  for (const auto& [workers, timer, mode] : settings) {
    if (std::string(timer) == "chained" && !chain_with_sleeping_head) continue;
    roost::runtime rt(preempting(GetParam(), workers, "100us", timer, mode));
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      std::uint64_t tasks = 0;
      const std::uint64_t want = node_serial(seed, depth, tasks);
      tree_run tr;
      std::uint64_t got = 0;
      rt.run([&] { got = node(tr, seed, depth); });
      EXPECT_EQ(got, want) << "seed " << seed << ", " << workers << " workers, " << timer << ", " << mode;
      EXPECT_EQ(tr.tasks.load(), tasks) << "seed " << seed << ", " << workers << " workers, " << timer << ", " << mode;
    }
  }
}

// The runtime's calls that take a process-wide lock are its own code, where a tick is deferred: tasks that
// call them in long loops (no scheduling point: every tick finds them stuck) complete. An outside-user
// campaign's tasks, making numa_allocators (the default distribution's lock) or setting the observer or
// the touch consumer at a 100 us interval, hung: a task preempted holding the lock, and the next task of
// its worker's OS thread blocked on it. A stress run (what it finds depends on where ticks land); with the
// calls deferred it completes whatever the timing.
TEST_P(Preempt, TasksLoopingOnTheRuntimesLockingCallsComplete) {
  // Each task loops until its runtime has seen 30 ticks since it began (deferred or preempting), so that
  // ticks land in the calls on a fast machine and a slow one alike; a bound in calls ends it where no tick
  // comes (TSan holds back a signal that arrives outside its interceptors).
  const int bound = roost_test::under_sanitizer() ? 20000 : 2000000;
  for (const char* mode : {"signal", "klt"}) {
    roost::runtime rt(preempting(GetParam(), 2, "100us", "aligned", mode));
    auto ticks = [&] { return rt.preempt_ticks_deferred() + rt.preemptions(); };
    std::atomic<long> done{0};
    rt.run([&] {
      roost::task_group g;
      for (int t = 0; t < 6; ++t)
        g.run([&, t] {
          const unsigned long long from = ticks();
          for (int i = 0; i < bound && ticks() < from + 30; ++i) {
            roost::numa_allocator<double> a;  // reads the default distribution, under its lock
            if (a.dist() != roost::default_distribution()) return;
            if (i % 256 == 0) {
              roost::set_touch_consumer(nullptr);
              roost::set_task_observer(nullptr);
            }
            if (t == 0 && i % 4096 == 0) {
              roost::runtime inner(opts("ws", 1));  // the started engines' lock, the listeners'
              if (inner.describe().empty()) return;
            }
          }
          done.fetch_add(1);
        });
      g.wait();
    });
    EXPECT_EQ(done.load(), 6) << mode;
  }
}

// At the shortest interval a task's sleeps still end: each tick interrupts nanosleep, whose remaining time
// includes the thread's timer slack (50 us by default), so at 50 us a sleep_for of any length gained nothing
// per tick and never returned (an outside-user campaign; a plain thread with its own 50 us timer hung too),
// nor at 100 us under a slack of 150 us that a launcher set (a review). The shortest interval is 100 us, and
// a thread's slack is at most a quarter of the interval while it serves a worker, its own given back after.
TEST(PreemptThread, SleepsEndAtTheShortestIntervalWhateverTheSlack) {
  const int before = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  for (const unsigned long slack : {50'000ul, 150'000ul}) {
    ASSERT_EQ(prctl(PR_SET_TIMERSLACK, slack, 0, 0, 0), 0);
    for (const char* mode : {"signal", "klt"})
      for (unsigned workers : {1u, 2u}) {
        roost::runtime rt(preempting("ws", workers, "100us", "aligned", mode));
        rt.run([] {
          roost::task_group g;
          for (int t = 0; t < 2; ++t)
            g.run([] {
              for (int i = 0; i < 100; ++i) std::this_thread::sleep_for(std::chrono::microseconds(30));
            });
          g.wait();
        });
        EXPECT_EQ(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), static_cast<int>(slack)) << "run's caller's slack given back";
      }
  }
  prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(before), 0, 0, 0);
}

// Worker 0's timer ticks until the end of runtime::run, after the run has given back the stacks of the
// fibers its preempted tasks left (engine_base::run_root). A tick there read the fiber the thread last
// ran, whose stack a munmap was unmapping: a crash (found by an outside-user campaign with this program).
// A race, which a loaded machine makes likely: the ASan build of this test failed 4 of 10 times with two
// copies of it and two busy loops running, and not once in 10 with the fix.
TEST(PreemptThread, ATickAtTheEndOfARunFindsNoFiber) {
  roost::runtime rt(preempting("ws", 3, "100us", "aligned", "signal"));
  const long want = 200000L * 199999L / 2;
  for (int rep = 0; rep < 5; ++rep) {
    // Spinners released by a later sibling, each with nested loops and a nested group of its own.
    std::atomic<int> go{0};
    std::atomic<long> sum{0}, done{0};
    rt.run([&] {
      roost::task_group g;
      for (int i = 0; i < 3; ++i)
        g.run([&] {
          spin_until(go);
          sum.fetch_add(roost::parallel_reduce(0L, 200000L, 1000, 0L,
                                               [](long lo, long hi) {
                                                 long a = 0;
                                                 for (long k = lo; k < hi; ++k) a += k;
                                                 return a;
                                               },
                                               [](long a, long b) { return a + b; }));
          std::atomic<int> inner{0};
          roost::task_group g2;
          g2.run([&] { spin_until(inner); });
          g2.run([&] { inner.store(1, std::memory_order_release); });
          g2.wait();
          roost::parallel_for(0, 100000, 997, [&](int lo, int hi) { done.fetch_add(hi - lo); });
        });
      g.run([&] { go.store(1, std::memory_order_release); });
      g.wait();
    });
    EXPECT_EQ(sum.load(), 3 * want) << "rep " << rep;
    EXPECT_EQ(done.load(), 300000) << "rep " << rep;
    // Spinners that throw once released: one exception comes out.
    std::atomic<int> go2{0}, finished{0};
    EXPECT_THROW(rt.run([&] {
      roost::task_group g;
      for (int i = 0; i < 3; ++i)
        g.run([&] {
          spin_until(go2);
          finished.fetch_add(1);
          throw std::runtime_error("after the spin");
        });
      g.run([&] { go2.store(1, std::memory_order_release); });
      g.wait();
    }),
                 std::runtime_error);
    EXPECT_EQ(finished.load(), 3) << "rep " << rep;
    // Spinners whose loops are long enough to be preempted, and catch an exception from deep inside.
    std::atomic<int> go3{0}, caught{0};
    rt.run([&] {
      roost::task_group g;
      for (int i = 0; i < 3; ++i)
        g.run([&] {
          spin_until(go3);
          try {
            roost::parallel_for(0, 1000, 10, [&](int lo, int) {
              volatile long x = 0;
              for (int k = 0; k < 20000; ++k) x = x + k;
              if (lo == 500) throw std::logic_error("deep");
            });
          } catch (const std::logic_error&) {
            caught.fetch_add(1);
          }
        });
      g.run([&] { go3.store(1, std::memory_order_release); });
      g.wait();
    });
    EXPECT_EQ(caught.load(), 3) << "rep " << rep;
    // A root that waits for its child's flag, computes long enough to be preempted, and throws.
    std::atomic<int> flag{0};
    EXPECT_THROW(rt.run([&] {
      roost::task_group g;
      g.run([&] { flag.store(1, std::memory_order_release); });
      spin_until(flag);
      g.wait();
      volatile long x = 0;
      for (long k = 0; k < 3000000; ++k) x = x + k;
      throw 42;
    }),
                 int);
  }
}

TEST_P(Preempt, APreemptedTaskThatThrowsStillDeliversItsException) {
  for (const char* mode : {"signal", "klt"}) {
  roost::runtime rt(preempting(GetParam(), 1, "1ms", "aligned", mode));
  rt.run([] {
    std::atomic<int> flag{0};
    roost::task_group g;
    g.run([&] {
      spin_until(flag);  // runs on only after a preemption let the setter run
      throw std::runtime_error("after the spin");
    });
    g.run([&] { flag.store(1, std::memory_order_release); });
    EXPECT_THROW(g.wait(), std::runtime_error);
  });
  }
}

// Preemption changes no join's path: a two-way join that runs inline with preemption off runs inline with it
// on. The policies whose join queue is their choice of the moment (adws, adws-ml, cab, cats) took the
// engine's path while preemption was on (an outside-user campaign: a 2,000-deep parallel_invoke recursion
// under adws took 34-42 ms against 1-2 ms off, one mapped stack per level). Counted by shims in place of
// the worker's engine entry points, inside a child of the root (adws deals nothing there; cab's boundary at
// the root), on the second run (cats profiles the first).
namespace {
std::atomic<int> g_engine_calls{0};
void (*g_real_spawn)(roost::detail::worker_abi&, roost::detail::group_state&, roost::detail::task_frame&) = nullptr;
void (*g_real_wait)(roost::detail::worker_abi&, roost::detail::group_state&) = nullptr;
void counting_spawn(roost::detail::worker_abi& w, roost::detail::group_state& g, roost::detail::task_frame& f) {
  g_engine_calls.fetch_add(1);
  g_real_spawn(w, g, f);
}
void counting_wait(roost::detail::worker_abi& w, roost::detail::group_state& g) {
  g_engine_calls.fetch_add(1);
  g_real_wait(w, g);
}
long invoke_chain(int depth) {
  if (depth == 0) return 1;
  long a = 0, b = 0;
  roost::parallel_invoke([&] { a = invoke_chain(depth - 1); }, [&] { b = 1; });
  return a + b;
}
// Engine calls made by a 64-deep chain of two-way joins on one worker, on the second of two runs.
int engine_calls_of_a_join_chain(const roost::options& o) {
  roost::runtime rt(o);
  int calls = -1;
  for (int run = 0; run < 2; ++run) {
    rt.run([&] {
      roost::task_group outer;
      outer.run([&] {
        roost::detail::worker_abi* w = roost::detail::running_fiber()->worker;
        g_real_spawn = w->engine_spawn;
        g_real_wait = w->engine_wait;
        w->engine_spawn = &counting_spawn;
        w->engine_wait = &counting_wait;
        g_engine_calls = 0;
        EXPECT_EQ(invoke_chain(64), 65);
        calls = g_engine_calls.load();
        w = roost::detail::running_fiber()->worker;
        w->engine_spawn = g_real_spawn;
        w->engine_wait = g_real_wait;
      });
      outer.wait();
    });
  }
  return calls;
}
}  // namespace
TEST_P(Preempt, TwoWayJoinsTakeTheSamePathWithPreemptionOnAsOff) {
  roost::options off = roost_test::opts_sharing_the_root(GetParam(), 1);
  const int calls_off = engine_calls_of_a_join_chain(off);
  for (const char* mode : {"signal", "klt"}) {
    roost::options on = off;
    on.preempt = mode;
    on.preempt_interval = "10ms";
    EXPECT_EQ(engine_calls_of_a_join_chain(on), calls_off) << GetParam() << ", " << mode;
  }
  const std::string s = GetParam();
  if (s != "numa") EXPECT_EQ(calls_off, 0) << s << ": the joins were expected inline";  // user-guide.md
}

// preempt_as's warning names the setting that turned preemption off: options::preempt when the field did,
// though ROOST_PREEMPT says signal (it told the user to set the variable that was set: an outside-user
// campaign). In a child: the warning is said once a process.
TEST(PreemptConfig, PreemptAsWarningNamesTheFieldThatTurnedPreemptionOff) {
  // Threadsafe: the child runs the test afresh (re-executed), so an earlier test of this binary that said
  // the warning once does not silence it (a review: it failed when the whole binary ran).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("ROOST_PREEMPT", "signal", 1);
        roost::options o = opts("ws", 1);
        o.preempt = "off";
        roost::runtime rt(o);
        rt.run([] { roost::preempt_as p(roost::preemption::signal); });
        std::exit(0);
      },
      ::testing::ExitedWithCode(0),
      "does not preempt \\(options::preempt is off\\).*options::preempt=signal or klt");
}

// A preemption type that is none of the three (a number cast to the enum) is a usage_error, in a task or
// not, and the task's preemption is as it was (a review: it was taken for off without a word, and a spin in
// its scope hung a worker for good).
TEST(PreemptConfig, APreemptAsOfNoKnownTypeIsAUsageError) {
  const auto bad = static_cast<roost::preemption>(7);
  const std::string outside = roost_test::usage_error_of([&] { roost::preempt_as p(bad); });
  EXPECT_NE(outside.find("roost::preempt_as(how): how = 7 is no roost::preemption; valid: preemption::off"),
            std::string::npos) << outside;
  roost::runtime rt(preempting("ws", 1));
  rt.run([&] {
    const std::string inside = roost_test::usage_error_of([&] { roost::preempt_as p(bad); });
    EXPECT_NE(inside.find("how = 7 is no roost::preemption"), std::string::npos) << inside;
    // Nothing was raised or changed: a task that spins for its sibling is still preempted.
    std::atomic<int> flag{0};
    roost::task_group g;
    g.run([&] { spin_until(flag); });
    g.run([&] { flag.store(1, std::memory_order_release); });
    g.wait();
  });
  EXPECT_GT(rt.preemptions(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, Preempt, ::testing::ValuesIn(available_schedulers()), scheduler_test_name);

// Signal-yield resumes a task by returning from the tick on the thread it interrupted: the task's
// thread_local values and a mutex it holds (with nobody else taking it) are as they were.
TEST(PreemptThread, APreemptedTaskResumesOnItsOwnThreadWithItsLockAndThreadLocals) {
  roost::runtime rt(preempting("ws", 1));
  static thread_local int tls = 0;
  std::mutex m;
  bool same_thread = false, same_tls = false;
  rt.run([&] {
    std::atomic<int> flag{0};
    roost::task_group g;
    g.run([&] {
      tls = 42;
      const auto me = std::this_thread::get_id();
      std::unique_lock<std::mutex> lk(m);
      spin_until(flag);
      same_thread = std::this_thread::get_id() == me;
      same_tls = tls == 42;
    });
    g.run([&] {
      tls = 7;  // the same worker's thread: what the spinner sees is its thread's, as under KLT-switching
      flag.store(1, std::memory_order_release);
    });
    g.wait();
  });
  EXPECT_TRUE(same_thread);
  EXPECT_FALSE(same_tls) << "another task of the same OS thread ran in between and set the thread's value";
  EXPECT_GE(rt.preemptions(), 1u);
}

// What a task that spins until its next sibling ran sees across its preemption: whether it resumed on its
// thread, with its thread_local value; whether the sibling ran on the same thread, and could take a
// recursive mutex or a std::mutex the spinner holds; what unlocking an error-checking mutex it locked
// returned. `how`: the spinner's own choice of type (roost::preempt_as), or none.
struct thread_state {
  bool same_thread = false, same_tls = false, sibling_same_thread = true, sibling_took_it = true,
       sibling_took_plain = true;
  int unlock_status = -1;
};
thread_state across_a_preemption(roost::runtime& rt, std::optional<roost::preemption> how, bool sibling_tries_lock = true) {
  static thread_local int tls = 0;
  std::recursive_mutex rm;
  std::mutex m;
  pthread_mutex_t em;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_init(&em, &attr);
  thread_state st;
  rt.run([&] {
    std::atomic<int> flag{0};
    roost::task_group g;
    std::thread::id spinner_thread;
    g.run([&] {
      std::optional<roost::preempt_as> choice;
      if (how) choice.emplace(*how);
      tls = 42;
      spinner_thread = std::this_thread::get_id();
      std::lock_guard<std::recursive_mutex> lk(rm);
      std::lock_guard<std::mutex> plain(m);
      pthread_mutex_lock(&em);
      spin_until(flag);
      st.same_thread = std::this_thread::get_id() == spinner_thread;
      st.same_tls = tls == 42;
      st.unlock_status = pthread_mutex_unlock(&em);
    });
    g.run([&] {
      tls = 7;  // the worker's next task: the same variable if it runs on the same kernel thread
      st.sibling_same_thread = std::this_thread::get_id() == spinner_thread;
      st.sibling_took_it = sibling_tries_lock && rm.try_lock();
      if (st.sibling_took_it) rm.unlock();
      st.sibling_took_plain = sibling_tries_lock && m.try_lock();
      if (st.sibling_took_plain) m.unlock();
      flag.store(1, std::memory_order_release);
    });
    g.wait();
  });
  pthread_mutex_destroy(&em);
  pthread_mutexattr_destroy(&attr);
  return st;
}

// KLT-switching keeps a preempted task on its kernel thread, which sleeps with it while another thread serves
// the worker: the task's thread_local value stays its own although the next task of the same worker sets
// the same variable, a recursive mutex it holds is not the next task's to take (as it would be on the same
// thread), and an error-checking mutex is unlocked by the thread that locked it. By the runtime's default,
// and by a task's own choice under a runtime that uses signal-yield.
TEST(PreemptThread, KltSwitchingKeepsAPreemptedTasksThreadLocalsAndLocksItsOwn) {
  for (const auto& [mode, how] : {std::pair{"klt", std::optional<roost::preemption>{}},
                                  std::pair{"signal", std::optional<roost::preemption>{roost::preemption::klt}}}) {
    roost::runtime rt(preempting("ws", 1, "1ms", "aligned", mode));
    for (int round = 0; round < 3; ++round) {
      const thread_state st = across_a_preemption(rt, how);
      const std::string where = std::string("ROOST_PREEMPT=") + mode + (how ? " and preempt_as(klt)" : "") +
                                ", round " + std::to_string(round);
      EXPECT_TRUE(st.same_thread) << where;
      EXPECT_TRUE(st.same_tls) << where;
      EXPECT_FALSE(st.sibling_same_thread) << where;
      EXPECT_FALSE(st.sibling_took_it) << where << ": the next task took a lock the preempted one holds";
      EXPECT_FALSE(st.sibling_took_plain) << where << ": the next task took a std::mutex the preempted one holds";
      EXPECT_EQ(st.unlock_status, 0) << where;
    }
    EXPECT_GE(rt.preemptions(), 3u);
  }
}

// A task's choice of signal-yield under a runtime that uses KLT-switching: the next task runs on its thread.
// (Which could then take the recursive mutex the spinner holds: the hazard KLT-switching removes, and one
// TSan reports as a double lock, so it is not tried here.)
TEST(PreemptThread, ATaskMayChooseSignalYieldUnderKltSwitching) {
  roost::runtime rt(preempting("ws", 1, "1ms", "aligned", "klt"));
  const thread_state st = across_a_preemption(rt, roost::preemption::signal, false);
  EXPECT_TRUE(st.same_thread);
  EXPECT_TRUE(st.sibling_same_thread);
  EXPECT_FALSE(st.same_tls);
  EXPECT_GE(rt.preemptions(), 1u);
}

// A worker whose tasks mix the two types: a signal-yield task preempted on the worker's thread, then a
// KLT-switching one that keeps that thread; the spare serves the worker and resumes the first task on
// itself. Its errno comes back on the thread it resumed on: the tick's handler restored it through the
// location it read before the switch, the old thread's (an outside-user campaign; TSan: "signal handler
// spoils errno"), and the task read another value. And the thread it resumed on keeps its own alternate
// signal stack: the handler's return set it from the frame, the first thread's (found in review).
// The calling thread's errno and id, asked for anew: GCC takes __errno_location and pthread_self for const
// functions, and reused what the task read before its preemption. Out of line, and each with an empty asm
// that may write memory, so that no compiler takes them for const functions (GCC's noipa; clang has none).
__attribute__((noinline)) int errno_here() {
  asm volatile("" ::: "memory");
  return errno;
}
__attribute__((noinline)) std::thread::id thread_here() {
  asm volatile("" ::: "memory");
  return std::this_thread::get_id();
}
void* alt_stack_here() {
  stack_t ss{};
  return sigaltstack(nullptr, &ss) == 0 && !(ss.ss_flags & SS_DISABLE) ? ss.ss_sp : nullptr;
}

TEST(PreemptThread, ASignalYieldTaskKeepsItsErrnoWhereverItResumes) {
  roost::runtime rt(preempting("ws", 1, "1ms", "aligned", "signal"));
  int wrong = 0, moved = 0, shared_alt_stack = 0;
  for (int round = 0; round < 10; ++round) {
    rt.run([&] {
      std::atomic<int> flag{0};
      roost::task_group g;
      g.run([&] {
        roost::preempt_as s(roost::preemption::signal);
        const auto thread = thread_here();
        void* const alt = alt_stack_here();
        errno = 4321;
        spin_until(flag);
        wrong += errno_here() != 4321;
        const bool other = thread_here() != thread;
        moved += other;
        shared_alt_stack += other && alt != nullptr && alt_stack_here() == alt;
      });
      g.run([&] {
        roost::preempt_as k(roost::preemption::klt);
        spin_until(flag);
      });
      g.run([&] { flag.store(1, std::memory_order_release); });
      g.wait();
    });
  }
  EXPECT_EQ(wrong, 0) << moved << " of 10 rounds resumed the signal-yield task on another thread";
  EXPECT_EQ(shared_alt_stack, 0) << "threads left with the first one's alternate signal stack";
  EXPECT_GE(rt.preemptions(), 10u);
}

// A signal-yield task resumed on another kernel thread of its worker runs with that thread's signal mask, and
// the thread keeps it: here the spares block SIGUSR1 (the runtime's creator blocked it when they were made)
// and run()'s caller does not. The KLT-switching task keeps the caller's thread, a spare serves the worker
// meanwhile, the signal-yield task is interrupted there and resumes on the caller: it took the spare's mask
// with it (the handler's frame holds the interrupted thread's), and run() returned with SIGUSR1 blocked (a
// review). The assertions hold on any schedule; `moved` says how often the case came.
namespace {
bool usr1_blocked_here() {
  sigset_t m;
  pthread_sigmask(SIG_BLOCK, nullptr, &m);
  return sigismember(&m, SIGUSR1) == 1;
}
}  // namespace

TEST(PreemptThread, ASignalYieldTaskTakesTheSignalMaskOfTheThreadItResumesOn) {
#ifdef ROOST_TSAN
  // TSan runs the tick's handler late, with a copy of the context, and then gives the thread the mask it
  // saved on the interrupted thread: the frame's mask is not what the resumed task gets (preempt_signal.hpp).
  GTEST_SKIP() << "under ThreadSanitizer the interrupted thread's mask follows the task";
#endif
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigset_t before;
  pthread_sigmask(SIG_BLOCK, &usr1, &before);
  std::optional<roost::runtime> rt;
  rt.emplace(preempting("ws", 1, "1ms", "aligned", "signal"));  // its spares are made with SIGUSR1 blocked
  pthread_sigmask(SIG_UNBLOCK, &usr1, nullptr);
  const auto caller = std::this_thread::get_id();
  int wrong_mask = 0, moved = 0, caller_blocked_after = 0;
  for (int round = 0; round < 10; ++round) {
    rt->run([&] {
      std::atomic<int> flag{0};
      roost::task_group g;
      g.run([&] {  // keeps the caller's thread while it is preempted: a spare serves the worker
        roost::preempt_as k(roost::preemption::klt);
        spin_until(flag);
      });
      g.run([&] {
        roost::preempt_as s(roost::preemption::signal);
        const auto thread = thread_here();
        spin_until(flag);
        const auto now = thread_here();
        moved += now != thread;
        // The caller's thread serves with SIGUSR1 unblocked, a spare with it blocked.
        wrong_mask += usr1_blocked_here() != (now != caller);
      });
      g.run([&] { flag.store(1, std::memory_order_release); });
      g.wait();
    });
    caller_blocked_after += usr1_blocked_here();
    pthread_sigmask(SIG_UNBLOCK, &usr1, nullptr);  // the next round starts as the first did
  }
  rt.reset();
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  EXPECT_EQ(wrong_mask, 0) << moved << " of 10 rounds resumed the signal-yield task on another thread";
  EXPECT_EQ(caller_blocked_after, 0) << "run() returned with a spare's signal mask";
}

// Under ROOST_PREEMPT=off a task's choice cannot take effect: the program runs (nothing spins here) and is
// told once.
TEST(PreemptThread, AChoiceUnderARuntimeThatDoesNotPreemptIsToldOnce) {
  roost::runtime rt(opts("ws", 1));
  testing::internal::CaptureStderr();
  int ran = 0;
  for (int i = 0; i < 2; ++i)
    rt.run([&] {
      roost::preempt_as p(roost::preemption::klt);
      ++ran;
    });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(ran, 2);
  // Once per process (no other test here asks under off), for two runs.
  const auto first = err.find("roost::preempt_as(preemption::klt)");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_NE(err.find("(ROOST_PREEMPT is off)"), std::string::npos) << err;
  EXPECT_EQ(err.find("roost::preempt_as", first + 1), std::string::npos) << err;
}

// A non_preemptible region, or preempt_as(off), sees ticks (deferred) and no preemption.
TEST(PreemptThread, ANonPreemptibleRegionIsNeverPreempted) {
  for (const char* mode : {"signal", "klt"}) {
  roost::runtime rt(preempting("ws", 1, "100us", "aligned", mode));
  std::uint64_t before = 0, after = 0, deferred_before = 0, deferred_after = 0;
  rt.run([&] {
    std::optional<roost::non_preemptible> np;
    std::optional<roost::preempt_as> off;
    if (std::string(mode) == "signal") np.emplace();
    else off.emplace(roost::preemption::off);
    before = rt.preemptions();
    deferred_before = rt.preempt_ticks_deferred();
    // Until three ticks have come and gone (as many as it takes, however slow the machine).
    while (rt.preempt_ticks_deferred() < deferred_before + 3) {
    }
    deferred_after = rt.preempt_ticks_deferred();
    after = rt.preemptions();
  });
  EXPECT_EQ(after, before) << mode;
  EXPECT_GE(deferred_after, deferred_before + 3) << mode;
  }
}

// per_worker::update runs its function with no preemption from the element's look-up on: a tick that comes
// meanwhile is deferred, and no other task of the worker runs between the element's read and its write back.
// Under ws one worker runs the updating child first; a preemption of it would run the root's continuation,
// whose sibling sets the flag. The spin ends once ticks were deferred (as many as it takes, however slow the
// machine) or the sibling ran, so without the region the test fails instead of hanging. A tick may also
// preempt the child before its update begins (the TSan build once took that long to get there): the sibling
// then ran first, which says nothing of the update, and the run is made again.
TEST(PreemptThread, PerWorkerUpdateIsNeverPreempted) {
  for (const char* mode : {"signal", "klt"}) {
    bool conclusive = false;
    for (int attempt = 0; attempt < 50 && !conclusive; ++attempt) {
      roost::runtime rt(preempting("ws", 1, "100us", "aligned", mode));
      roost::per_worker<long> count;
      std::atomic<int> sibling_ran{0};
      bool sibling_first = false;
      long added = 0;
      std::uint64_t before = 0, after = 0;
      rt.run([&] {
        roost::task_group g;
        g.run([&] {
          added = count.update([&](long& n) {
            sibling_first = sibling_ran.load(std::memory_order_acquire) != 0;
            before = rt.preemptions();
            const std::uint64_t deferred = rt.preempt_ticks_deferred();
            while (rt.preempt_ticks_deferred() < deferred + 3 && sibling_ran.load(std::memory_order_acquire) == 0) {
            }
            after = rt.preemptions();
            n += sibling_ran.load(std::memory_order_acquire) == 0 ? 1 : 100;
            return n;
          });
        });
        g.run([&] { sibling_ran.store(1, std::memory_order_release); });
        g.wait();
      });
      if (sibling_first) continue;  // preempted before its update: nothing to see in this run
      conclusive = true;
      EXPECT_EQ(added, 1) << mode << ": update returns what its function does, and no sibling ran inside it";
      EXPECT_EQ(after, before) << mode;
      EXPECT_EQ(count.combine(std::plus<>()), 1) << mode;
    }
    EXPECT_TRUE(conclusive) << mode << ": every run's child was preempted before its update began";
  }
}

// preempt_as nests and the innermost wins: a signal or klt scope inside a preempt_as(off) makes its task
// preemptible again, and its end makes it not (an outside-user campaign: two siblings meeting at a busy barrier
// inside off { klt { ... } } hung at one worker, the outer off winning). The preempt_off count is read
// through the fiber (the scopes' own effect, no timing).
TEST(PreemptThread, AnInnerPreemptAsWinsOverAnOuterOff) {
  for (const char* mode : {"signal", "klt"}) {
    roost::runtime rt(preempting("ws", 1, "1ms", "aligned", mode));
    const roost::preemption inner = std::string(mode) == "klt" ? roost::preemption::klt : roost::preemption::signal;
    std::uint32_t in_off = 0, in_inner = 0, back_in_off = 0, inside_non_preemptible = 0;
    rt.run([&] {
      std::atomic<int> arrived{0};
      roost::task_group g;
      for (int t = 0; t < 2; ++t)
        g.run([&, t] {
          roost::preempt_as off(roost::preemption::off);
          roost::preempt_as off_again(roost::preemption::off);
          if (t == 0) in_off = roost::detail::running_fiber()->preempt_off.load();
          {
            roost::preempt_as mine(inner);
            if (t == 0) in_inner = roost::detail::running_fiber()->preempt_off.load();
            arrived.fetch_add(1);
            spin_until_count(arrived, 2);  // the other sibling runs only if this one is preempted
            if (t == 0) {
              roost::non_preemptible np;
              roost::preempt_as again(inner);  // no effect inside non_preemptible
              inside_non_preemptible = roost::detail::running_fiber()->preempt_off.load();
            }
          }
          if (t == 0) back_in_off = roost::detail::running_fiber()->preempt_off.load();
        });
      g.wait();
    });
    EXPECT_EQ(in_off, 2u) << mode;
    EXPECT_EQ(in_inner, 0u) << mode;
    EXPECT_EQ(inside_non_preemptible, 1u) << mode;
    EXPECT_EQ(back_in_off, 2u) << mode;
    EXPECT_GE(rt.preemptions(), 1u) << mode;
  }
}

// The inline deque operations are critical windows (abi.hpp): this program's are registered, and a tick
// whose interrupted instruction lies inside one is deferred, while a tick elsewhere in the same task
// preempts it. The ticks are the handler called with a made-up context from inside a task (no timer ticks
// at a 10 s interval), so what is tested is the handler's decision, not timing.
TEST(PreemptWindows, ATickInsideAnInlineDequeOperationIsDeferred) {
#ifndef ROOST_CRITICAL_WINDOWS
  GTEST_SKIP() << "this build has no critical windows: its inline deque operations raise preempt_off instead";
#else
  const roost::detail::critical_range* first = roost::detail::__start_roost_critical;
  const roost::detail::critical_range* last = roost::detail::__stop_roost_critical;
  ASSERT_NE(first, nullptr);
  ASSERT_GT(last - first, 2) << "this program inlines task_group::run and wait and parallel_invoke";
  const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(first) + static_cast<std::intptr_t>(first->start);
  // A sequence loads the worker (a move from memory, at least 3 bytes) and commits with a store.
  ASSERT_GE(first->length, 6u);
  EXPECT_TRUE(roost::engine::in_critical_window(start));
  EXPECT_TRUE(roost::engine::in_critical_window(start + first->length - 1));
  EXPECT_FALSE(roost::engine::in_critical_window(reinterpret_cast<std::uintptr_t>(&spin_until)));
  for (const char* mode : {"signal", "klt"}) {
    roost::runtime rt(preempting("ws-help", 1, "10s", "aligned", mode));
    unsigned long long deferred = 0, preempted_in_window = 0;
    rt.run([&] {
      ucontext_t uc{};
      uc.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(start + first->length / 2);
      for (int i = 0; i < 3; ++i) roost::engine::on_preempt_tick(&uc);
      deferred = rt.preempt_ticks_deferred();
      preempted_in_window = rt.preemptions();
      uc.uc_mcontext.gregs[REG_RIP] = reinterpret_cast<greg_t>(&spin_until);
      roost::engine::on_preempt_tick(&uc);  // notes the worker's progress
      // None since: preempted, then resumed (nothing else to run). Under KLT-switching a tick is deferred
      // until the creator thread has made the worker's spare thread: as many ticks as that takes.
      while (rt.preemptions() == 0) roost::engine::on_preempt_tick(&uc);
    });
    EXPECT_EQ(deferred, 3u) << mode;
    EXPECT_EQ(preempted_in_window, 0u) << mode;
    EXPECT_EQ(rt.preemptions(), 1u) << mode;
  }
#endif
}

// The spawn of ws and hws while preemption is on lies in the runtime text (engine.hpp,
// spawn_in_runtime_text): a tick there is deferred by its address, as inside an inline deque operation,
// with the spawner's count at 0. A policy whose spawn path is not audited keeps the counted entry point,
// outside the text. The handler is called directly, as above: no timing involved.
TEST(PreemptWindows, ATickInTheRuntimeTextIsDeferred) {
#ifndef ROOST_RUNTIME_TEXT
  GTEST_SKIP() << "no runtime text on this platform: every spawn entry point raises the count";
#else
  auto spawn_entry = [] {
    return reinterpret_cast<std::uintptr_t>(roost::detail::running_fiber()->worker->engine_spawn);
  };
  for (const char* sched : {"ws", "hws"}) {
    for (const char* mode : {"signal", "klt"}) {
      SCOPED_TRACE(std::string(sched) + " " + mode);
      roost::runtime rt(preempting(sched, 1, "10s", "aligned", mode));
      bool in_text = false;
      unsigned count = 99;
      unsigned long long deferred = 0, preempted_in_text = 0;
      int spawned = 0;
      rt.run([&] {
        const std::uintptr_t spawn = spawn_entry();
        in_text = roost::engine::in_critical_window(spawn);
        count = roost::detail::running_fiber()->preempt_off.load();
        ucontext_t uc{};
        uc.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(spawn + 1);
        for (int i = 0; i < 3; ++i) roost::engine::on_preempt_tick(&uc);
        deferred = rt.preempt_ticks_deferred();
        preempted_in_text = rt.preemptions();
        uc.uc_mcontext.gregs[REG_RIP] = reinterpret_cast<greg_t>(&spin_until);
        roost::engine::on_preempt_tick(&uc);  // notes the worker's progress
        while (rt.preemptions() == 0) roost::engine::on_preempt_tick(&uc);  // KLT: until the spare exists
        roost::task_group g;  // and the entry point spawns and joins
        for (int i = 0; i < 4; ++i) g.run([&] { ++spawned; });
        g.wait();
      });
      EXPECT_TRUE(in_text);
      EXPECT_EQ(count, 0u) << "a body's count: the deferral is the address's";
      EXPECT_EQ(deferred, 3u);
      EXPECT_EQ(preempted_in_text, 0u);
      EXPECT_EQ(rt.preemptions(), 1u);
      EXPECT_EQ(spawned, 4);
    }
  }
  roost::runtime rt(preempting("cab", 1, "10s", "aligned", "signal"));
  bool in_text = true;
  rt.run([&] { in_text = roost::engine::in_critical_window(spawn_entry()); });
  EXPECT_FALSE(in_text) << "cab's spawn path is not audited: its entry point counts";
#endif
}

// A tick that interrupts a signal handler of the program's is deferred: the task under the handler may be
// in malloc's lock or a deque operation, which the handler's address does not show (a review: a program's
// SIGALRM handler interrupted by a tick let the next task of the thread wait for ever on malloc's lock).
// The handler blocks its own signal while it runs, which the interrupted context's mask shows. Ticks are
// the handler called with a made-up context, as above.
TEST(PreemptThread, ATickInsideTheProgramsSignalHandlerIsDeferred) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the made-up context sets x86-64's instruction pointer";
#else
  if (roost_test::under_tsan())
    GTEST_SKIP() << "under TSan the handler's context does not show the interrupted mask (preempt_signal.cpp)";
  for (const char* mode : {"signal", "klt"}) {
    roost::runtime rt(preempting("ws", 1, "10s", "aligned", mode));
    unsigned long long deferred = 0, preempted_in_handler = 0;
    rt.run([&] {
      ucontext_t uc{};
      uc.uc_mcontext.gregs[REG_RIP] = reinterpret_cast<greg_t>(&spin_until);
      sigaddset(&uc.uc_sigmask, SIGALRM);  // as inside the program's SIGALRM handler
      roost::engine::on_preempt_tick(&uc);  // notes the worker's progress
      const unsigned long long before = rt.preempt_ticks_deferred();
      for (int i = 0; i < 3; ++i) roost::engine::on_preempt_tick(&uc);
      deferred = rt.preempt_ticks_deferred() - before;
      preempted_in_handler = rt.preemptions();
      sigemptyset(&uc.uc_sigmask);  // the handler returned: the task's own code
      while (rt.preemptions() == 0) roost::engine::on_preempt_tick(&uc);  // KLT: until the spare exists
    });
    EXPECT_EQ(deferred, 3u) << mode;
    EXPECT_EQ(preempted_in_handler, 0u) << mode;
    EXPECT_EQ(rt.preemptions(), 1u) << mode;
  }
#endif
}

// The floating-point state a tick's handler passes on is the interrupted code's: the image in the kernel's
// frame, which lies just above the context. Under TSan, which delivers most signals late with a copy of the
// context whose image pointer is stale by then, it is the thread's own state (the handler runs in the task's
// code with it loaded). A made-up context: one frame-like, with its image right after it, and one whose image
// lies far away and holds another rounding mode, as a stale one may.
TEST(PreemptThread, TheStateATickPassesOnIsTheInterruptedCodes) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the made-up context holds x86-64's FXSAVE image";
#else
  struct frame_like {
    ucontext_t uc;
    struct _libc_fpstate image;
  };
  const auto mode_of = [](std::uint64_t state) { return (state >> (32 + 13)) & 3u; };  // MXCSR's RC bits
  const std::uint32_t mxcsr = _mm_getcsr();
  const std::uint32_t down = (mxcsr & ~0x6000u) | 0x2000u, up = (mxcsr & ~0x6000u) | 0x4000u;
  static frame_like far_away{};  // not beside the context below: as a copy's pointer into a gone frame
  far_away.image.mxcsr = up;
  far_away.image.cwd = 0x37f;
  auto near = std::make_unique<frame_like>();
  near->image.mxcsr = down;
  near->image.cwd = 0x37f;
  near->uc.uc_mcontext.fpregs = &near->image;
  _mm_setcsr(down);  // the interrupted code's state, loaded in the thread
  const std::uint64_t from_frame = roost::platform::preempt::interrupted_fp_state(&near->uc);
  near->uc.uc_mcontext.fpregs = &far_away.image;
  const std::uint64_t from_copy = roost::platform::preempt::interrupted_fp_state(&near->uc);
  _mm_setcsr(mxcsr);
  EXPECT_EQ(mode_of(from_frame), 1u);  // round down, from the image beside the context
  EXPECT_EQ(mode_of(from_copy), roost_test::under_tsan() ? 1u : 2u);  // the thread's, or else the image's
#endif
}

// The instruction a tick's handler takes for the interrupted one is the task's own code. Under TSan, whose
// handler calls the program's late, at the thread's next atomic operation, with the registers it saved when
// the signal came (nearly always inside TSan's own atomic functions, which this loop spends its time in), it
// is the call where the thread is (preempt_signal.cpp, late_delivery_call_site); elsewhere the context's. The
// signal comes from another thread while this one waits for it in a function of its own, which the
// instruction must lie in. (Under TSan without the call site: 6 failures in 6 runs.)
namespace {
int g_waiting_for_signal = 0, g_signal_seen = 0;  // by the builtins: see below
std::atomic<std::uintptr_t> g_signal_pc{0};
void record_interrupted_pc(int, siginfo_t*, void* uc) {
  g_signal_pc.store(roost::platform::preempt::interrupted_pc(uc), std::memory_order_relaxed);
  __atomic_store_n(&g_signal_seen, 1, __ATOMIC_RELEASE);
}
// The flags go through the builtins, not std::atomic's members, which can be calls out of this function in
// the sanitizer builds (ASan+UBSan left std::operator& out of line, and a signal taken there lay 301,449
// bytes away).
__attribute__((noinline)) void wait_for_the_signal() {
  __atomic_store_n(&g_waiting_for_signal, 1, __ATOMIC_RELEASE);
  while (__atomic_load_n(&g_signal_seen, __ATOMIC_ACQUIRE) == 0) {
  }
}
}  // namespace
TEST(PreemptThread, TheInstructionATickSeesIsTheInterruptedCodes) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "TSan's late delivery is handled on x86-64";
#else
  roost::runtime rt(preempting("ws", 1, "10s"));  // reads the system libraries' ranges
  rt.run([] {});
  __atomic_store_n(&g_waiting_for_signal, 0, __ATOMIC_RELAXED);  // for --gtest_repeat
  __atomic_store_n(&g_signal_seen, 0, __ATOMIC_RELAXED);
  struct sigaction sa {}, before {};
  sa.sa_sigaction = &record_interrupted_pc;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR2, &sa, &before), 0);
  const pthread_t waiter = pthread_self();
  std::thread sender([waiter] {
    while (__atomic_load_n(&g_waiting_for_signal, __ATOMIC_ACQUIRE) == 0) {
    }
    pthread_kill(waiter, SIGUSR2);
  });
  wait_for_the_signal();
  sender.join();
  sigaction(SIGUSR2, &before, nullptr);
  const std::uintptr_t at = g_signal_pc.load(std::memory_order_relaxed);
  const auto start = reinterpret_cast<std::uintptr_t>(&wait_for_the_signal);
  EXPECT_LT(at - start, 512u) << "the instruction lies " << static_cast<std::intptr_t>(at - start)
                              << " bytes from the waiting function's start";
#endif
}

// A work-first child that ends locally is progress: its spawn and end leave the deque's bottom where they
// found it, and before, two ticks on either side of such spawns (matmul's leaves under ws) preempted the task
// that made them, 29 times a run, though nothing was stuck. The ticks are the handler called with a made-up
// context in the program's code, as above; a 10 s interval keeps real ones out.
TEST(PreemptThread, AWorkFirstChildThatEndedIsProgress) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the made-up context sets x86-64's instruction pointer";
#else
  roost::runtime rt(preempting("ws", 1, "10s"));
  unsigned long long preempted_by_children = 0, preempted_after = 0;
  rt.run([&] {
    roost::task_group outer;
    // Inside a child, whose parent's continuation lies in the deque: the spawns below are then private, and
    // each child's end takes the deque back to the same bottom (an empty deque's pushes are shared at once,
    // and its indexes move on).
    outer.run([&] {
      ucontext_t uc{};
      uc.uc_mcontext.gregs[REG_RIP] = reinterpret_cast<greg_t>(&spin_until);
      roost::engine::worker& w = *roost::engine::current_worker();
      w.progress_at_tick = roost::engine::progress_signature(w) + 1;
      roost::engine::on_preempt_tick(&uc);  // notes the worker's progress
      const unsigned long long before = rt.preemptions();
      const std::int64_t bottom = w.deque.bottom_index();
      for (int i = 0; i < 3; ++i) {
        int ran = 0;
        roost::task_group g;
        g.run([&] { ++ran; });  // ws: the child runs first, on its own stack, and ends here
        g.wait();
        EXPECT_EQ(ran, 1);
        EXPECT_EQ(w.deque.bottom_index(), bottom);  // all the signature read before: no change
        roost::engine::on_preempt_tick(&uc);  // a child ended since the last tick: not stuck
      }
      preempted_by_children = rt.preemptions() - before;
      roost::engine::on_preempt_tick(&uc);  // no progress since the last tick: preempted
      preempted_after = rt.preemptions() - before;
    });
    outer.wait();
  });
  EXPECT_EQ(preempted_by_children, 0u);
  EXPECT_EQ(preempted_after, 1u);
#endif
}

#ifdef ROOST_RUNTIME_TEXT
extern "C" const char __start_roost_runtime_text[] __attribute__((weak, visibility("hidden")));
namespace {
// Whether the runtime text was a critical window while this file's static constructors ran: libroost.a
// comes after the test's objects on the link line, so without its own priority the registrar ran after
// them, and a global whose constructor ran preemptive tasks spawned through an unprotected text (a review).
const bool g_text_registered_in_static_init =
    __start_roost_runtime_text != nullptr &&
    roost::engine::in_critical_window(reinterpret_cast<std::uintptr_t>(__start_roost_runtime_text));
}  // namespace
#endif

TEST(PreemptWindows, TheRuntimeTextIsACriticalWindowBeforeTheProgramsStaticConstructors) {
#ifndef ROOST_RUNTIME_TEXT
  GTEST_SKIP() << "no runtime text on this platform";
#else
  ASSERT_NE(__start_roost_runtime_text, nullptr);
  EXPECT_TRUE(g_text_registered_in_static_init);
#endif
}

// A tick that lands inside a touch listener (a tracer's record, cats's meter, the program's consumer) is
// deferred: the listener's state is the worker's, and a task preempted half way through a record left it to
// the next task on the worker, or to the tick's own resume record. The tick is the handler called from
// inside the program's consumer with a made-up context in the program's code, as above; the same ticks
// outside the consumer preempt the task.
TEST(PreemptThread, ATickInsideATouchListenerIsDeferred) {
  struct ticking final : roost::touch_consumer {
    roost::runtime* rt = nullptr;
    unsigned long long preempted_inside = 0;
    void on_touch(int, const void*, std::size_t, roost::access) override {
      ucontext_t uc{};
      uc.uc_mcontext.gregs[REG_RIP] = reinterpret_cast<greg_t>(&spin_until);
      const unsigned long long before = rt->preemptions();
      for (int i = 0; i < 5; ++i) roost::engine::on_preempt_tick(&uc);
      preempted_inside += rt->preemptions() - before;
    }
  } consumer;
  roost::runtime rt(preempting("ws", 1, "10s", "aligned", "signal"));
  consumer.rt = &rt;
  roost::set_touch_consumer(&consumer);
  static char data[64];
  rt.run([&] {
    for (int i = 0; i < 3; ++i) roost::touch(data, sizeof data);
    ucontext_t uc{};
    uc.uc_mcontext.gregs[REG_RIP] = reinterpret_cast<greg_t>(&spin_until);
    for (int i = 0; i < 5; ++i) roost::engine::on_preempt_tick(&uc);  // outside: preempted, then resumed
  });
  EXPECT_EQ(roost::set_touch_consumer(nullptr), &consumer);
  EXPECT_EQ(consumer.preempted_inside, 0u);
  EXPECT_GE(rt.preemptions(), 1u);
}

// The monitor design arms no timer on a worker: a spinner is preempted only because the monitor thread saw
// its worker stuck and signalled it. Worker 0 spins non-preemptibly, so the setter can run only where the
// other spinner is preempted. The monitor sleeps from its first look after a run's end until a run starts:
// runs follow each other at once, and after a pause (in which it very likely fell asleep; a monitor a run
// did not wake would hang that run).
TEST(PreemptThread, TheMonitorThreadAloneTicksAStuckWorker) {
  constexpr unsigned kWorkers = 2;
  roost::runtime rt(preempting("ws", kWorkers, "200us", "monitor"));
  EXPECT_NE(rt.describe().find("a monitor thread, no timer on the workers"), std::string::npos) << rt.describe();
  for (int run = 0; run < 6; ++run) {
    if (run % 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const std::uint64_t before = rt.preemptions();
    rt.run([&] {
      std::atomic<int> flag{0};
      roost::task_group g;
      for (unsigned i = 0; i < kWorkers; ++i)
        g.run([&] {
          if (roost::this_worker_id() == 0) {
            roost::non_preemptible np;
            spin_until(flag);
          } else {
            spin_until(flag);
          }
        });
      g.run([&] { flag.store(1, std::memory_order_release); });
      g.wait();
    });
    EXPECT_GT(rt.preemptions(), before) << "run " << run;  // the setter runs only after a preemption
  }
}

// The monitor of a runtime made inside a task of another runs on the CPUs the process may use, not on the one
// CPU the outer worker is pinned to, where it would take turns with the very worker it must interrupt.
// Found through its name (/proc/self/task/*/comm), its CPUs through sched_getaffinity.
TEST(PreemptThread, TheMonitorOfARuntimeMadeInsideATaskRunsOnTheProcesssCpus) {
  cpu_set_t process;
  ASSERT_EQ(sched_getaffinity(0, sizeof(process), &process), 0);
  if (CPU_COUNT(&process) < 2) GTEST_SKIP() << "one CPU: a pinned worker has them all";
  std::vector<int> monitor_cpus;
  bool outer_pinned = false;
  roost::runtime outer(opts("ws", 1));
  outer.run([&] {
    cpu_set_t here;
    ASSERT_EQ(sched_getaffinity(0, sizeof(here), &here), 0);
    outer_pinned = CPU_COUNT(&here) == 1;
    roost::runtime inner(preempting("ws", 1, "1ms", "monitor"));
    for (const cpu_set_t& cpus : roost_test::cpus_of_threads_named("roost-monitor")) {
      monitor_cpus.push_back(CPU_COUNT(&cpus));
      EXPECT_TRUE(CPU_EQUAL(&cpus, &process)) << "the monitor runs on " << CPU_COUNT(&cpus) << " CPUs of the "
                                               << CPU_COUNT(&process) << " the process may use";
    }
  });
  if (!outer_pinned) GTEST_SKIP() << "the outer worker was not pinned: nothing to inherit";
  EXPECT_EQ(monitor_cpus.size(), 1u) << "one monitor thread, named roost-monitor";
}

// A preempting runtime's own threads carry names (top -H, gdb): the maker of KLT-switching's spare threads,
// which every preempting runtime has (a task may choose KLT-switching itself: roost::preempt_as), and each
// spare. Under klt one worker's spinner is preempted by KLT-switching, so a spare served the worker before the
// setter could run.
TEST(PreemptThread, TheSpareThreadsAndTheirMakerAreNamed) {
  {
    roost::runtime rt(preempting("ws", 1));
    // At least: a maker that an earlier test's runtime joined may linger in /proc a moment.
    EXPECT_GE(roost_test::cpus_of_threads_named("roost-spares").size(), 1u);
  }
  roost::runtime rt(preempting("ws", 1, "1ms", "aligned", "klt"));
  rt.run([] { spinners_then_setter(1); });
  EXPECT_GE(roost_test::cpus_of_threads_named("roost-spare").size(), 1u);
}

// A preempting runtime made (and destroyed) inside a task of a simulated one: its threads are native ones
// whatever thread makes it. The spares' maker was started as a simulated thread there, whose index its name
// then took for a pthread_t: a segfault (a review).
TEST(PreemptThread, APreemptingRuntimeMadeInsideASimulatedTaskHasNativeThreads) {
  roost::options sim = opts("ws", 2);
  sim.platform = "sim";
  roost::runtime outer(sim);
  std::string said;
  outer.run([&] {
    roost::runtime inner(preempting("ws", 2));
    said = inner.describe();
  });
  EXPECT_NE(said.find("preemption: signal-yield every 1 ms"), std::string::npos) << said;
}

// The chained timer ticks worker 0 alone; the last worker's task is preempted only if worker 0's tick passes
// through worker 1 (stuck too) to it. Spinners on the other workers are non_preemptible, so nothing but the
// last worker can ever run the setter.
TEST(PreemptThread, AChainedTickReachesTheLastWorkerThroughTheOthers) {
  constexpr unsigned kWorkers = 3;
  roost::runtime rt(preempting("ws", kWorkers, "200us", "chained"));
  EXPECT_NE(rt.describe().find("one chained timer"), std::string::npos) << rt.describe();
  rt.run([&] {
    std::atomic<int> flag{0};
    roost::task_group g;
    for (unsigned i = 0; i < kWorkers; ++i)
      g.run([&] {
        if (roost::this_worker_id() == static_cast<int>(kWorkers) - 1) {
          spin_until(flag);
        } else {
          roost::non_preemptible np;
          spin_until(flag);
        }
      });
    g.run([&] { flag.store(1, std::memory_order_release); });
    g.wait();
  });
  EXPECT_GE(rt.preemptions(), 1u);
}

// With preemption off the spinner never lets its sibling run: the program hangs. Observed in a child
// process, which the test ends after a bound (the outcome cannot depend on the machine's speed: the child
// can never finish).
TEST(PreemptOff, ASpinnerWaitingForALaterSiblingHangsWithoutPreemption) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    roost::options o = opts("ws", 1);
    o.preempt = "off";
    roost::runtime rt(o);
    rt.run([] { spinners_then_setter(1); });
    _exit(0);
  }
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 40 && done == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    done = waitpid(pid, &status, WNOHANG);
  }
  EXPECT_EQ(done, 0) << "the program finished without preemption (status " << status << ")";
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
}

// The wrapped sleeping and yielding calls return what the C library's return, errors included (a
// clock_nanosleep error is its return value, not errno), outside a runtime and inside a task.
void expect_sleep_calls_forward() {
  const timespec bad{0, -1}, short_one{0, 1000};
  errno = 0;
  EXPECT_EQ(nanosleep(&bad, nullptr), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(nanosleep(&short_one, nullptr), 0);
  const int saved = errno = 12345;
  EXPECT_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, nullptr), EINVAL);
  EXPECT_EQ(errno, saved);
  EXPECT_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &short_one, nullptr), 0);
  EXPECT_EQ(usleep(1), 0);
  EXPECT_EQ(sleep(0), 0u);
  EXPECT_EQ(sched_yield(), 0);
  errno = 0;
  EXPECT_EQ(::poll(nullptr, 0, 0), 0);
  pollfd bad_fd{-1, POLLIN, 0};  // a negative fd is ignored: 0 ready
  EXPECT_EQ(::poll(&bad_fd, 1, 0), 0);
  timeval zero{0, 0}, negative{0, -1};
  EXPECT_EQ(::select(0, nullptr, nullptr, nullptr, &zero), 0);
  EXPECT_EQ(::select(0, nullptr, nullptr, nullptr, &negative), -1);
  EXPECT_EQ(errno, EINVAL);
  epoll_event e{};
  errno = 0;
  EXPECT_EQ(::epoll_wait(-1, &e, 1, 0), -1);
  EXPECT_EQ(errno, EBADF);
  // The masked forms, and a const timeout left as it was (the kernel writes the time left into its copy).
  const timespec zero_ts{0, 0}, negative_ts{0, -1};
  EXPECT_EQ(::ppoll(&bad_fd, 1, &zero_ts, nullptr), 0);
  errno = 0;
  EXPECT_EQ(::ppoll(nullptr, 0, &negative_ts, nullptr), -1);
  EXPECT_EQ(errno, EINVAL);
  const timespec short_wait{0, 2000};
  int waited = 0;
  do {  // a tick may end it early: ppoll is never restarted (signal(7)), and the caller's copy must stay
    waited = ::ppoll(nullptr, 0, &short_wait, nullptr);
  } while (waited == -1 && errno == EINTR);
  EXPECT_EQ(waited, 0) << errno;
  EXPECT_EQ(short_wait.tv_nsec, 2000);
  EXPECT_EQ(::pselect(0, nullptr, nullptr, nullptr, &zero_ts, nullptr), 0);
  errno = 0;
  EXPECT_EQ(::pselect(0, nullptr, nullptr, nullptr, &negative_ts, nullptr), -1);
  EXPECT_EQ(errno, EINVAL);
  sigset_t none;
  sigemptyset(&none);
  errno = 0;
  EXPECT_EQ(::epoll_pwait(-1, &e, 1, 0, &none), -1);
  EXPECT_EQ(errno, EBADF);
}
TEST(PreemptConfig, TheWrappedSleepCallsReturnWhatTheCLibrarysReturn) {
  // The program's definitions are roost's (the dynamic linker binds every call of the process to them).
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "nanosleep"), reinterpret_cast<void*>(&nanosleep));
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "usleep"), reinterpret_cast<void*>(&usleep));
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "epoll_wait"), reinterpret_cast<void*>(&::epoll_wait));
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "ppoll"), reinterpret_cast<void*>(&::ppoll));
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "pselect"), reinterpret_cast<void*>(&::pselect));
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "epoll_pwait"), reinterpret_cast<void*>(&::epoll_pwait));
  EXPECT_TRUE(roost::platform::preempt::sleep_calls_bound_here());
  expect_sleep_calls_forward();
  roost::runtime rt(preempting("ws", 1));
  rt.run([] { expect_sleep_calls_forward(); });
}

// Which system libraries a process has linked into the program, from the loader's list of objects: the C
// library must be a shared object for preemption (its ticks are deferred there by address); a C++ runtime
// linked in is told, not refused. The refusal itself: Preempt.AStaticallyLinkedCLibraryIsRefused (ctest).
TEST(PreemptConfig, SystemLibrariesLinkedIntoTheProgramAreFound) {
  namespace pp = roost::platform::preempt;
  const std::vector<std::string> dynamic = {"", "linux-vdso.so.1", "/lib/x86_64-linux-gnu/libstdc++.so.6",
                                            "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"};
  EXPECT_EQ(pp::static_system_libraries(dynamic), "");
  EXPECT_FALSE(pp::static_cxx_runtime(dynamic));
  const std::vector<std::string> all_static = {"", "linux-vdso.so.1"};
  EXPECT_EQ(pp::static_system_libraries(all_static), "the C library");
  EXPECT_TRUE(pp::static_cxx_runtime(all_static));
  const std::vector<std::string> static_cxx = {"", "linux-vdso.so.1", "/lib/x86_64-linux-gnu/libc.so.6"};
  EXPECT_EQ(pp::static_system_libraries(static_cxx), "");
  EXPECT_TRUE(pp::static_cxx_runtime(static_cxx));
  EXPECT_EQ(pp::static_system_libraries({"", "/lib/ld-musl-x86_64.so.1"}), "");  // musl's libc is its loader
  // This test program calls the shared libstdc++ (the one linked in: Preempt.AStaticallyLinkedCxxRuntime...).
  EXPECT_FALSE(pp::cxx_runtime_in_program());
}

TEST(PreemptConfig, AProgramWithItsOwnSigurgHandlerIsToldWhy) {
  struct sigaction sa {}, old{};
  sa.sa_handler = [](int) {};
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGURG, &sa, &old), 0);
  for (const char* mode : {"signal", "klt"}) {
    try {
      roost::runtime rt(preempting("ws", 1, "1ms", "aligned", mode));
      ADD_FAILURE() << "accepted a program that handles SIGURG itself";
    } catch (const roost::config_error& e) {
      EXPECT_NE(std::string(e.what()).find("SIGURG"), std::string::npos) << e.what();
      // What asked for the handler, as set (the field here; the message said 'signal' for klt too).
      EXPECT_NE(std::string(e.what()).find(std::string("options::preempt='") + mode + "'"), std::string::npos)
          << e.what();
    }
  }
  sigaction(SIGURG, &old, nullptr);
  roost::runtime rt(preempting("ws", 1));  // and once it is gone, preemption works
  rt.run([] { spinners_then_setter(1); });
}

// A handler the program installs after the runtime was made would silently end preemption, and a spinner
// would hang (found by an outside-user campaign). The next run says so instead; with roost's handler
// back, runs preempt again.
TEST(PreemptConfig, AHandlerInstalledAfterTheRuntimeIsAnErrorAtTheNextRun) {
  roost::runtime rt(preempting("ws", 1));
  rt.run([] { spinners_then_setter(1); });
  struct sigaction mine {}, roosts{};
  mine.sa_handler = [](int) {};
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGURG, &mine, &roosts), 0);
  try {
    rt.run([] { spinners_then_setter(1); });
    ADD_FAILURE() << "ran with the program's handler in roost's place";
  } catch (const roost::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("SIGURG"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("options::preempt='signal'"), std::string::npos) << e.what();
  }
  ASSERT_EQ(sigaction(SIGURG, &roosts, nullptr), 0);
  rt.run([] { spinners_then_setter(1); });
}

// A kernel that refuses the timers (a process's timers count against RLIMIT_SIGPENDING): the program runs,
// unpreempted, and is told once why. In a child process, whose limit the test may lower.
TEST(PreemptConfig, AKernelThatRefusesTheTimersIsToldAndTheProgramRuns) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    rlimit none{0, 0};
    if (setrlimit(RLIMIT_SIGPENDING, &none) != 0) _exit(3);
    try {
      for (const char* mode : {"klt", "signal"}) {
        roost::runtime rt(preempting("ws", 2, "1ms", "aligned", mode));
        long sum = 0;
        rt.run([&] {
          roost::task_group g;
          long a = 0, b = 0;
          g.run([&] { a = 20; });
          b = 22;
          g.wait();
          sum = a + b;
        });
        if (sum != 42) _exit(2);
      }
    } catch (...) {
      _exit(4);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string err;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) err.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << err;
  EXPECT_EQ(WEXITSTATUS(status), 0) << err;
  EXPECT_NE(err.find("refused a thread its timer"), std::string::npos) << err;
  EXPECT_NE(err.find("RLIMIT_SIGPENDING"), std::string::npos) << err;
}

TEST(PreemptConfig, TwoRuntimesMayPreemptAtOnceAndTheHandlerGoesWithTheLast) {
  {
    roost::runtime a(preempting("ws", 1));
    roost::runtime b(preempting("ws-help", 2, "200us"));
    a.run([] { spinners_then_setter(1); });
    b.run([] { spinners_then_setter(2); });
  }
  struct sigaction now {};
  sigaction(SIGURG, nullptr, &now);
  EXPECT_TRUE(!(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL);
}

}  // namespace
