// The floating-point environment a task computes with (roost/detail/fp_control.hpp; docs/user-guide.md,
// "Floating-point environment"): under every scheduler, natively and simulated, a task computes with the
// rounding mode, flush-to-zero and denormals-are-zero of the code that spawned it, wherever it runs. Before
// this, a child another worker took ran with that worker's thread's state: a program that set a rounding
// mode before runtime::run, or in its root task, computed another result under ws-help, cats and numa.
#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <atomic>
#include <chrono>
#include <cfenv>
#include <cstdint>
#include <string>
#include <vector>

#include "roost/detail/ws_deque.hpp"
#include "roost/roost.hpp"
#include "test_util.hpp"

namespace {

using roost_test::available_schedulers;

// What a task computes with: MXCSR's control bits (SSE: rounding, FZ, DAZ, masks) and the x87 unit's
// rounding mode (fegetround reads the x87 control word; fesetround sets both units).
struct fp_env {
  unsigned mxcsr;
  int round;
  bool operator==(const fp_env&) const = default;
};
fp_env now() { return {_mm_getcsr() & 0xffc0u, std::fegetround()}; }

// A state no thread of a runtime has unless it is given it: rounding toward `mode` in both units, and, when
// `flush`, flush-to-zero and denormals-are-zero. Restored when the scope ends.
class scoped_env {
 public:
  explicit scoped_env(int mode, bool flush = true) : mxcsr_(_mm_getcsr()), round_(std::fegetround()) {
    std::fesetround(mode);
    if (flush) _mm_setcsr(_mm_getcsr() | 0x8040u);  // FZ | DAZ
  }
  ~scoped_env() {
    _mm_setcsr(mxcsr_);
    std::fesetround(round_);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  unsigned mxcsr_;
  int round_;
};

roost::options two_workers(const std::string& sched) {
  roost::options o = roost_test::opts(sched, 2);
  o.adws_steal = roost::adws_stealing::on;  // the halves below wait for each other: never a run without steals
  return o;
}

// Serves the worker's queues once: a spawn and a join of nothing. A push is where a thief's request is
// served (the deque's share), so a task that waits for another task polls with it.
void poll_queues() {
  roost::task_group g;
  g.run([] {});
  g.wait();
}

// Runs `half` twice at the same time, on both workers: each copy checks, says it started and waits for
// the other, polling. The caller's task runs one; the other is its child (help-first: the child is what
// the other worker takes) or the rest of the caller (work-first: its continuation is), or dealt there
// (ADWS, by the hints). So under every scheduler a task started by the other worker runs `check`.
template <class Check>
void on_both_workers(const Check& check) {
  std::atomic<int> started{0};
  auto half = [&] {
    check();
    started.fetch_add(1);
    while (started.load() < 2) poll_queues();
    check();
  };
  roost::task_group tg(2.0);
  tg.run(half, 1.0);
  half();
  tg.wait();
}

// Every task of a parallel region: a loop's pieces (the two-way join's halves) and a tree of task_group
// children, and, with `both`, the two halves above (which need the other worker free).
template <class Check>
void parallel_region(const Check& check, bool both = true) {
  if (both) on_both_workers(check);
  roost::parallel_for(0, 512, 1, [&](int) { check(); });
  struct tree {
    static void grow(const Check& c, int depth) {
      c();
      if (depth == 0) return;
      roost::task_group g;
      g.run([&c, depth] { grow(c, depth - 1); });
      grow(c, depth - 1);
      g.wait();
      c();
    }
  };
  tree::grow(check, 8);
}

class FpEnv : public ::testing::TestWithParam<std::string> {};

}  // namespace

// The state of the thread that calls run(), set after the runtime made its workers: every task of the run
// computes with it. A later run with the default state gets the default everywhere, whatever the workers
// kept of the first.
TEST_P(FpEnv, EveryTaskComputesWithTheStateOfTheThreadThatCallsRun) {
  roost::runtime rt(two_workers(GetParam()));
  for (int rep = 0; rep < 3; ++rep) {
    std::atomic<long> wrong{0}, checks{0};
    fp_env want{};
    {
      scoped_env up(FE_UPWARD);
      want = now();
      rt.run([&] { parallel_region([&] { ++checks; if (now() != want) ++wrong; }); });
    }
    EXPECT_EQ(wrong.load(), 0) << "of " << checks.load() << " tasks, rounding upward with FZ and DAZ";
    wrong = 0;
    want = now();
    rt.run([&] { parallel_region([&] { if (now() != want) ++wrong; }); });
    EXPECT_EQ(wrong.load(), 0) << "the default state in the next run";
  }
}

// A task that sets a state before its parallel work gives it to every task it spawns, as the serial
// program does, and the thread that called run() keeps its own.
TEST_P(FpEnv, ATaskGivesItsStateToTheTasksItSpawns) {
  roost::runtime rt(two_workers(GetParam()));
  const fp_env caller = now();
  for (int mode : {FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO}) {
    std::atomic<long> wrong{0}, checks{0};
    rt.run([&] {
      scoped_env set(mode, mode != FE_TOWARDZERO);
      const fp_env want = now();
      parallel_region([&] { ++checks; if (now() != want) ++wrong; });
    });
    EXPECT_EQ(wrong.load(), 0) << "of " << checks.load() << " tasks, rounding mode " << mode;
    EXPECT_EQ(now(), caller);
  }
}

// A child that changes its own state (and restores it before it ends) while the rest of its spawner runs
// elsewhere: the spawner goes on with the state it had at the spawn. Under work-first schedulers the rest of
// the spawner is the continuation another worker takes, resumed with the state saved at the spawn.
TEST_P(FpEnv, AChildsOwnStateStaysWithTheChild) {
  roost::runtime rt(two_workers(GetParam()));
  for (int rep = 0; rep < 3; ++rep) {
    std::atomic<long> wrong{0};
    rt.run([&] {
      scoped_env up(FE_UPWARD);
      const fp_env spawner = now();
      std::atomic<int> started{0};
      roost::task_group tg(2.0);
      tg.run([&] {
        scoped_env down(FE_DOWNWARD, false);
        const fp_env mine = now();
        started.fetch_add(1);
        while (started.load() < 2) poll_queues();
        if (now() != mine) ++wrong;
      }, 1.0);
      if (now() != spawner) ++wrong;
      started.fetch_add(1);
      while (started.load() < 2) poll_queues();
      if (now() != spawner) ++wrong;
      tg.wait();
      if (now() != spawner) ++wrong;
    });
    EXPECT_EQ(wrong.load(), 0);
  }
}

// Two regions side by side, one rounding upward and one downward, each set at the start of its task: every
// task of each computes with its region's state. A worker that takes a task of the other region, or resumes
// one, goes back to its own region's tasks afterwards (under ADWS a dealt task runs before the worker's own:
// a review found those then ran with the other region's state).
TEST_P(FpEnv, TwoRegionsSideBySideKeepTheirOwnStates) {
  roost::runtime rt(two_workers(GetParam()));
  for (int rep = 0; rep < 5; ++rep) {
    std::atomic<long> wrong{0}, checks{0};
    rt.run([&] {
      std::atomic<int> started{0};
      auto region = [&](int mode) {
        scoped_env set(mode, mode == FE_UPWARD);
        const fp_env want = now();
        started.fetch_add(1);
        while (started.load() < 2) poll_queues();
        parallel_region([&] { ++checks; if (now() != want) ++wrong; }, false);
      };
      roost::task_group tg(2.0);
      tg.run([&] { region(FE_DOWNWARD); }, 1.0);
      region(FE_UPWARD);
      tg.wait();
    });
    EXPECT_EQ(wrong.load(), 0) << "of " << checks.load() << " tasks";
  }
}

INSTANTIATE_TEST_SUITE_P(Schedulers, FpEnv, ::testing::ValuesIn(available_schedulers()),
                         roost_test::scheduler_test_name);

// The same on the simulated platform, on a virtual machine of four workers (every worker a fiber of the
// simulator's threads): the loop's pieces and the tree's children that other simulated workers take.
class FpEnvSim : public ::testing::TestWithParam<std::string> {};

TEST_P(FpEnvSim, EveryTaskComputesWithItsSpawnersState) {
  roost::options o;
  o.scheduler = GetParam();
  o.platform = "sim";
  o.topology = "pack:2 l3:1(size=4MiB) l2:2(size=256KiB) core:1 pu:1";
  o.sim_seed = 7;
  roost::runtime rt(o);
  std::atomic<long> wrong{0}, checks{0};
  fp_env want{};
  {
    scoped_env up(FE_UPWARD);
    want = now();
    rt.run([&] {
      roost::parallel_for(0, 1024, 1, [&](int) { ++checks; if (now() != want) ++wrong; });
    });
  }
  rt.run([&] {
    scoped_env down(FE_DOWNWARD);
    const fp_env mine = now();
    roost::parallel_for(0, 1024, 1, [&](int) { ++checks; if (now() != mine) ++wrong; });
  });
  EXPECT_EQ(wrong.load(), 0) << "of " << checks.load() << " tasks";
}

INSTANTIATE_TEST_SUITE_P(Schedulers, FpEnvSim, ::testing::ValuesIn(available_schedulers()),
                         roost_test::scheduler_test_name);

// The children a worker runs while their spawner is preempted (one worker: the spawner spins until they ran):
// under signal-yield the tick's handler starts with the kernel's default state, and under KLT-switching
// another kernel thread serves the worker meanwhile; either way they start with the spawner's state. Two
// children: the first push into an empty deque is shared, and stamped, at once; the second stays private.
TEST(FpEnvPreempt, ChildrenRunWhileTheirSpawnerIsPreemptedGetItsState) {
  for (const char* mode : {"signal", "klt"}) {
    roost::options o = roost_test::opts("ws-help", 1);
    o.preempt = mode;
    o.preempt_interval = "1ms";
    roost::runtime rt(o);
    for (int rep = 0; rep < 3; ++rep) {
      std::atomic<int> ran{0};
      std::atomic<long> wrong{0};
      rt.run([&] {
        scoped_env up(FE_UPWARD);
        const fp_env want = now();
        roost::task_group g;
        for (int i = 0; i < 2; ++i)
          g.run([&] {
            if (now() != want) ++wrong;
            ran.fetch_add(1, std::memory_order_release);
          });
        while (ran.load(std::memory_order_acquire) < 2) {
        }
        g.wait();
      });
      EXPECT_EQ(wrong.load(), 0) << "ROOST_PREEMPT=" << mode;
    }
    EXPECT_GT(rt.preemptions(), 0u) << mode;
  }
}

// runtime::run returns with the floating-point state its caller called it with, whatever its thread ran
// meanwhile. Under KLT-switching the caller's thread may serve as another worker's spare while a task it ran
// is preempted, and the spare takes the preempted task's state (fp_at_handover) into the thread's own
// context, where run returns: with children that set a state of their own and are preempted in it, up to a
// third of the runs at two workers returned with a child's rounding mode (an outside-user campaign), and the
// next runs' roots started with it. Each child here spins until a tick preempted some task while it holds its
// own state: ordered by the count of preemptions, not by time (the 10 s bound only guards against a hang).
TEST(FpEnvPreempt, RunReturnsWithTheCallersStateWhateverItsThreadRan) {
  for (const char* mode : {"signal", "klt"}) {
    for (const char* sched : {"ws", "ws-help"}) {
      roost::options o = roost_test::opts(sched, 2);
      o.preempt = mode;
      o.preempt_interval = "100us";
      roost::runtime rt(o);
      scoped_env up(FE_UPWARD);
      const fp_env caller = now();
      int roots_otherwise = 0, returns_otherwise = 0;
      // Only a guard against a hang where no tick comes (EXPECT_GT below then fails), for all runs together.
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      for (int run = 0; run < 30; ++run) {
        rt.run([&] {
          if (now() != caller) ++roots_otherwise;
          roost::task_group g;
          for (int i = 0; i < 8; ++i)
            g.run([&] {
              scoped_env down(FE_DOWNWARD, false);  // the child's own state, restored at its end
              const unsigned long long seen = rt.preemptions();
              while (rt.preemptions() == seen && std::chrono::steady_clock::now() < give_up) {
              }
            });
          g.wait();
        });
        if (now() != caller) {
          ++returns_otherwise;
          _mm_setcsr((_mm_getcsr() & ~0xffc0u) | caller.mxcsr);  // each run counted on its own
          std::fesetround(caller.round);
        }
      }
      EXPECT_EQ(returns_otherwise, 0) << "ROOST_PREEMPT=" << mode << " ROOST_SCHED=" << sched;
      EXPECT_EQ(roots_otherwise, 0) << "ROOST_PREEMPT=" << mode << " ROOST_SCHED=" << sched;
      EXPECT_GT(rt.preemptions(), 0u) << mode << " " << sched;
    }
  }
}

// The deque's share stamps what it makes stealable with the owner's state, and only fresh frames: a fiber
// carries its state in its context, and a frame stamped before (a policy's push) keeps its stamp.
TEST(FpEnvDeque, AShareStampsTheFreshFramesItPublishesWithTheOwnersState) {
  using roost::detail::job;
  if (!roost::detail::fp_control::kSupported) GTEST_SKIP() << "no floating-point state is moved here";
  std::vector<job> jobs(6);
  for (job& j : jobs) j.set_kind(job::kind::fresh);
  jobs[1].set_kind(job::kind::resume);
  std::uint64_t earlier = 0;
  {
    scoped_env down(FE_DOWNWARD, false);
    jobs[2].stamp_fp_state();
    earlier = jobs[2].fp_state();
  }
  roost::detail::ws_deque<job> d(16);
  // The first push into an empty deque is shared at once (Lace's rule), with the state of now.
  const std::uint64_t first = roost::detail::fp_control::capture();
  for (int i = 0; i < 5; ++i) d.push(&jobs[i]);
  EXPECT_EQ(jobs[0].fp_state(), first);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(jobs[i].fp_state(), i == 2 ? earlier : 0u) << "a private push stamps nothing";
  std::uint64_t owner = 0;
  {
    scoped_env up(FE_UPWARD);
    owner = roost::detail::fp_control::capture();
    d.ask_to_share();
    d.push(&jobs[5]);  // the request is served here: the older half of the private part, jobs 1 to 3
  }
  EXPECT_NE(owner, first);
  EXPECT_NE(owner, earlier);
  EXPECT_EQ(jobs[3].fp_state(), owner);
  EXPECT_EQ(jobs[1].fp_state(), 0u) << "a fiber is not stamped";
  EXPECT_EQ(jobs[2].fp_state(), earlier) << "a stamp is kept";
  EXPECT_EQ(jobs[4].fp_state(), 0u) << "still private";
  EXPECT_EQ(jobs[3].k(), job::kind::fresh) << "the kind is kept beside the stamp";
  EXPECT_EQ(d.steal(), &jobs[0]);
}

// Before its thread takes another task's state, a worker stamps its own frames still private with the state
// they were pushed under (engine.hpp, apply_fp_state: ADWS runs a dealt task before them).
TEST(FpEnvDeque, StampingThePrivatePartLeavesSharedAndStampedFramesAlone) {
  using roost::detail::job;
  if (!roost::detail::fp_control::kSupported) GTEST_SKIP() << "no floating-point state is moved here";
  std::vector<job> jobs(4);
  roost::detail::ws_deque<job> d(16);
  for (job& j : jobs) d.push(&j);  // the first is shared at once, and stamped with the state of now
  const std::uint64_t first = jobs[0].fp_state();
  jobs[2].set_kind(job::kind::resume);
  scoped_env up(FE_UPWARD);
  const std::uint64_t mine = roost::detail::fp_control::capture();
  d.stamp_private(mine);
  EXPECT_EQ(jobs[0].fp_state(), first) << "shared before: kept";
  EXPECT_EQ(jobs[1].fp_state(), mine);
  EXPECT_EQ(jobs[2].fp_state(), 0u) << "a fiber";
  EXPECT_EQ(jobs[3].fp_state(), mine);
}

// A frame without a stamp gives no state: applying none changes nothing (its MXCSR would unmask every
// floating-point exception).
TEST(FpEnvDeque, ApplyingNoStateChangesNothing) {
  scoped_env up(FE_UPWARD);
  const fp_env before = now();
  roost::detail::fp_control::apply(0);
  EXPECT_EQ(now(), before);
}

namespace {
// The FpEnvAdws tests' machine: three adws workers, whose steps each wait for the one before on a flag.
roost::options three_adws_workers(roost::adws_stealing steal) {
  roost::options o = roost_test::opts("adws", 3);
  o.adws_steal = steal;
  return o;
}
void spin_until(const std::atomic<bool>& flag) {
  while (!flag.load(std::memory_order_acquire)) _mm_pause();
}
// A two-way join whose second half stays private on the queue the worker's joins push onto, inside one whose
// second half, pushed first, is shared at once (stamped with the state of that moment). The inner first half
// says `ready` and waits for `go`, by when a job waits in the worker's mailbox: the inner join then falls to
// the engine's, which runs that job before `own`.
template <class Own, class Outer>
void private_half_after_the_mailbox(std::atomic<bool>& ready, const std::atomic<bool>& go, Own&& own, Outer&& outer) {
  roost::parallel_invoke(
      [&] {
        roost::parallel_invoke(
            [&] {
              ready.store(true, std::memory_order_release);
              spin_until(go);
            },
            own);
      },
      outer);
}
}  // namespace

// ADWS runs a search-root task dealt to a worker's mailbox before that worker's own frames still private
// (adws.hpp, deliver; engine.hpp, apply_fp_state). Three workers; the root R on worker 0 rounds upward (A)
// and spawns D work-first, which rounds downward (B) and deals: X to worker 2 (a sliver of its region, to
// its migration queue: X keeps worker 2 busy, so worker 1 is the only thief), then S0 to worker 1's mailbox
// (range [1.5, 3): a search root), whose end activates S0's node, so that worker 1 steals R's continuation
// from worker 0. There R (state A) pushes two halves of two-way joins: the first push is shared at once,
// the second stays private. D joins S0's group (its range back whole, searching again) and deals S to
// worker 1's mailbox; R's inner join then falls to the engine's, which runs S (state B) first and R's
// private half afterwards: that half must compute with A, the state it was pushed under. Every step waits
// for the one before through atomics, each taken by the one worker that can take it.
TEST(FpEnvAdws, OwnPrivateFrameKeepsItsStateAfterADealtSearchRootRanFirst) {
  if (!roost::detail::fp_control::kSupported) GTEST_SKIP() << "no floating-point state is moved here";
  roost::runtime rt(three_adws_workers(roost::adws_stealing::on));
  for (int rep = 0; rep < 5; ++rep) {
    std::atomic<bool> x_started{false}, r_stolen{false}, d_rejoined{false}, t_ready{false}, dealt{false},
        release_x{false}, s_ran{false};
    fp_env a{}, b{}, s_env{}, own_env{}, outer_env{};
    int r_worker = -1, s_worker = -1, own_worker = -1;
    bool own_after_s = false;
    rt.run([&] {
      scoped_env up(FE_UPWARD);  // A
      a = now();
      roost::task_group gd(1.0);
      gd.run([&] {  // D: the whole range [0, 3), work-first on worker 0; R's continuation waits in its deque
        scoped_env down(FE_DOWNWARD, false);  // B
        b = now();
        roost::task_group gx(1.0);
        gx.run([&] {  // X: [3 - 3e-5, 3), worker 2's migration queue
          x_started.store(true, std::memory_order_release);
          spin_until(release_x);
        }, 0.0);
        spin_until(x_started);  // no node is active yet: only worker 2 can take X
        {
          roost::task_group ge(2.0);
          ge.run([] {}, 1.0);  // S0: [1.5, 3), worker 1's mailbox; its end activates its node
          spin_until(r_stolen);  // only worker 1 can steal R's continuation (worker 2 runs X)
          ge.wait();             // D's range back whole, searching again
        }
        d_rejoined.store(true, std::memory_order_release);
        spin_until(t_ready);
        roost::task_group gs(2.0);
        gs.run([&] {  // S: [1.5, 3) again, worker 1's mailbox, stamped with B
          s_env = now();
          s_worker = roost::this_worker_id();
          s_ran.store(true, std::memory_order_release);
        }, 1.0);
        dealt.store(true, std::memory_order_release);
        gs.wait();
        release_x.store(true, std::memory_order_release);
        gx.wait();
      }, 1.0);
      // R's continuation, taken by worker 1.
      r_worker = roost::this_worker_id();
      r_stolen.store(true, std::memory_order_release);
      spin_until(d_rejoined);  // the requests to share that D's join made reach the first push below
      private_half_after_the_mailbox(
          t_ready, dealt,  // S waits in the mailbox by then
          [&] {            // R's own frame, private: run after S
            own_env = now();
            own_worker = roost::this_worker_id();
            own_after_s = s_ran.load(std::memory_order_acquire);
          },
          [&] { outer_env = now(); });
      gd.wait();
    });
    EXPECT_NE(a, b);
    EXPECT_EQ(r_worker, 1) << "rep " << rep;
    EXPECT_EQ(s_worker, 1) << "rep " << rep;
    EXPECT_EQ(s_env, b) << "rep " << rep << ": the dealt task computes with its spawner's state";
    EXPECT_TRUE(own_after_s) << "rep " << rep << ": the dealt task ran first";
    EXPECT_EQ(own_env, a) << "rep " << rep << ": R's own frame (worker " << own_worker
                          << ") computes with the state it was pushed under";
    EXPECT_EQ(outer_env, a) << "rep " << rep;
  }
}

// The same for a frame kept private at the migration queue's own end (adws.hpp, stamp_own_private). While a
// worker runs migrated work (taken from its migration queue: use_mig), its inline joins push their halves
// there (abi.hpp, join_queue); when it then takes its mailbox, take_own_work clears use_mig and names the
// deque as its join queue, and those frames were left unstamped. A fresh search root cannot reach worker 1's
// mailbox while migrated work of worker 1 runs (both ranges would hold a part of [1, 2): only a dealer on
// worker 0 deals to worker 1, and the live tasks' ranges are disjoint), so the mailbox job here is a search
// root coming back: return migration (adws.hpp, after_join and hand_over), whose fiber computes with B.
// Three workers, stealing off (no thief, and no sleeper asks a migration queue to share: has_visible_work).
// The root R (worker 0, A) deals S0 under B to worker 1's mailbox (range [1.5, 3)) and, once S0 started, M
// under A to worker 1's migration queue ([1.125, 1.5): one worker's), then ends its search (a plain group),
// whose requests to share reach worker 1's migration queue before M pushes anything. S0 deals Y, then Z, to
// worker 2's migration queue (slivers of its range, in groups of their own) and waits for Y's group: it
// suspends, and worker 1 takes M from its migration queue. M (A) pushes two halves of two-way joins onto the
// migration queue's own end: the first is shared (Lace's rule: the pop that found that end empty asked it to
// share its next push), the second stays private. Y ends on worker 2, whose end hands S0 back to worker 1's
// mailbox (S0's group's range starts there), and then Z, behind Y in worker 2's queue, says so. M's inner join
// then falls to the engine's, which resumes S0 (B) first and runs M's private half afterwards: that half must
// compute with A, the state it was pushed under. Every step waits for the one before through atomics, each
// taken by the one worker that can take it.
TEST(FpEnvAdws, MigrationQueueFrameKeepsItsStateAfterAReturnedSearchRootRanFirst) {
  if (!roost::detail::fp_control::kSupported) GTEST_SKIP() << "no floating-point state is moved here";
  roost::runtime rt(three_adws_workers(roost::adws_stealing::off));
  for (int rep = 0; rep < 5; ++rep) {
    std::atomic<bool> s0_started{false}, r_search_ended{false}, t_ready{false}, handed{false}, s0_resumed{false};
    fp_env a{}, b{}, s0_env{}, s0_resumed_env{}, m_env{}, own_env{}, outer_env{};
    int s0_worker = -1, s0_resumed_worker = -1, m_worker = -1, y_worker = -1, z_worker = -1, own_worker = -1;
    bool own_after_s0 = false;
    rt.run([&] {
      scoped_env up(FE_UPWARD);  // A
      a = now();
      roost::task_group g0(2.0);
      {
        scoped_env down(FE_DOWNWARD, false);  // B: S0 is stamped with it
        b = now();
        g0.run([&] {  // S0: [1.5, 3), worker 1's mailbox
          s0_env = now();
          s0_worker = roost::this_worker_id();
          s0_started.store(true, std::memory_order_release);
          roost::task_group gy(1.0), gz(1.0);
          gy.run([&] {  // Y: [3 - 1.5e-5, 3), worker 2's migration queue
            y_worker = roost::this_worker_id();
            spin_until(t_ready);
          }, 0.0);  // its end hands S0 back to worker 1's mailbox (return migration)
          gz.run([&] {  // Z: a sliver below Y's, worker 2's migration queue, behind Y
            z_worker = roost::this_worker_id();
            handed.store(true, std::memory_order_release);
          }, 0.0);
          gy.wait();  // ends S0's search; S0 suspends, and worker 1 takes M
          s0_resumed_worker = roost::this_worker_id();
          s0_resumed_env = now();
          s0_resumed.store(true, std::memory_order_release);
          gz.wait();
        }, 1.0);
      }
      spin_until(s0_started);  // worker 1 took S0 from its mailbox: M cannot be taken before it
      roost::task_group gm(1.0);
      gm.run([&] {  // M: [1.125, 1.5), one worker's range: worker 1's migration queue, stamped with A
        m_env = now();
        m_worker = roost::this_worker_id();
        spin_until(r_search_ended);
        private_half_after_the_mailbox(
            t_ready, handed,  // S0 waits in the mailbox by then
            [&] {             // M's own frame, private at the migration queue's own end: run after S0
              own_env = now();
              own_worker = roost::this_worker_id();
              own_after_s0 = s0_resumed.load(std::memory_order_acquire);
            },
            [&] { outer_env = now(); });  // the first push: shared at once, stamped with A
      }, 0.25);
      {
        roost::task_group plain;  // no total work: R's search ends here, and its node's requests go out
        plain.run([] {});
        plain.wait();
      }
      r_search_ended.store(true, std::memory_order_release);
      gm.wait();
      g0.wait();
    });
    EXPECT_NE(a, b);
    EXPECT_EQ(s0_worker, 1) << "rep " << rep;
    EXPECT_EQ(s0_resumed_worker, 1) << "rep " << rep << ": S0 came back to worker 1";
    EXPECT_EQ(s0_env, b) << "rep " << rep << ": S0 computes with its spawner's state";
    EXPECT_EQ(s0_resumed_env, b) << "rep " << rep;
    EXPECT_EQ(m_worker, 1) << "rep " << rep;
    EXPECT_EQ(m_env, a) << "rep " << rep;
    EXPECT_EQ(y_worker, 2) << "rep " << rep;
    EXPECT_EQ(z_worker, 2) << "rep " << rep;
    EXPECT_EQ(own_worker, 1) << "rep " << rep;
    EXPECT_TRUE(own_after_s0) << "rep " << rep << ": S0 ran first";
    EXPECT_EQ(own_env, a) << "rep " << rep << ": M's own frame (worker " << own_worker
                          << ") computes with the state it was pushed under";
    EXPECT_EQ(outer_env, a) << "rep " << rep;
  }
}

// A program that unmasks the inexact exception (feenableexcept(FE_INEXACT), glibc) can make a runtime and run
// a scheduler whose own code computes in integers: every runtime's construction divided in double once (the
// spin-wait calibration), and died of SIGFPE under every scheduler (an outside-user campaign). The user guide
// lists the code that still computes in double (adws's ranges, cats's profile, numa's dealing of a declared
// child, the tracer, the simulated platform). In a child process: the masks stay out of the other tests.
TEST(FpEnvTrapsDeathTest, ARuntimeIsMadeAndRunsWithTheInexactExceptionUnmasked) {
  if (roost_test::under_sanitizer()) GTEST_SKIP() << "a sanitizer's own runtime is not roost's to keep exact";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const char* sched : {"ws", "ws-help", "hws", "cab"}) {
    EXPECT_EXIT(
        {
          feenableexcept(FE_INEXACT | FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
          long r = 0;
          {
            roost::runtime rt(roost_test::opts(sched, 2));
            r = rt.run([] { return roost_test::fib_tasks(18); });
          }  // destroyed with the exceptions unmasked too
          std::exit(r == 2584 ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "")
        << sched;
  }
}
