// Where a task may move to another worker (another OS thread), and roost::per_worker, which programs that
// keep per-thread values (BOTS's threadprivate counters) use instead of a thread_local.
//
// The rule (docs/cutoffs-migration-per-worker.md): a task runs on one worker between two scheduling points. The scheduling
// points are task_group::wait() (and a group's destructor), tg.run() under a child-first scheduler (ws, hws,
// adws, adws-ml, cab below its boundary, cats while it runs as ws), and parallel_invoke / parallel_for /
// parallel_reduce, which join. tg.run() under ws-help (help-first) never moves the caller.
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <set>
#include <thread>
#include <type_traits>

#include "test_util.hpp"

namespace {

using roost_test::available_schedulers;
using roost_test::opts;

// How often the worker id changed across each kind of point, over a fib-shaped task tree.
struct moves {
  std::atomic<long> at_run{0}, at_wait{0}, between{0}, runs{0}, waits{0};
};

long fib_watch(int n, moves& m) {
  if (n < 2) return n;
  long a = 0;
  roost::task_group tg;
  const int before_run = roost::this_worker_id();
  tg.run([&a, &m, n] { a = fib_watch(n - 1, m); });
  const int after_run = roost::this_worker_id();
  long b = fib_watch(n - 2, m);
  const int before_wait = roost::this_worker_id();
  volatile long spin = 0;  // code with no scheduling point in it: the id cannot change across it
  for (int i = 0; i < 100; ++i) spin = spin + i;
  if (roost::this_worker_id() != before_wait) m.between.fetch_add(1);
  tg.wait();
  const int after_wait = roost::this_worker_id();
  m.runs.fetch_add(1);
  m.waits.fetch_add(1);
  if (after_run != before_run) m.at_run.fetch_add(1);
  if (after_wait != before_wait) m.at_wait.fetch_add(1);
  return a + b;
}

roost::options sim(const std::string& sched, unsigned workers, std::uint64_t seed) {
  roost::options o = opts(sched, workers);
  o.platform = "sim";
  o.topology = "pack:2 l3:1(size=1MiB) core:2 pu:1";
  o.sim_seed = seed;
  return o;
}

// On the simulated platform (a deterministic schedule per seed), ws moves tasks at both kinds of points:
// a thief resumes a stolen continuation after tg.run(), and the last child to end resumes its waiting
// parent on its own worker after wait().
TEST(Migration, WorkFirstTasksMoveAtRunAndAtWait) {
  moves m;
  roost::runtime rt(sim("ws", 4, 1));
  EXPECT_EQ(rt.run([&] { return fib_watch(18, m); }), 2584);
  EXPECT_GT(m.at_run.load(), 0);
  EXPECT_GT(m.at_wait.load(), 0);
  EXPECT_EQ(m.between.load(), 0);
}

// Under every scheduler a task may move at wait(), never between two scheduling points; under ws-help it
// never moves at tg.run() (the caller goes on, the child is queued).
class Migrate : public ::testing::TestWithParam<std::string> {};

TEST_P(Migrate, TheWorkerIdChangesOnlyAtSchedulingPoints) {
  for (std::uint64_t seed : {1, 2, 3}) {
    moves m;
    roost::runtime rt(sim(GetParam(), 4, seed));
    EXPECT_EQ(rt.run([&] { return fib_watch(16, m); }), 987);
    EXPECT_EQ(m.between.load(), 0) << seed;
    if (GetParam() == "ws-help") EXPECT_EQ(m.at_run.load(), 0) << seed;
  }
}

// The calling OS thread, read so that the compiler cannot reuse an earlier read: pthread_self() is declared
// const, and GCC folded two std::this_thread::get_id() calls around a migration into one (the same trap as
// a thread_local whose address is kept across a scheduling point).
__attribute__((noinline)) std::thread::id thread_now() {
  asm volatile("" ::: "memory");
  return std::this_thread::get_id();
}

// The same on this machine's threads, deterministic through a latch: under ws the child runs first on the
// spawning worker and does not end until the parent's continuation ran; the other worker must have stolen
// it, so the parent resumed after tg.run() on another worker, another OS thread.
TEST(Migration, AStolenContinuationResumesOnAnotherThread) {
  roost::runtime rt(opts("ws", 2));
  rt.run([] {
    const int me = roost::this_worker_id();
    const std::thread::id my_thread = thread_now();
    std::atomic<bool> continued{false}, gave_up{false};
    int after = -1;
    std::thread::id after_thread;
    roost::task_group tg;
    tg.run([&] {
      if (!roost_test::wait_until([&] { return continued.load(); })) gave_up = true;
    });
    after = roost::this_worker_id();
    after_thread = thread_now();
    continued = true;
    tg.wait();
    EXPECT_FALSE(gave_up.load());
    EXPECT_NE(after, me);
    EXPECT_NE(after_thread, my_thread);
  });
}

// ---------------------------------------------------------------- per_worker

constexpr int kMaxQueens = 16;
using board = std::array<signed char, kMaxQueens>;

bool fits(const board& b, int row, int col) {
  for (int r = 0; r < row; ++r) {
    const int c = b[r];
    if (c == col || c - col == row - r || col - c == row - r) return false;
  }
  return true;
}

long nqueens_serial(int n, int row, board& b) {
  if (row == n) return 1;
  long count = 0;
  for (int col = 0; col < n; ++col)
    if (fits(b, row, col)) {
      b[row] = static_cast<signed char>(col);
      count += nqueens_serial(n, row + 1, b);
    }
  return count;
}

// BOTS's nqueens with its threadprivate counter: each solution is counted where it is found, in the
// element of the worker that runs it; local() is called anew in every task (a task may have moved).
void nqueens_tasks(int n, int row, board b, roost::per_worker<long>& solutions) {
  if (row == n) {
    ++solutions.local();
    return;
  }
  roost::task_group tg;
  for (int col = 0; col < n; ++col)
    if (fits(b, row, col)) {
      board next = b;
      next[row] = static_cast<signed char>(col);
      tg.run_if(row < n - 3, [n, row, next, &solutions] { nqueens_tasks(n, row + 1, next, solutions); });
    }
  tg.wait();
}

class PerWorker : public ::testing::TestWithParam<std::string> {};

TEST_P(PerWorker, NqueensCountedPerWorkerEqualsTheSerialCount) {
  const int n = roost_test::under_sanitizer() ? 7 : 9;
  board b{};
  const long serial = nqueens_serial(n, 0, b);
  roost::runtime rt(opts(GetParam(), 2));
  roost::per_worker<long> solutions;
  for (int round = 0; round < 3; ++round) {
    solutions.clear();
    rt.run([&] { nqueens_tasks(n, 0, board{}, solutions); });
    EXPECT_EQ(solutions.combine(std::plus<>()), serial);
    EXPECT_GE(solutions.size(), 1u);
    EXPECT_LE(solutions.size(), 2u);  // one element per worker that found a solution
  }
}

INSTANTIATE_TEST_SUITE_P(Schedulers, Migrate, ::testing::ValuesIn(available_schedulers()),
                         roost_test::scheduler_test_name);
INSTANTIATE_TEST_SUITE_P(Schedulers, PerWorker, ::testing::ValuesIn(available_schedulers()),
                         roost_test::scheduler_test_name);

// A factory that spawns passes a scheduling point: the caller may go on on another worker, and its worker
// may make its element meanwhile. Elements were then made twice for one worker, or one was handed to a task
// on another worker (adws, adws-ml, numa; a data race under TSan: an outside-user campaign).
TEST_P(PerWorker, AFactoryThatSpawnsStillGivesOneElementPerWorker) {
  constexpr unsigned kWorkers = 3;
  roost::runtime rt(opts(GetParam(), kWorkers));
  roost::per_worker<long> pw([] {
    std::atomic<long> s{0};
    roost::parallel_for(0, 64, 1, [&](int lo, int hi) { s.fetch_add(hi - lo); });
    return s.load() - 64;  // 0, after a scheduling point
  });
  std::atomic<int> moved{0};
  for (int round = 0; round < 5; ++round) {
    pw.clear();
    rt.run([&] {
      roost::parallel_for(0, 256, 1, [&](int lo, int hi) {
        for (int i = lo; i < hi; ++i) {
          long& mine = pw.local();
          if (&mine != &pw.local()) moved.fetch_add(1);  // no scheduling point in between
          ++mine;
        }
      });
    });
    EXPECT_LE(pw.size(), kWorkers) << "round " << round;
    EXPECT_EQ(pw.combine(std::plus<>()), 256) << "round " << round;
  }
  EXPECT_EQ(moved.load(), 0);
}

// A callable that converts to T is a factory still: per_worker<bool>([] { return false; }) took the lambda,
// through its function pointer, for the initial value true. combine needs no assignment operator.
TEST(PerWorkerApi, ACallableThatConvertsToTIsAFactoryAndCombineNeedsNoAssignment) {
  roost::per_worker<bool> flags([] { return false; });
  EXPECT_FALSE(flags.combine(std::logical_or<>()));
  roost::runtime rt(opts("ws", 2));
  rt.run([&] { EXPECT_FALSE(flags.local()); });
  roost::per_worker<bool> set(true);
  EXPECT_TRUE(set.combine(std::logical_and<>()));
  struct fixed {
    const int x;
  };
  roost::per_worker<fixed> f([] { return fixed{1}; });
  rt.run([&] {
    roost::parallel_for(0, 8, 1, [&](int, int) { (void)f.local(); });
  });
  EXPECT_EQ(f.combine([](const fixed& a, const fixed& b) { return fixed{a.x + b.x}; }).x, static_cast<int>(f.size()));
}

// Elements are made where they stay: T need not be movable, as with tbb::enumerable_thread_specific (a
// per-worker histogram of std::atomic counters did not compile; an outside-user campaign).
TEST(PerWorkerApi, AnElementTypeThatCannotMoveWorks) {
  struct histogram {
    std::atomic<long> bins[4] = {};
  };
  static_assert(!std::is_move_constructible_v<histogram>);
  roost::per_worker<histogram> h;
  roost::runtime rt(opts("ws", 2));
  rt.run([&] {
    roost::parallel_for(0, 1000, 1, [&](int lo, int hi) {
      for (int i = lo; i < hi; ++i) h.local().bins[i % 4].fetch_add(1, std::memory_order_relaxed);
    });
  });
  long total[4] = {};
  h.for_each([&](const histogram& e) {
    for (int b = 0; b < 4; ++b) total[b] += e.bins[b].load();
  });
  for (int b = 0; b < 4; ++b) EXPECT_EQ(total[b], 250) << "bin " << b;
  EXPECT_GE(h.size(), 1u);
}

TEST(PerWorkerApi, ElementsStartFromTheInitialValueOrTheFactory) {
  roost::per_worker<int> a(5);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.combine(std::plus<>()), 5);  // no element: what a fresh one would hold
  int made = 0;
  roost::per_worker<std::vector<int>> v([&made] {
    ++made;
    return std::vector<int>(3, 1);
  });
  roost::runtime rt(opts("ws", 1));
  rt.run([&] {
    a.local() += 1;
    EXPECT_EQ(v.local().size(), 3u);
    v.local().push_back(2);  // the same element again
  });
  EXPECT_EQ(made, 1);
  EXPECT_EQ(a.combine(std::plus<>()), 6);
  EXPECT_EQ(v.size(), 1u);
  std::size_t total = 0;
  std::as_const(v).for_each([&](const std::vector<int>& e) { total += e.size(); });
  EXPECT_EQ(total, 4u);
  v.clear();
  EXPECT_EQ(v.size(), 0u);
  rt.run([&] { EXPECT_EQ(v.local().size(), 3u); });  // a fresh element after clear()
  EXPECT_EQ(made, 2);
}

// Outside any task the calling thread has an element of its own, apart from the one it uses as worker 0
// inside runtime::run; elements of different threads lie at least a padded node apart.
TEST(PerWorkerApi, OutsideATaskEachThreadHasItsOwnElement) {
  roost::per_worker<long> c;
  c.local() = 10;
  roost::runtime rt(opts("ws", 1));
  rt.run([&] { c.local() = 1; });
  long* other = nullptr;
  std::thread t([&] {
    c.local() = 100;
    other = &c.local();
  });
  t.join();
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(c.combine(std::plus<>()), 111);
  const auto gap = reinterpret_cast<std::intptr_t>(&c.local()) - reinterpret_cast<std::intptr_t>(other);
  EXPECT_GE(gap < 0 ? -gap : gap, 128);
}

// Runtimes made one after another, and threads started one after another: each worker and each thread gets
// a fresh element. A destroyed runtime's worker's address, and an ended thread's thread-local storage, are
// often the next one's, and were the key: 50 runtimes in turn made 23 elements, the rest found a dead
// worker's value (an outside-user campaign).
TEST(PerWorkerApi, LaterRuntimesAndThreadsGetFreshElements) {
  int made = 0;
  roost::per_worker<int> pw([&made] {
    ++made;
    return 0;
  });
  constexpr int kRuntimes = 50, kThreads = 20;
  int stale = 0;
  for (int i = 0; i < kRuntimes; ++i) {
    roost::runtime rt(opts("ws", 1));
    rt.run([&] { stale += pw.local()++ != 0; });
  }
  for (int i = 0; i < kThreads; ++i) std::thread([&] { stale += pw.local()++ != 0; }).join();
  EXPECT_EQ(stale, 0);
  EXPECT_EQ(made, kRuntimes + kThreads);
  EXPECT_EQ(pw.size(), static_cast<std::size_t>(kRuntimes + kThreads));
  EXPECT_EQ(pw.combine(std::plus<>()), kRuntimes + kThreads);
}

// combine calls the factory only when there is no element: a factory with an effect (a counter, a handle)
// ran once more at every combine.
TEST(PerWorkerApi, CombineCallsTheFactoryOnlyWithoutElements) {
  int made = 0;
  roost::per_worker<int> pw([&made] {
    ++made;
    return 7;
  });
  EXPECT_EQ(pw.combine(std::plus<>()), 7);  // none: what a fresh one holds
  EXPECT_EQ(made, 1);
  roost::runtime rt(opts("ws", 1));
  rt.run([&] { pw.local() += 1; });
  EXPECT_EQ(made, 2);
  EXPECT_EQ(pw.combine(std::plus<>()), 8);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(pw.combine([](int& acc, const int& v) { return acc += v; }), 8);  // an op that adds into its first
}

// Two runtimes at once, each with its own worker 0 and 1, on one per_worker: every worker of each has its
// own element (the ids collide, the workers do not).
TEST(PerWorkerApi, WorkersOfTwoRuntimesAtOnceHaveTheirOwnElements) {
  const int n = roost_test::under_sanitizer() ? 6 : 8;
  board b{};
  const long serial = nqueens_serial(n, 0, b);
  roost::per_worker<long> solutions;
  auto one = [&] {
    roost::runtime rt(opts("ws", 2));
    rt.run([&] { nqueens_tasks(n, 0, board{}, solutions); });
  };
  std::thread t1(one), t2(one);
  t1.join();
  t2.join();
  EXPECT_EQ(solutions.combine(std::plus<>()), 2 * serial);
  EXPECT_LE(solutions.size(), 4u);
}

}  // namespace
