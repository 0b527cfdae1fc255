// The two-way join (roost/detail/fork_join2.hpp) behind parallel_invoke(f, g), parallel_for and
// parallel_reduce, under every available scheduler: it runs inline under ws, ws-help and hws (and adws
// outside a search) and through a task_group elsewhere, and must mean the same everywhere: both halves run exactly once and before the
// join returns, a stolen half is joined, the first exception leaves and the other half still runs, hooks
// see the halves as tasks, and misuse is a clear error.
#include <gtest/gtest.h>
#include <memory>

#include <algorithm>
#include <array>
#include <atomic>
#include <utility>
#include <mutex>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "roost/roost.hpp"
#include "test_util.hpp"

namespace {

using roost_test::available_schedulers;
using roost_test::opts;

long fib(int n) {
  if (n < 2) return n;
  long a = -1, b = -1;
  roost::parallel_invoke([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

struct half_error : std::runtime_error {
  int which;
  explicit half_error(int w) : std::runtime_error("half threw"), which(w) {}
};

class Join : public ::testing::TestWithParam<std::string> {};

// Each half throws in turn, then both, through two_way(first, second), a two-way join of the two halves
// (parallel_invoke's or roost::join's): the thrower's exception reaches the caller, the first half's when both
// throw (the serial program's, under every scheduler), and the other half has run all the same (as a
// task_group's children do when an exception destroys the group). after(thrower, rep) checks the rest.
template <class TwoWay, class After>
void expect_the_serial_programs_exception(roost::runtime& rt, TwoWay two_way, After after) {
  for (int thrower : {0, 1, 2}) {  // 0: the first half, 1: the second, 2: both
    for (int rep = 0; rep < 20; ++rep) {
      std::atomic<int> ran{0};
      const auto half = [&](int i) {
        ran.fetch_add(1);
        if (thrower != 1 - i) throw half_error(i);
      };
      try {
        rt.run([&] { two_way([&] { half(0); }, [&] { half(1); }); });
        ADD_FAILURE() << "thrower " << thrower << ": nothing was thrown";
      } catch (const half_error& e) {
        EXPECT_EQ(e.which, thrower == 2 ? 0 : thrower) << "rep " << rep;
      }
      EXPECT_EQ(ran.load(), 2) << "thrower " << thrower << " rep " << rep;
      after(thrower, rep);
    }
  }
}

}  // namespace

TEST_P(Join, FibMatchesAtOneTwoAndThreeWorkers) {
  for (unsigned w : {1u, 2u, 3u}) {
    roost::runtime rt(opts(GetParam(), w));
    for (int rep = 0; rep < 3; ++rep) EXPECT_EQ(rt.run([] { return fib(22); }), 17711) << w << " workers";
  }
}

TEST_P(Join, AnExceptionLeavesAfterTheOtherHalfRan) {
  roost::runtime rt(opts(GetParam(), 2));
  expect_the_serial_programs_exception(
      rt, [](auto first, auto second) { roost::parallel_invoke(first, second); }, [](int, int) {});
  // The runtime is still usable, and the join too.
  EXPECT_EQ(rt.run([] { return fib(15); }), 610);
}

// parallel_invoke of more functions is a chain of two-way joins: each runs once, also when one throws.
TEST_P(Join, EveryFunctionOfALongerInvokeRunsOnce) {
  roost::runtime rt(opts(GetParam(), 3));
  for (int thrower = -1; thrower < 5; ++thrower) {  // -1: none
    std::atomic<int> ran[5] = {};
    auto f = [&](int i) {
      return [&, i] {
        ran[i].fetch_add(1);
        if (i == thrower) throw half_error(i);
      };
    };
    bool threw = false;
    try {
      rt.run([&] { roost::parallel_invoke(f(0), f(1), f(2), f(3), f(4)); });
    } catch (const half_error& e) {
      threw = true;
      EXPECT_EQ(e.which, thrower);
    }
    EXPECT_EQ(threw, thrower >= 0);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(ran[i].load(), 1) << "function " << i << ", thrower " << thrower;
  }
}

// Several functions or pieces throw: the first in the serial program's order leaves, whatever ran first
// and wherever (a steal makes a later piece end first). Each piece throws its own index.
TEST_P(Join, TheSerialProgramsExceptionLeaves) {
  for (unsigned workers : {1u, 2u, 4u}) {
    roost::runtime rt(opts(GetParam(), workers));
    for (int rep = 0; rep < 10; ++rep) {
      for (int first_thrower : {0, 3}) {
        std::atomic<int> ran{0};
        auto f = [&](int i) {
          return [&, i] {
            ran.fetch_add(1);
            if (i >= first_thrower) throw half_error(i);
          };
        };
        try {
          rt.run([&] { roost::parallel_invoke(f(0), f(1), f(2), f(3), f(4)); });
          ADD_FAILURE() << "parallel_invoke: nothing was thrown";
        } catch (const half_error& e) {
          EXPECT_EQ(e.which, first_thrower) << "parallel_invoke, " << workers << " workers, rep " << rep;
        }
        EXPECT_EQ(ran.load(), 5);
        const int n = 1000, from = first_thrower * 100;
        std::atomic<int> visited{0};
        try {
          rt.run([&] {
            roost::parallel_for(0, n, 7, [&](int lo, int hi) {
              visited.fetch_add(hi - lo);
              if (hi > from) throw half_error(lo > from ? lo : from);
            });
          });
          ADD_FAILURE() << "parallel_for: nothing was thrown";
        } catch (const half_error& e) {
          EXPECT_EQ(e.which, from) << "parallel_for, " << workers << " workers, rep " << rep;
        }
        EXPECT_EQ(visited.load(), n);
        try {
          rt.run([&] {
            return roost::parallel_reduce(
                0, n, 7, 0L,
                [&](int lo, int hi) -> long {
                  if (hi > from) throw half_error(lo > from ? lo : from);
                  return hi - lo;
                },
                [](long a, long b) { return a + b; });
          });
          ADD_FAILURE() << "parallel_reduce: nothing was thrown";
        } catch (const half_error& e) {
          EXPECT_EQ(e.which, from) << "parallel_reduce, " << workers << " workers, rep " << rep;
        }
      }
    }
  }
}

// Functions given as std::reference_wrapper (std::cref(f), to avoid a copy, as with oneTBB): the inline
// join's own std::ref unwrapped them, and the call did not compile (an outside-user campaign).
TEST_P(Join, FunctionsGivenByReferenceWrapperRun) {
  roost::runtime rt(opts(GetParam(), 2));
  std::atomic<int> ran{0};
  const auto f = [&] { ran.fetch_add(1); };
  rt.run([&] { roost::parallel_invoke(std::cref(f), std::cref(f)); });
  rt.run([&] { roost::parallel_invoke(std::cref(f), f, std::ref(f)); });
  EXPECT_EQ(ran.load(), 5);
}

#if defined(__SIZEOF_INT128__)
// Bounds of an integer type wider than std::size_t: a range of 2^64 + 5 was counted as 5, and split into
// pieces of 2^64 iterations whatever the grain (an outside-user campaign).
TEST_P(Join, AWiderIntegerRangeKeepsTheGrain) {
  roost::runtime rt(opts(GetParam(), 2));
  using wide = __int128;
  const wide last = (wide{1} << 64) + 5;
  const std::size_t grain = std::size_t{1} << 62;
  std::mutex mu;
  std::vector<std::pair<wide, wide>> pieces;
  rt.run([&] {
    roost::parallel_for(wide{0}, last, grain, [&](wide lo, wide hi) {
      std::lock_guard<std::mutex> lk(mu);
      pieces.emplace_back(lo, hi);
    });
  });
  std::sort(pieces.begin(), pieces.end());
  ASSERT_FALSE(pieces.empty());
  wide at = 0;
  for (const auto& [lo, hi] : pieces) {
    EXPECT_TRUE(lo == at && hi > lo && hi - lo <= static_cast<wide>(grain));
    at = hi;
  }
  EXPECT_TRUE(at == last);
  const wide count = rt.run([&] {
    return roost::parallel_reduce(wide{0}, last, grain, wide{0}, [](wide lo, wide hi) { return hi - lo; },
                                  [](wide a, wide b) { return a + b; });
  });
  EXPECT_TRUE(count == last);
}

// Bounds of two types one of which is __int128 (parallel_for(0, n128, ...)) are mixed integer bounds under
// -std=c++20 too, where std::is_integral says __int128 is none (no overload matched: an outside-user
// campaign); and a negative bound against an unsigned __int128 one is refused, not wrapped.
TEST_P(Join, MixedBoundsWithAnInt128AreIntegerBounds) {
  roost::runtime rt(opts(GetParam(), 2));
  using wide = __int128;
  using uwide = unsigned __int128;
  const wide last = (wide{1} << 64) + 3;
  const wide count = rt.run([&] {
    return roost::parallel_reduce(0, last, std::size_t{1} << 62, wide{0},
                                  [](wide lo, wide hi) { return hi - lo; }, [](wide a, wide b) { return a + b; });
  });
  EXPECT_TRUE(count == last);
  std::atomic<int> ran{0};
  rt.run([&] { roost::parallel_for(2, wide{7}, 1, [&](wide lo, wide hi) { ran += static_cast<int>(hi - lo); }); });
  EXPECT_EQ(ran.load(), 5);
  const std::string msg = roost_test::message_of<roost::usage_error>(
      [&] { rt.run([&] { roost::parallel_for(-1, uwide{4}, 1, [](uwide, uwide) {}); }); });
  EXPECT_NE(msg.find("roost::parallel_for"), std::string::npos) << msg;
  EXPECT_NE(msg.find("-1"), std::string::npos) << msg;
}
#endif

// One half runs on the caller's worker and waits (up to 5 s) until the other has run on another worker:
// whichever half a policy pushes, it is stolen, and the join waits for it and sees its result.
TEST_P(Join, AStolenHalfIsJoined) {
  roost::runtime rt(roost_test::opts_sharing_the_root(GetParam(), 2));
  for (int round = 0; round < 3; ++round) {
    roost_test::another_worker_probe probe;
    long left = -1, right = -1;
    bool both_done_at_return = false;
    rt.run([&] {
      const int me = roost::this_worker_id();
      auto half = [&](long& out, int n) {
        probe.take_part(me);
        out = fib(n);  // nested joins inside a half that may have been stolen
      };
      roost::parallel_invoke([&] { half(left, 16); }, [&] { half(right, 15); });
      both_done_at_return = left == 987 && right == 610;
    });
    EXPECT_TRUE(both_done_at_return) << "round " << round;
    EXPECT_GT(probe.elsewhere.load(), 0) << "round " << round << ": no half ran on the other worker";
    EXPECT_FALSE(probe.late.load()) << "round " << round << ": the other worker took no half for 5 s";
  }
}

// The join's group lies in its caller's frame, on stack memory that earlier calls left as they wrote it, and
// its balance and error slot are written only when somebody claims the pushed half (task_frame.hpp, "The
// join's slot"). Here that memory is filled with other bytes first, both halves throw, and one is stolen
// (the probe, as above): the join returns once both ran, with the first half's exception, the serial
// program's, whichever half the policy pushed.
__attribute__((noinline)) void fill_the_stack_below(unsigned char value) {
  volatile unsigned char bytes[16 * 1024];
  for (auto& b : bytes) b = value;
}
template <class F, class G>
__attribute__((noinline)) void invoke_in_a_new_frame(F& f, G& g) {
  roost::parallel_invoke(f, g);
}
TEST_P(Join, AStolenHalfOnAStackLeftDirtyIsJoinedWithTheSerialProgramsException) {
  roost::runtime rt(roost_test::opts_sharing_the_root(GetParam(), 2));
  for (int round = 0; round < 3; ++round) {
    roost_test::another_worker_probe probe;
    std::atomic<int> ran{0};
    int caught = -1, ran_at_return = -1;
    rt.run([&] {
      const int me = roost::this_worker_id();
      auto first = [&] {
        probe.take_part(me);
        ran.fetch_add(1);
        throw half_error(0);
      };
      auto second = [&] {
        probe.take_part(me);
        ran.fetch_add(1);
        throw half_error(1);
      };
      fill_the_stack_below(0xab);
      try {
        invoke_in_a_new_frame(first, second);
      } catch (const half_error& e) {
        caught = e.which;
      }
      ran_at_return = ran.load();
    });
    EXPECT_EQ(caught, 0) << "round " << round << ": not the first half's exception";
    EXPECT_EQ(ran_at_return, 2) << "round " << round;
    EXPECT_GT(probe.elsewhere.load(), 0) << "round " << round << ": no half ran on the other worker";
    EXPECT_FALSE(probe.late.load()) << "round " << round << ": the other worker took no half for 5 s";
  }
}

// The same for roost::join, whose slow path is its own (join_values.hpp, join_values_wait): a stolen half on
// a stack filled first, both halves throwing; then both returning, whose results come back.
template <class F, class G>
__attribute__((noinline)) auto join_in_a_new_frame(F& f, G& g) {
  return roost::join(f, g);
}
TEST_P(Join, JoinAStolenHalfOnAStackLeftDirtyIsJoinedWithTheSerialProgramsExceptionOrResults) {
  roost::runtime rt(roost_test::opts_sharing_the_root(GetParam(), 2));
  for (int round = 0; round < 4; ++round) {
    const bool throws = round % 2 == 0;
    roost_test::another_worker_probe probe;
    std::atomic<int> ran{0};
    int caught = -1, ran_at_return = -1;
    long sum = -1;
    rt.run([&] {
      const int me = roost::this_worker_id();
      auto first = [&]() -> long {
        probe.take_part(me);
        ran.fetch_add(1);
        if (throws) throw half_error(0);
        return 20;
      };
      auto second = [&]() -> long {
        probe.take_part(me);
        ran.fetch_add(1);
        if (throws) throw half_error(1);
        return 22;
      };
      fill_the_stack_below(0xcd);
      try {
        auto [a, b] = join_in_a_new_frame(first, second);
        sum = a + b;
      } catch (const half_error& e) {
        caught = e.which;
      }
      ran_at_return = ran.load();
    });
    if (throws) EXPECT_EQ(caught, 0) << "round " << round << ": not the first half's exception";
    else EXPECT_EQ(sum, 42) << "round " << round;
    EXPECT_EQ(ran_at_return, 2) << "round " << round;
    EXPECT_GT(probe.elsewhere.load(), 0) << "round " << round << ": no half ran on the other worker";
    EXPECT_FALSE(probe.late.load()) << "round " << round << ": the other worker took no half for 5 s";
  }
}

// The half that runs at once waits on a nested group whose children are stolen, and is usually resumed by
// a thief on another worker; the pushed half then lies in the deque of a worker the caller has left. It
// must still run exactly once, and before the join returns. Both orders, so that under every policy the
// nested group is sometimes the half that runs at once.
TEST_P(Join, PushedHalfIsJoinedOnceAfterTheCallerMoved) {
  roost::runtime rt(opts(GetParam(), 4));
  using roost_test::spin;
  int moved = 0;
  for (int round = 0; round < 60; ++round) {
    std::atomic<int> small_runs{0}, nested_runs{0};
    bool complete_at_return = false, caller_moved = false;
    rt.run([&] {
      const int before = roost::this_worker_id();
      auto small = [&] {
        spin(std::chrono::microseconds(20));
        small_runs.fetch_add(1);
      };
      auto nested = [&] {
        roost::task_group g;
        for (int i = 0; i < 3; ++i)
          g.run([&] {
            spin(std::chrono::microseconds(200));
            nested_runs.fetch_add(1);
          });
        g.wait();
      };
      if (round % 2) roost::parallel_invoke(nested, small);
      else roost::parallel_invoke(small, nested);
      caller_moved = roost::this_worker_id() != before;
      complete_at_return = small_runs.load() == 1 && nested_runs.load() == 3;
    });
    ASSERT_EQ(small_runs.load(), 1) << "round " << round;
    ASSERT_EQ(nested_runs.load(), 3) << "round " << round;
    ASSERT_TRUE(complete_at_return) << "round " << round;
    moved += caller_moved;
  }
  RecordProperty("rounds_where_the_caller_moved", moved);  // timing-dependent: recorded, not asserted
}

// With an observer installed every worker takes the engine's path: each join's spawned half is a task,
// named and seen once (fib(10) makes 88 joins, each with one spawned half, plus the root).
TEST_P(Join, ObservedHalvesAreTasks) {
  roost_test::start_paths rec;
  roost::runtime rt(opts(GetParam(), 2));
  roost::set_task_observer(&rec);
  long r = rt.run([] { return fib(10); });
  roost::set_task_observer(nullptr);
  EXPECT_EQ(r, 55);
  EXPECT_EQ(rec.starts.size(), 89u);
  std::set<std::string> unique(rec.starts.begin(), rec.starts.end());
  EXPECT_EQ(unique.size(), rec.starts.size());
  // Without it, the inline path again (where the policy has one): the same result.
  EXPECT_EQ(rt.run([] { return fib(10); }), 55);
}

// An observer installed while a join runs its first half: the half still on the deque must then be joined
// by the engine and seen as a task (the inline pop's floor is closed while the path is `engine`, abi.hpp), run
// once, and the join returns both results. One worker, so that nobody takes that half before the install;
// whichever half a policy runs first installs it, in either order of the halves. Where the root's join is
// not inline (adws-ml above its leaf level, cats while profiling) a work-first spawn leaves the parent's
// continuation, which is no task of its own, so there at most one start is seen.
TEST_P(Join, AnObserverInstalledDuringAJoinSeesTheHalfLeftOnTheDeque) {
  roost::runtime rt(opts(GetParam(), 1));
  for (int order = 0; order < 2; ++order) {
    roost_test::start_paths rec;
    std::atomic<int> runs[2] = {0, 0};
    std::atomic<bool> installed{false};
    const long r = rt.run([&] {
      long out[2] = {0, 0};
      auto half = [&](int i) {
        if (!installed.exchange(true)) roost::set_task_observer(&rec);
        runs[i].fetch_add(1);
        out[i] = 10 + i;
      };
      if (order) roost::parallel_invoke([&] { half(1); }, [&] { half(0); });
      else roost::parallel_invoke([&] { half(0); }, [&] { half(1); });
      return out[0] + out[1];
    });
    roost::set_task_observer(nullptr);
    EXPECT_EQ(r, 21) << "order " << order;
    EXPECT_EQ(runs[0].load(), 1) << "order " << order;
    EXPECT_EQ(runs[1].load(), 1) << "order " << order;
    const bool inline_everywhere = GetParam() == "ws" || GetParam() == "ws-help" || GetParam() == "hws";
    if (inline_everywhere)
      EXPECT_EQ(rec.starts.size(), 1u) << "order " << order << ": the half run after the install is a task";
    else EXPECT_LE(rec.starts.size(), 1u) << "order " << order;
  }
}

// The same with the half private on the deque (the join inside the half another join runs at once): the
// inline pop's window has no path test, so the installing thread's set_spawn_paths must close the deque's
// floor (engine_base.cpp, abi.hpp's sync_inline_pops); left open, the inner half ran inline, unobserved.
// One worker; under the inline policies exactly the inner pushed half and the outer one start as tasks.
TEST_P(Join, AnObserverInstalledDuringAnInnerJoinSeesItsPrivateHalf) {
  roost::runtime rt(opts(GetParam(), 1));
  for (int order = 0; order < 2; ++order) {
    roost_test::start_paths rec;
    std::atomic<bool> installed{false};
    std::atomic<int> runs{0};
    rt.run([&] {
      auto inner = [&] {
        auto half = [&] {
          if (!installed.exchange(true)) roost::set_task_observer(&rec);
          runs.fetch_add(1);
        };
        if (!installed.load()) roost::parallel_invoke(half, half);
        else runs.fetch_add(2);
      };
      if (order) roost::parallel_invoke(inner, inner);
      else roost::parallel_invoke(inner, [&] { inner(); });
    });
    roost::set_task_observer(nullptr);
    EXPECT_EQ(runs.load(), 4) << "order " << order;
    const bool inline_everywhere = GetParam() == "ws" || GetParam() == "ws-help" || GetParam() == "hws";
    if (inline_everywhere)
      EXPECT_EQ(rec.starts.size(), 2u) << "order " << order << ": the inner and outer halves left on the deque";
  }
}

// parallel_reduce makes each half's result in place and hands the combine rvalues: a move-only result
// works (a reduction of std::unique_ptr did not compile; an outside-user campaign), a heavy one is never
// copied, and a combine that takes const references still gets them.
namespace {
struct counted {
  static inline std::atomic<long> copies{0};
  std::vector<long> v;
  explicit counted(std::vector<long> x) : v(std::move(x)) {}
  counted(const counted& o) : v(o.v) { copies.fetch_add(1, std::memory_order_relaxed); }
  counted(counted&&) noexcept = default;
  counted& operator=(const counted& o) {
    v = o.v;
    copies.fetch_add(1, std::memory_order_relaxed);
    return *this;
  }
  counted& operator=(counted&&) noexcept = default;
};
}  // namespace

TEST_P(Join, ReductionsOfMoveOnlyAndHeavyResults) {
  roost::runtime rt(opts(GetParam(), 3));
  const long n = 5000;
  auto leaf_sum = [](long lo, long hi) {
    auto p = std::make_unique<long>(0);
    for (long i = lo; i < hi; ++i) *p += i;
    return p;
  };
  std::unique_ptr<long> total = rt.run([&] {
    return roost::parallel_reduce(0L, n, 7, std::make_unique<long>(0), leaf_sum,
                                  [](std::unique_ptr<long> a, std::unique_ptr<long> b) {
                                    *a += *b;
                                    return a;
                                  });
  });
  EXPECT_EQ(*total, n * (n - 1) / 2);
  // A concatenation in index order: associative, not commutative.
  counted::copies = 0;
  const counted all = rt.run([&] {
    return roost::parallel_reduce(0L, n, 7, counted({}), [](long lo, long hi) {
      std::vector<long> v;
      for (long i = lo; i < hi; ++i) v.push_back(i);
      return counted(std::move(v));
    }, [](counted a, counted b) {
      a.v.insert(a.v.end(), b.v.begin(), b.v.end());
      return a;
    });
  });
  ASSERT_EQ(all.v.size(), static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) ASSERT_EQ(all.v[static_cast<std::size_t>(i)], i);
  EXPECT_EQ(counted::copies.load(), 0);
  const long by_ref = rt.run([] {
    return roost::parallel_reduce(0L, 1000L, 7, 0L, [](long lo, long hi) { return hi - lo; },
                                  [](const long& a, const long& b) { return a + b; });
  });
  EXPECT_EQ(by_ref, 1000);
}

// The splits of parallel_for and parallel_reduce are two-way joins: every index once, a deterministic sum.
TEST_P(Join, LoopsCoverEveryIndexOnce) {
  roost::runtime rt(opts(GetParam(), 3));
  std::vector<std::atomic<int>> hits(30011);
  rt.run([&] {
    roost::parallel_for(0, static_cast<int>(hits.size()), 7, [&](int lo, int hi) {
      for (int i = lo; i < hi; ++i) hits[i].fetch_add(1, std::memory_order_relaxed);
    });
  });
  for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i;
  long sum = rt.run([] {
    return roost::parallel_reduce(0L, 100000L, 13, 0L,
                                  [](long lo, long hi) {
                                    long s = 0;
                                    for (long i = lo; i < hi; ++i) s += i;
                                    return s;
                                  },
                                  [](long a, long b) { return a + b; });
  });
  EXPECT_EQ(sum, 100000L * 99999L / 2);
}

// A chain of joins deeper than the deque's first ring (256 slots): from some depth on every push leaves its
// window for the slow path (the ring grows), where the join starts over out of line on its closures' copies
// (fork_join2.hpp, join_slow). Every half runs once, and each level sees its own halves' results.
namespace {
long nested_sum(int depth, std::atomic<long>& halves) {
  if (depth == 0) return 0;
  long below = -1, here = -1;
  roost::parallel_invoke([&below, &halves, depth] { below = nested_sum(depth - 1, halves); halves.fetch_add(1); },
                         [&here, &halves, depth] { here = depth; halves.fetch_add(1); });
  return below + here;
}
}  // namespace
TEST_P(Join, AChainDeeperThanTheDequesRingJoinsEveryHalfOnce) {
  for (unsigned w : {1u, 2u}) {
    roost::runtime rt(opts(GetParam(), w));
    for (int rep = 0; rep < 3; ++rep) {
      std::atomic<long> halves{0};
      EXPECT_EQ(rt.run([&] { return nested_sum(700, halves); }), 700L * 701 / 2) << w << " workers";
      EXPECT_EQ(halves.load(), 1400) << w << " workers";
    }
  }
}

// The join hands a copy of a function object on (to a thief, the engine) only where a copy cannot be told
// from the object: trivially copyable and callable as const. One callable only as non-const, one too large
// for the frame's slot and one not trivially copyable are called as themselves: their state after the join
// is the serial program's.
TEST_P(Join, FunctionObjectsThatACopyWouldChangeRunAsThemselves) {
  struct counts_calls {
    int calls = 0;
    void operator()() { ++calls; }
  };
  struct large {
    std::array<long, 32> filler{};
    int* calls;
    void operator()() const { ++*calls; }
  };
  static_assert(!roost::detail::join_copies_v<counts_calls>);
  static_assert(!roost::detail::join_copies_v<large>);
  roost::runtime rt(opts(GetParam(), 2));
  for (int rep = 0; rep < 50; ++rep) {
    counts_calls first, second;
    int large_calls = 0, string_calls = 0;  // one each: the two halves may run at once
    large big{{}, &large_calls};
    std::string text = "unchanged";
    auto reads_a_string = [text, &string_calls] { string_calls += text.size() == 9 ? 1 : 100; };
    static_assert(!roost::detail::join_copies_v<decltype(reads_a_string)>);
    rt.run([&] {
      roost::parallel_invoke(first, second);
      roost::parallel_invoke(big, reads_a_string);
    });
    EXPECT_EQ(first.calls, 1);
    EXPECT_EQ(second.calls, 1);
    EXPECT_EQ(large_calls, 1);
    EXPECT_EQ(string_calls, 1);
  }
}

// roost::join (detail/join_values.hpp): parallel_invoke's join returning both results.
namespace {
long fib_values(int n) {
  if (n < 2) return n;
  auto [a, b] = roost::join([n] { return fib_values(n - 1); }, [n] { return fib_values(n - 2); });
  return a + b;
}

// A result that counts its live objects: none may be left when a join ends, thrown or not.
struct live_result {
  static inline std::atomic<int> live{0};
  int v;
  explicit live_result(int x) : v(x) { live.fetch_add(1); }
  live_result(const live_result& o) : v(o.v) { live.fetch_add(1); }
  live_result(live_result&& o) noexcept : v(o.v) { live.fetch_add(1); }
  ~live_result() { live.fetch_sub(1); }
};

// The same chain with the recursion in the second half, which help-first runs at once (so that its pushes
// pile up on the deque there too).
long joined_sum_second(int depth, std::atomic<long>& halves) {
  if (depth == 0) return 0;
  auto [here, below] = roost::join(
      [&halves, depth] {
        halves.fetch_add(1);
        return static_cast<long>(depth);
      },
      [&halves, depth] {
        long r = joined_sum_second(depth - 1, halves);
        halves.fetch_add(1);
        return r;
      });
  return below + here;
}

// A result whose move may throw: roost::join takes parallel_invoke's join for it (join_values_by_invoke).
// Armed, its move throws, and it counts its live objects (as live_result).
struct throwing_move {
  static inline std::atomic<int> live{0};
  long v;
  bool armed = false;
  explicit throwing_move(long x, bool arm = false) : v(x), armed(arm) { live.fetch_add(1); }
  throwing_move(throwing_move&& o) noexcept(false) : v(o.v) {
    if (o.armed) throw half_error(9);
    live.fetch_add(1);
  }
  ~throwing_move() { live.fetch_sub(1); }
};
long fib_throwing_move(int n) {
  if (n < 2) return n;
  auto [a, b] = roost::join([n] { return throwing_move(fib_throwing_move(n - 1)); },
                            [n] { return throwing_move(fib_throwing_move(n - 2)); });
  return a.v + b.v;
}

long joined_sum(int depth, std::atomic<long>& halves) {
  if (depth == 0) return 0;
  auto [below, here] = roost::join(
      [&halves, depth] {
        long r = joined_sum(depth - 1, halves);
        halves.fetch_add(1);
        return r;
      },
      [&halves, depth] {
        halves.fetch_add(1);
        return static_cast<long>(depth);
      });
  return below + here;
}
}  // namespace

TEST_P(Join, JoinReturnsBothResultsInOrder) {
  for (unsigned w : {1u, 2u, 3u}) {
    roost::runtime rt(opts(GetParam(), w));
    for (int rep = 0; rep < 3; ++rep) EXPECT_EQ(rt.run([] { return fib_values(22); }), 17711) << w << " workers";
    auto [i, text] = rt.run([] { return roost::join([] { return 1; }, [] { return std::string("second"); }); });
    EXPECT_EQ(i, 1);
    EXPECT_EQ(text, "second");
  }
}

// Each half throws in turn, then both: the thrower's exception leaves (the first's when both throw), the other
// half ran all the same, and the result it made is destroyed with the join: no result object outlives it.
TEST_P(Join, JoinAnExceptionLeavesAfterTheOtherHalfRanAndItsResultIsDropped) {
  roost::runtime rt(opts(GetParam(), 2));
  expect_the_serial_programs_exception(
      rt,
      [](auto first, auto second) {
        roost::join([first] { first(); return live_result(0); }, [second] { second(); return live_result(1); });
      },
      [](int thrower, int rep) {
        EXPECT_EQ(live_result::live.load(), 0) << "thrower " << thrower << " rep " << rep;
      });
  auto [a, b] = rt.run([] { return roost::join([] { return live_result(7); }, [] { return live_result(8); }); });
  EXPECT_EQ(a.v + 10 * b.v, 87);
}

// Results that only move, and heavy ones, from closures a copy could not stand for (a captured string, a
// call that changes the object, one too large for the frame's slot): each runs as itself, once.
TEST_P(Join, JoinMoveOnlyAndHeavyResultsFromAnyFunctionObject) {
  struct counts_calls {
    int calls = 0;
    int operator()() { return ++calls; }
  };
  struct large {
    std::array<long, 32> filler{};
    long operator()() const { return filler[31] + 1; }
  };
  static_assert(!roost::detail::join_value_copies_v<counts_calls>);
  static_assert(!roost::detail::join_value_copies_v<large>);
  roost::runtime rt(opts(GetParam(), 2));
  for (int rep = 0; rep < 20; ++rep) {
    counts_calls counter;
    large big{};
    std::string text(100, 'x');
    auto [p, v] = rt.run([&] {
      return roost::join([] { return std::make_unique<int>(5); },
                         [text] { return std::vector<std::string>(3, text); });
    });
    ASSERT_TRUE(p);
    EXPECT_EQ(*p, 5);
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[2], text);
    auto [calls, filler] = rt.run([&] { return roost::join(counter, big); });
    auto [c, k] = rt.run([&] {
      return roost::join([&]() -> const std::string { return text; }, []() -> const int { return 3; });
    });
    EXPECT_EQ(c, text);
    EXPECT_EQ(k, 3);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(counter.calls, 1);
    EXPECT_EQ(filler, 1);
  }
}

// As AStolenHalfIsJoined, with the results coming back through the join: whichever half a policy pushes, it
// is stolen, and its value, made on the other worker, is the one the caller gets.
TEST_P(Join, JoinAStolenHalfsResultComesBack) {
  roost::runtime rt(roost_test::opts_sharing_the_root(GetParam(), 2));
  for (int round = 0; round < 3; ++round) {
    roost_test::another_worker_probe probe;
    auto [left, right] = rt.run([&] {
      const int me = roost::this_worker_id();
      return roost::join(
          [&] {
            probe.take_part(me);
            const int ran_on = roost::this_worker_id();  // before the nested joins, which may move the half
            return std::make_pair(fib_values(16), ran_on);
          },
          [&] {
            probe.take_part(me);
            const int ran_on = roost::this_worker_id();
            return std::make_pair(fib_values(15), ran_on);
          });
    });
    EXPECT_EQ(left.first, 987) << "round " << round;
    EXPECT_EQ(right.first, 610) << "round " << round;
    EXPECT_NE(left.second, right.second) << "round " << round << ": both halves ran on one worker";
    EXPECT_GT(probe.elsewhere.load(), 0) << "round " << round << ": no half ran on the other worker";
    EXPECT_FALSE(probe.late.load()) << "round " << round << ": the other worker took no half for 5 s";
  }
}

// Deeper than the deque's first ring: the pushes leave the window for the slow path, out of line
// (join_values_slow); every half runs once and each level gets its own halves' values.
TEST_P(Join, JoinDeeperThanTheDequesRingReturnsEveryLevelsValues) {
  for (unsigned w : {1u, 2u}) {
    roost::runtime rt(opts(GetParam(), w));
    std::atomic<long> halves{0};
    EXPECT_EQ(rt.run([&] { return joined_sum(700, halves); }), 700L * 701 / 2) << w << " workers";
    EXPECT_EQ(halves.load(), 1400) << w << " workers";
    halves = 0;
    EXPECT_EQ(rt.run([&] { return joined_sum_second(700, halves); }), 700L * 701 / 2) << w << " workers";
    EXPECT_EQ(halves.load(), 1400) << w << " workers";
  }
}

// An observer installed while a join runs its first half: the half left on the deque is joined by the engine,
// which runs it as a task and puts its result where the join takes it (value_half::out, join_values_wait);
// when the half that installed it throws, the other half still runs and its result is destroyed with the
// join. One worker, so that no thief takes a half first; either order of the halves.
TEST_P(Join, JoinAnObserverInstalledDuringAJoinGetsTheEnginesResult) {
  roost::runtime rt(opts(GetParam(), 1));
  for (int order = 0; order < 2; ++order) {
    for (bool throws : {false, true}) {
      roost_test::start_paths rec;
      std::atomic<int> runs[2] = {0, 0};
      std::atomic<bool> installed{false};
      bool threw = false;
      try {
        auto [a, b] = rt.run([&] {
          auto half = [&](int i) {
            const bool first_to_run = !installed.exchange(true);
            if (first_to_run) roost::set_task_observer(&rec);
            runs[i].fetch_add(1);
            if (throws && first_to_run) throw half_error(i);
            return live_result(10 + i);
          };
          if (order) return roost::join([&] { return half(1); }, [&] { return half(0); });
          return roost::join([&] { return half(0); }, [&] { return half(1); });
        });
        EXPECT_EQ(a.v, order ? 11 : 10) << "order " << order;
        EXPECT_EQ(b.v, order ? 10 : 11) << "order " << order;
      } catch (const half_error&) {
        threw = true;
      }
      roost::set_task_observer(nullptr);
      EXPECT_EQ(threw, throws) << "order " << order;
      // The half left on the deque ran as a task (as AnObserverInstalledDuringAJoinSeesTheHalfLeftOnTheDeque).
      const bool inline_everywhere = GetParam() == "ws" || GetParam() == "ws-help" || GetParam() == "hws";
      if (inline_everywhere) EXPECT_EQ(rec.starts.size(), 1u) << "order " << order;
      else EXPECT_LE(rec.starts.size(), 1u) << "order " << order;
      EXPECT_EQ(runs[0].load(), 1) << "order " << order << (throws ? ", throwing" : "");
      EXPECT_EQ(runs[1].load(), 1) << "order " << order << (throws ? ", throwing" : "");
      EXPECT_EQ(live_result::live.load(), 0) << "order " << order << (throws ? ", throwing" : "");
    }
  }
}

// Results whose move may throw take parallel_invoke's join, and come back the same; a const move-only
// result comes back as the type itself.
TEST_P(Join, JoinResultsThatMayThrowWhenMovedOrAreConst) {
  static_assert(!roost::detail::join_values_inline_ok_v<decltype([] { return throwing_move(1); }),
                                                        decltype([] { return 1; })>);
  roost::runtime rt(opts(GetParam(), 2));
  EXPECT_EQ(rt.run([] { return fib_throwing_move(18); }), 2584);
  EXPECT_EQ(throwing_move::live.load(), 0);
  {
    auto [p, q] = rt.run([] {
      return roost::join([]() -> const std::unique_ptr<int> { return std::make_unique<int>(4); },
                         []() -> const throwing_move { return throwing_move(5); });
    });
    ASSERT_TRUE(p);
    EXPECT_EQ(*p, 4);
    EXPECT_EQ(q.v, 5);
  }
  // A move that throws leaves after both halves ran, and no result outlives the join.
  for (int armed_half : {0, 1}) {
    std::atomic<int> ran{0};
    try {
      rt.run([&] {
        roost::join([&] { ran.fetch_add(1); return throwing_move(1, armed_half == 0); },
                    [&] { ran.fetch_add(1); return throwing_move(2, armed_half == 1); });
      });
      ADD_FAILURE() << "armed half " << armed_half << ": the move did not throw";
    } catch (const half_error& e) {
      EXPECT_EQ(e.which, 9);
    }
    EXPECT_EQ(ran.load(), 2) << "armed half " << armed_half;
    EXPECT_EQ(throwing_move::live.load(), 0) << "armed half " << armed_half;
  }
  // On the inline path (results that move without throwing) a const move-only result, in either place.
  auto [u, i] = rt.run([] {
    return roost::join([]() -> const std::unique_ptr<int> { return std::make_unique<int>(6); }, [] { return 1; });
  });
  auto [j, w] = rt.run([] {
    return roost::join([] { return 2; }, []() -> const std::unique_ptr<int> { return std::make_unique<int>(7); });
  });
  ASSERT_TRUE(u && w);
  EXPECT_EQ(*u + i + j + *w, 16);
}

// With an observer installed the join is the engine's (a task group), its pushed half a task: fib(10) makes
// 88 joins, each with one spawned half, plus the root; the values are the same.
TEST_P(Join, JoinObservedHalvesAreTasks) {
  roost_test::start_paths rec;
  roost::runtime rt(opts(GetParam(), 2));
  roost::set_task_observer(&rec);
  long r = rt.run([] { return fib_values(10); });
  roost::set_task_observer(nullptr);
  EXPECT_EQ(r, 55);
  EXPECT_EQ(rec.starts.size(), 89u);
  EXPECT_EQ(rt.run([] { return fib_values(10); }), 55);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, Join, ::testing::ValuesIn(available_schedulers()),
                         roost_test::scheduler_test_name);

// Whatever the range: a loop of one piece, or parallel_invoke of one function, ran serially outside a run
// and threw for anything longer, so a program worked on small inputs and failed on large ones.
namespace {
template <class F>
void expect_usage_error(const char* call, F&& f) {
  try {
    f();
    ADD_FAILURE() << call << ": no error";
  } catch (const roost::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find(call), std::string::npos) << e.what();
  }
}
}  // namespace

TEST(JoinMisuse, OutsideARuntimeIsAUsageErrorNamingTheCall) {
  int ran = 0;
  expect_usage_error("roost::parallel_invoke", [&] { roost::parallel_invoke([&] { ++ran; }, [&] { ++ran; }); });
  expect_usage_error("roost::parallel_invoke", [&] { roost::parallel_invoke([&] { ++ran; }); });
  for (int n : {1, 2, 1000}) {
    expect_usage_error("roost::parallel_for", [&] { roost::parallel_for(0, n, 8, [&](int, int) { ++ran; }); });
    expect_usage_error("roost::parallel_reduce", [&] {
      roost::parallel_reduce(0, n, 8, 0, [&](int, int) { return ++ran; }, [](int a, int b) { return a + b; });
    });
  }
  expect_usage_error("roost::join", [&] { roost::join([&] { return ++ran; }, [&] { return ++ran; }); });
  EXPECT_EQ(ran, 0) << "a body ran outside the runtime";
}

// The two-way join reads the thread's worker without testing for a task first (abi.hpp, t_running_worker):
// a thread that serves none, after a run on it ended or started by a task, finds the no-worker, whose path
// sends the join to the check that throws. Both halves, under every inline policy, nothing run.
TEST(JoinMisuse, AThreadThatServesNoWorkerGetsTheUsageError) {
  for (const char* sched : {"ws-help", "ws", "hws", "adws"}) {
    roost::runtime rt(opts(sched, 2));
    int ran = 0;
    EXPECT_EQ(rt.run([] { return 1; }), 1);
    expect_usage_error("roost::parallel_invoke", [&] { roost::parallel_invoke([&] { ++ran; }, [&] { ++ran; }); });
    expect_usage_error("roost::join", [&] { roost::join([&] { return ++ran; }, [&] { return ++ran; }); });
    rt.run([&] {
      std::thread t([&] {
        expect_usage_error("roost::parallel_invoke", [&] { roost::parallel_invoke([&] { ++ran; }, [&] { ++ran; }); });
        expect_usage_error("roost::join", [&] { roost::join([&] { return ++ran; }, [&] { return ++ran; }); });
      });
      t.join();
    });
    EXPECT_EQ(ran, 0) << sched << ": a half ran outside a task";
  }
}

// The join of a policy that names its queue (worker_abi::names_join_queue: adws outside a search, adws-ml,
// cab, cats), driven directly on a worker ABI with no runtime. It takes ws's path (inline_join): while the
// queue named is the worker's own deque, ws's windows; while it is another (adws's migration queue's own
// end), the windows are shut and the half goes onto that queue and comes back from there; when a job is
// delivered to the run-first slot (adws's mailbox) while the other half runs, the join leaves the pushed half
// where it lies and lets the engine join, which runs that job first.
namespace {
// Makes the calling thread look, to the inline join, like a worker's running the fiber `fb` of worker `w`
// (what the engine's become and set_current_worker do), for the test's scope.
struct running_as {
  roost::detail::fiber_abi* saved_fiber = roost::detail::t_running_fiber;
  roost::detail::worker_abi* saved_worker = roost::detail::t_running_worker;
  roost::detail::ws_deque<roost::detail::job>* saved_window = roost::detail::t_join_window;
  running_as(roost::detail::worker_abi& w, roost::detail::fiber_abi& fb) {
    roost::detail::t_running_fiber = &fb;
    roost::detail::t_running_worker = &w;
    roost::detail::t_join_window = w.join_window.load(std::memory_order_relaxed);  // the thread's copy, which name_join_queue keeps from now on
  }
  ~running_as() {
    roost::detail::t_running_fiber = saved_fiber;
    roost::detail::t_running_worker = saved_worker;
    roost::detail::t_join_window = saved_window;
  }
};
}  // namespace

namespace {
struct policy_queue_worker {
  roost::detail::worker_abi w;
  roost::detail::fiber_abi fb;
  roost::detail::ws_deque<roost::detail::job> named;  // e.g. the migration queue's own end
  std::atomic<roost::detail::job*> run_first{nullptr};
  static inline std::vector<std::string>* log = nullptr;
  // The engine's join, as far as this test needs it: it finds the half where the join pushed it and runs it.
  static inline roost::detail::ws_deque<roost::detail::job>* engine_queue = nullptr;
  static void engine_wait(roost::detail::worker_abi&, roost::detail::group_state& g) {
    log->push_back("engine joins");
    roost::detail::job* j = engine_queue->pop();
    ASSERT_EQ(static_cast<void*>(j), static_cast<void*>(g.inline_frame)) << "the half is not where it was pushed";
    auto* f = static_cast<roost::detail::task_frame*>(j);
    f->ops->run_in_place(f);
  }
  // `own`: the policy names the worker's own deque (the common state), else `named`.
  explicit policy_queue_worker(bool own = false) {
    w.path.store(roost::detail::spawn_path::inline_join);
    w.names_join_queue = true;
    w.run_first = &run_first;
    w.deque.watch_run_first(&run_first);
    // As adws does with its migration queue's own end (adws.cpp): the join's window on it closes as the
    // deque's does, for a job to run first and for a path that is not inline.
    w.other_join_window = &named;
    named.watch_run_first(&run_first);
    w.engine_wait = &engine_wait;
    fb.worker = &w;
    name(own ? &w.deque : &named);
  }
  void name(roost::detail::ws_deque<roost::detail::job>* q) {
    roost::detail::name_join_queue(w, q);
    engine_queue = q;
  }
  // What adws's deliver does: the job in the slot, then the owner's inline pops shut, on both its queues.
  void deliver(roost::detail::job* j) {
    run_first.store(j, std::memory_order_seq_cst);
    w.deque.close_pop_floor();
    named.close_pop_floor();
  }
};
}  // namespace

TEST(JoinOnAPolicyQueue, PushesOntoTheNamedQueueAndTakesItBackInline) {
  policy_queue_worker pw;
  std::vector<std::string> log;
  policy_queue_worker::log = &log;
  const std::int64_t deque_before = pw.w.deque.bottom_index(), named_before = pw.named.bottom_index();
  auto pushed = [&] { log.push_back("pushed half"); };
  auto here = [&] {
    log.push_back("other half");
    EXPECT_EQ(pw.named.bottom_index(), named_before + 1) << "not pushed onto the named queue";
    EXPECT_EQ(pw.w.deque.bottom_index(), deque_before) << "pushed onto the worker's deque";
  };
  running_as in(pw.w, pw.fb);
  EXPECT_TRUE(roost::detail::join_inline<roost::detail::spawn_path::inline_join>(pw.w, pushed, here));
  EXPECT_EQ(log, (std::vector<std::string>{"other half", "pushed half"}));
  EXPECT_EQ(pw.named.pop(), nullptr) << "the half was left in the named queue";
}

TEST(JoinOnAPolicyQueue, AJobInTheRunFirstSlotSendsTheJoinToTheEngine) {
  for (bool own : {false, true}) {
    policy_queue_worker pw(own);
    std::vector<std::string> log;
    policy_queue_worker::log = &log;
    roost::detail::task_frame older[2];  // an ancestor's halves: the join's own push stays private
    for (auto& f : older) pw.engine_queue->push(&f);
    roost::detail::task_frame delivered;  // stands for a search-root task another worker put in the mailbox
    auto pushed = [&] { log.push_back("pushed half"); };
    auto here = [&] {
      log.push_back("other half");
      pw.deliver(&delivered);
    };
    running_as in(pw.w, pw.fb);
    EXPECT_TRUE(roost::detail::join_inline<roost::detail::spawn_path::inline_join>(pw.w, pushed, here));
    EXPECT_EQ(log, (std::vector<std::string>{"other half", "engine joins", "pushed half"})) << "own deque: " << own;
    // The job taken (the engine ran it first), the next join's pop comes back inline, and on the own deque
    // through the window again: the slow pop re-armed the floor.
    pw.run_first.store(nullptr);
    log.clear();
    auto quiet = [&] { log.push_back("other half"); };
    for (int i = 0; i < 2; ++i)
      EXPECT_TRUE(roost::detail::join_inline<roost::detail::spawn_path::inline_join>(pw.w, pushed, quiet));
    EXPECT_EQ(log, (std::vector<std::string>{"other half", "pushed half", "other half", "pushed half"}));
#ifdef ROOST_CRITICAL_WINDOWS  // the windows are critical windows: none in a sanitizer's build
    // The queue the join's window addresses is open again: deliver closed it, the slow pop re-armed it.
    EXPECT_FALSE(pw.engine_queue->pop_window_shut()) << "own deque: " << own;
#endif
    for (int i = 1; i >= 0; --i) EXPECT_EQ(static_cast<void*>(pw.engine_queue->pop()), static_cast<void*>(&older[i]));
  }
}

// On a queue other than the own deque (adws's migration queue's own end), warm so that the join's push stays
// private: the join takes that queue's windows (worker_abi::join_window), leaves the own deque as it was, and
// gives the half to the engine when a job waits to run first or the path turned `engine` while the other
// half ran. Each way the join gets there: the whole join in one place, the window alone (fork_join2's first
// try, a migrated adws worker's every join), and join_slow, where fork_join2 sends a join whose window
// needs the C++ path.
TEST(JoinOnAPolicyQueue, OnAnotherQueueTheJoinTakesThatQueuesWindows) {
  constexpr auto J = roost::detail::spawn_path::inline_join;
  std::vector<std::string> log;
  policy_queue_worker::log = &log;
  auto pushed = [&] { log.push_back("pushed half"); };
  for (int way = 0; way < 3; ++way)
  for (int variant = 0; variant < 3; ++variant) {
    policy_queue_worker pw;  // names `named`
    roost::detail::task_frame older[2];
    for (auto& f : older) pw.named.push(&f);  // the first is shared at once
    running_as in(pw.w, pw.fb);
    roost::detail::task_frame delivered;
    const std::int64_t own = pw.w.deque.bottom_index(), named = pw.named.bottom_index();
    auto here = [&] {
      log.push_back("other half");
      EXPECT_EQ(pw.named.bottom_index(), named + 1);
      EXPECT_EQ(pw.w.deque.bottom_index(), own);
      if (variant == 1) pw.deliver(&delivered);
      if (variant == 2) {
        pw.w.path.store(roost::detail::spawn_path::engine);
        roost::detail::sync_inline_pops(pw.w);
      }
    };
    log.clear();
    if (way == 0) EXPECT_TRUE(roost::detail::join_inline<J>(pw.w, pushed, here));
    if (way == 1) EXPECT_TRUE((roost::detail::join_inline<J, roost::detail::join_push::window_only>(pw.w, pushed, here)));
    if (way == 2) roost::detail::join_slow<J>(pw.w, "test", here, pushed, 1.0, 0.5);
    if (variant == 0) EXPECT_EQ(log, (std::vector<std::string>{"other half", "pushed half"})) << way;
    else EXPECT_EQ(log, (std::vector<std::string>{"other half", "engine joins", "pushed half"})) << variant << way;
    EXPECT_EQ(pw.named.bottom_index(), named);
    EXPECT_EQ(static_cast<void*>(pw.named.pop()), static_cast<void*>(&older[1]));
  }
}

// A job in the run-first slot keeps the pop floor closed across a re-arm (a share served meanwhile): the
// owner's rearm reads the slot after storing the floor, as the deliverer stores the slot and then the floor.
TEST(JoinOnAPolicyQueue, TheRunFirstSlotKeepsTheFloorClosedThroughARearm) {
  policy_queue_worker pw(true);
  std::vector<std::string> log;
  policy_queue_worker::log = &log;
  roost::detail::task_frame older[2];
  for (auto& f : older) pw.w.deque.push(&f);
  roost::detail::task_frame delivered;
  auto pushed = [&] { log.push_back("pushed half"); };
  auto here = [&] {
    log.push_back("other half");
    pw.run_first.store(&delivered, std::memory_order_seq_cst);  // the slot alone, as if the close came late
    pw.w.deque.rearm_pop_floor();                                // a re-arm must not open the floor
  };
  running_as in(pw.w, pw.fb);
  EXPECT_TRUE(roost::detail::join_inline<roost::detail::spawn_path::inline_join>(pw.w, pushed, here));
  EXPECT_EQ(log, (std::vector<std::string>{"other half", "engine joins", "pushed half"}));
  pw.run_first.store(nullptr);
  for (int i = 1; i >= 0; --i) EXPECT_EQ(static_cast<void*>(pw.w.deque.pop()), static_cast<void*>(&older[i]));
}

// A thief's request made while a two-way join's other half runs is served by the join's pop (help-first:
// the inline window tests the deque's push limit, kAsked while a request waits), not left for a push that
// may never come: a walk down a list whose leaves spawn nothing unwinds through pops alone, and a window
// that skipped the request ran every leaf on its owner while the other workers slept (a review's program:
// 1 of 40 leaves stolen). Driven directly on a worker ABI, no runtime, no timing.
TEST(InlineJoin, ARequestMadeWhileTheOtherHalfRunsIsServedAtThePop) {
  roost::detail::worker_abi w;
  roost::detail::fiber_abi fb;
  w.path.store(roost::detail::spawn_path::inline_help_first);
  fb.worker = &w;
  roost::detail::task_frame older[4];  // an ancestor's pushed halves, private below the join's
  for (auto& f : older) w.deque.push(&f);
  ASSERT_EQ(static_cast<void*>(w.deque.steal()), static_cast<void*>(&older[0]));  // the one shared at once
  ASSERT_FALSE(w.deque.shared_estimate());
  bool pushed_ran = false;
  auto pushed = [&] { pushed_ran = true; };
  auto here = [&] {
    EXPECT_EQ(w.deque.steal(), nullptr);  // a thief finds nothing shared: it asks
  };
  running_as in(w, fb);
  roost::detail::join_inline<roost::detail::spawn_path::inline_help_first>(w, pushed, here);
  EXPECT_TRUE(pushed_ran);
  EXPECT_TRUE(w.deque.shared_estimate()) << "the request waits: the join's pop did not serve it";
  EXPECT_EQ(static_cast<void*>(w.deque.steal()), static_cast<void*>(&older[1]));
  // Served, the limit is raised again: the next push stays private.
  roost::detail::task_frame later;
  w.deque.push(&later);
  EXPECT_EQ(static_cast<void*>(w.deque.pop()), static_cast<void*>(&later));
}

// The inline pop has no test of the worker's path of its own (issue #25): a worker whose path becomes
// `engine` (an observer installed, engine_base.cpp's set_spawn_paths) closes its deque's inline pops, and a
// join whose half lies private on the deque then leaves it to the engine's join, which makes it a task.
// When the path is inline again, the next joins run their halves inline. Driven directly on a worker ABI
// (the path changed and synced as set_spawn_paths does), no runtime, no timing.
namespace {
struct gated_worker {
  roost::detail::worker_abi w;
  roost::detail::fiber_abi fb;
  static inline std::vector<std::string>* log = nullptr;
  static void engine_wait(roost::detail::worker_abi& w, roost::detail::group_state& g) {
    log->push_back("engine joins");
    roost::detail::job* j = w.deque.pop();
    ASSERT_EQ(static_cast<void*>(j), static_cast<void*>(g.inline_frame)) << "the half is not on top";
    auto* f = static_cast<roost::detail::task_frame*>(j);
    f->ops->run_in_place(f);
  }
  gated_worker() {
    w.path.store(roost::detail::spawn_path::inline_help_first);
    w.engine_wait = &engine_wait;
    fb.worker = &w;
  }
  void set_path(roost::detail::spawn_path p) {
    w.path.store(p);
    roost::detail::sync_inline_pops(w);
  }
};
}  // namespace

TEST(InlineJoin, APathThatBecameEngineSendsAPrivateHalfToTheEnginesJoin) {
  gated_worker gw;
  std::vector<std::string> log;
  gated_worker::log = &log;
  roost::detail::task_frame older[2];  // an ancestor's pushed halves: the join's own push stays private
  for (auto& f : older) gw.w.deque.push(&f);
  auto join = [&](bool go_engine) {
    auto pushed = [&] { log.push_back("pushed half"); };
    auto here = [&] {
      log.push_back("other half");
      if (go_engine) gw.set_path(roost::detail::spawn_path::engine);
    };
    running_as in(gw.w, gw.fb);
    roost::detail::join_inline<roost::detail::spawn_path::inline_help_first>(gw.w, pushed, here);
  };
  join(false);  // warms the deque: the floor is the private part's now
  EXPECT_EQ(log, (std::vector<std::string>{"other half", "pushed half"}));
  log.clear();
  join(true);
  EXPECT_EQ(log, (std::vector<std::string>{"other half", "engine joins", "pushed half"}));
  log.clear();
  gw.set_path(roost::detail::spawn_path::inline_help_first);
  join(false);
  join(false);
  EXPECT_EQ(log, (std::vector<std::string>{"other half", "pushed half", "other half", "pushed half"}));
  EXPECT_FALSE(gw.w.deque.inline_pops_closed());
  for (int i = 1; i >= 0; --i) EXPECT_EQ(static_cast<void*>(gw.w.deque.pop()), static_cast<void*>(&older[i]));
}

// A worker whose policy names its join queue and places children on its deque that its join must see (cats
// while profiling spawns parent-first) keeps its deque's inline pops shut (name_join_queue's
// waits_pop_in_place): such a task_group's first child is joined by the engine, not popped by
// task_group::wait's window and run in place (a review: the floor was closed only for `engine`, and the child
// ran unnamed, unobserved, its profile the parent's). Driven on a bare worker ABI; the deque's floor is
// re-armed first, as a share does.
TEST(InlineJoin, APolicyThatNamesItsQueueKeepsTaskGroupWaitsOffTheWindow) {
  gated_worker gw;
  std::vector<std::string> log;
  gated_worker::log = &log;
  gw.set_path(roost::detail::spawn_path::inline_join);
  gw.w.names_join_queue = true;
  roost::detail::name_join_queue(gw.w, &gw.w.deque, false);
  running_as in(gw.w, gw.fb);
  roost::detail::task_frame older[2];
  for (auto& f : older) gw.w.deque.push(&f);  // the first is shared at once, which re-arms the floor
  bool ran = false;
  roost::detail::group_state g;
  g.owner_fiber = &gw.fb;
  auto body = [&] { ran = true; };
  using frame_t = roost::detail::closure_frame<decltype(body)>;
  auto* f = ::new (static_cast<void*>(g.inline_frame)) frame_t(body, &g, -1.0);  // as the policy's place() pushes it
  g.spawned = 1;
  gw.w.deque.push(f);
  EXPECT_FALSE(roost::detail::try_join_first_child(g)) << "task_group::wait ran the child through the window";
  EXPECT_FALSE(ran);
  ASSERT_EQ(static_cast<void*>(gw.w.deque.pop()), static_cast<void*>(f)) << "the child left the deque";
  f->ops->run_in_place(f);
  EXPECT_TRUE(ran);
  g.spawned = 0;
  for (int i = 1; i >= 0; --i) EXPECT_EQ(static_cast<void*>(gw.w.deque.pop()), static_cast<void*>(&older[i]));
}

// The policy-queue join through ws's windows while the policy names the worker's own deque, whose private
// part already holds an ancestor's halves, so that the join's own push stays private and its pop commits in
// the window: the half comes back inline; a request made while the other half runs is served by the pop (the
// window leaves for the deque's pop on the floor); a path turned `engine` meanwhile sends the half to the
// engine's join; a policy that names no queue gets nothing pushed (the engine joins); naming another queue
// and then the own deque again opens the windows again.
TEST(JoinOnAPolicyQueue, TheWindowsPopPrivatelyServeRequestsAndStepAside) {
  auto warmed = [](policy_queue_worker& pw, roost::detail::task_frame (&older)[2]) {
    for (auto& f : older) pw.w.deque.push(&f);  // the first is shared at once, which re-arms the limit
  };
  constexpr auto J = roost::detail::spawn_path::inline_join;
  std::vector<std::string> log;
  policy_queue_worker::log = &log;
  auto pushed = [&] { log.push_back("pushed half"); };
  {
    policy_queue_worker pw(true);
    roost::detail::task_frame older[2];
    warmed(pw, older);
    running_as in(pw.w, pw.fb);
    const std::int64_t before = pw.w.deque.bottom_index();
    auto here = [&] {
      log.push_back("other half");
      EXPECT_EQ(pw.w.deque.bottom_index(), before + 1);
    };
    EXPECT_TRUE(roost::detail::join_inline<J>(pw.w, pushed, here));
    EXPECT_EQ(log, (std::vector<std::string>{"other half", "pushed half"}));
    EXPECT_EQ(pw.w.deque.bottom_index(), before);
  }
  log.clear();
  {
    policy_queue_worker pw(true);
    roost::detail::task_frame older[2];
    warmed(pw, older);
    running_as in(pw.w, pw.fb);
    ASSERT_EQ(static_cast<void*>(pw.w.deque.steal()), static_cast<void*>(&older[0]));
    auto here = [&] {
      log.push_back("other half");
      EXPECT_EQ(pw.w.deque.steal(), nullptr);  // nothing shared: the thief asks
    };
    EXPECT_TRUE(roost::detail::join_inline<J>(pw.w, pushed, here));
    EXPECT_EQ(log, (std::vector<std::string>{"other half", "pushed half"}));
    EXPECT_EQ(static_cast<void*>(pw.w.deque.steal()), static_cast<void*>(&older[1])) << "the request waits";
  }
  log.clear();
  {
    policy_queue_worker pw(true);
    roost::detail::task_frame older[2];
    warmed(pw, older);
    running_as in(pw.w, pw.fb);
    auto here = [&] {
      log.push_back("other half");
      pw.w.path.store(roost::detail::spawn_path::engine);
      roost::detail::sync_inline_pops(pw.w);
    };
    EXPECT_TRUE(roost::detail::join_inline<J>(pw.w, pushed, here));
    EXPECT_EQ(log, (std::vector<std::string>{"other half", "engine joins", "pushed half"}));
  }
  log.clear();
  {
    policy_queue_worker pw(true);
    running_as in(pw.w, pw.fb);
    pw.name(nullptr);  // an ADWS search deals this join
    auto here = [&] { log.push_back("other half"); };
    EXPECT_FALSE(roost::detail::join_inline<J>(pw.w, pushed, here));
    EXPECT_TRUE(log.empty()) << "ran something though the engine must join";
  }
  log.clear();
  {
    policy_queue_worker pw(true);
    roost::detail::task_frame older[2];
    warmed(pw, older);
    running_as in(pw.w, pw.fb);
    auto here = [&] { log.push_back("other half"); };
    pw.name(&pw.named);  // migrated work: onto the migration queue, by its windows
    const std::int64_t own = pw.w.deque.bottom_index(), named = pw.named.bottom_index();
    auto on_named = [&] {
      log.push_back("other half");
      EXPECT_EQ(pw.named.bottom_index(), named + 1);
      EXPECT_EQ(pw.w.deque.bottom_index(), own);
    };
    EXPECT_TRUE(roost::detail::join_inline<J>(pw.w, pushed, on_named));
    pw.name(&pw.w.deque);  // back to the own deque: the windows open at once
    EXPECT_EQ(pw.w.deque.joins_shut(), 0);
    EXPECT_TRUE(roost::detail::join_inline<J>(pw.w, pushed, here));
    EXPECT_EQ(log, (std::vector<std::string>{"other half", "pushed half", "other half", "pushed half"}));
    for (int i = 1; i >= 0; --i) EXPECT_EQ(static_cast<void*>(pw.w.deque.pop()), static_cast<void*>(&older[i]));
  }
}

// A task_group spawn that the engine makes (a path other than the inline help-first one) hands the child to the
// worker the task runs on once the closure is built: the closure's move constructor is user code, and a
// work-first join in it whose continuation a thief took moves the task to another worker (here, the
// constructor does what that migration does to the thread and the fiber). Read before, as the argument
// beside the frame's construction, the worker was the one the task had left.
namespace {
struct spawn_recording_worker {
  roost::detail::worker_abi w;
  static inline std::vector<roost::detail::worker_abi*>* spawned_on = nullptr;
  static void engine_spawn(roost::detail::worker_abi& on, roost::detail::group_state&, roost::detail::task_frame& f) {
    spawned_on->push_back(&on);
    f.ops->run_in_place(&f);  // run at once: the group counts nothing, so its wait has nothing to join
  }
  spawn_recording_worker() {
    w.path.store(roost::detail::spawn_path::engine);
    w.engine_spawn = &engine_spawn;
  }
};
struct moves_the_task_when_moved {
  roost::detail::worker_abi* to;
  roost::detail::fiber_abi* fb;
  int* ran;
  moves_the_task_when_moved(roost::detail::worker_abi* t, roost::detail::fiber_abi* f, int* r) : to(t), fb(f), ran(r) {}
  moves_the_task_when_moved(moves_the_task_when_moved&& o) noexcept : to(o.to), fb(o.fb), ran(o.ran) {
    fb->worker = to;  // what a resumption on another worker does (engine::become, set_current_worker)
    roost::detail::t_running_worker = to;
  }
  void operator()() const { ++*ran; }
};
}  // namespace

TEST(TaskGroupSpawn, GoesToTheWorkerTheTaskRunsOnAfterTheClosuresConstructor) {
  spawn_recording_worker left, now;
  roost::detail::fiber_abi fb;
  fb.worker = &left.w;
  std::vector<roost::detail::worker_abi*> spawned_on;
  spawn_recording_worker::spawned_on = &spawned_on;
  int ran = 0;
  {
    running_as in(left.w, fb);
    roost::task_group tg;
    tg.run(moves_the_task_when_moved(&now.w, &fb, &ran));
    tg.wait();
  }
  EXPECT_EQ(ran, 1);
  ASSERT_EQ(spawned_on.size(), 1u);
  EXPECT_EQ(spawned_on[0], &now.w) << "spawned on the worker the task had left";
}

// The inline two-way join's slot (task_frame.hpp, "The join's slot"): the group's balance and error slot are
// left unwritten by the join, and written by whoever claims the half's frame first, the owner whose pop
// failed (settle_join_slot) or a taker (take_join_slot, which the engine calls as it names the frame).
// Driven directly on a group and frame, the fields filled with garbage first as a stack would leave them.
namespace {
struct join_slot {
  alignas(roost::detail::group_state) unsigned char bytes[sizeof(roost::detail::group_state)];
  roost::detail::group_state* g;
  roost::detail::task_frame* f;
  int ran = 0;
  join_slot() {
    std::memset(bytes, 0xab, sizeof bytes);
    g = ::new (static_cast<void*>(bytes)) roost::detail::group_state(roost::detail::group_state::inline_join_t{});
    auto body = [this] { ++ran; };
    using frame_t = roost::detail::closure_frame<decltype(body)>;
    f = ::new (static_cast<void*>(g->inline_frame)) frame_t(body, frame_t::join_unnamed_t{});
  }
  bool written() const {
    return g->remote_balance.load() == 0 && g->error.load() == nullptr;
  }
};
using kind = roost::detail::job::kind;
}  // namespace

TEST(JoinSlot, TheOwnersClaimWritesTheFieldsAndATakerThenFindsThemWritten) {
  join_slot s;
  ASSERT_EQ(s.f->k(), kind::fresh_join);
  ASSERT_FALSE(s.written()) << "the test's garbage did not stay";
  EXPECT_EQ(roost::detail::group_of(*s.f), s.g) << "an unnamed join frame's group is the slot's";
  roost::detail::settle_join_slot(*s.g);
  EXPECT_TRUE(s.written());
  EXPECT_EQ(s.f->k(), kind::fresh_unnamed) << "a later taker names it as any unnamed frame";
  // What the engine's join does next: a remote child's end adds to the balance. A taker that came later
  // must not write the fields again, which would lose the add.
  s.g->remote_balance.fetch_add(1);
  EXPECT_FALSE(roost::detail::take_join_slot(*s.f, *s.g)) << "the taker claimed a frame the owner had";
  EXPECT_EQ(s.g->remote_balance.load(), 1);
}

TEST(JoinSlot, ATakersClaimWritesTheFieldsAndTheOwnerLeavesThemAsTheChildLeftThem) {
  join_slot s;
  ASSERT_TRUE(roost::detail::take_join_slot(*s.f, *s.g));
  EXPECT_TRUE(s.written());
  EXPECT_EQ(s.f->k(), kind::fresh) << "the taker names the frame";
  // The child ran on the taker and ended remotely, with an exception, before its owner's pop failed.
  static std::exception_ptr thrown = std::make_exception_ptr(std::runtime_error("child"));
  s.g->remote_balance.fetch_add(1);
  s.g->error.store(&thrown);
  roost::detail::settle_join_slot(*s.g);
  EXPECT_EQ(s.g->remote_balance.load(), 1) << "the owner wrote the balance after the child's end";
  EXPECT_EQ(s.g->error.load(), &thrown) << "the owner dropped the child's exception";
  EXPECT_EQ(s.f->k(), kind::fresh);
}

// Both sides at once, many times: whichever claims first, the fields are written exactly once, before the
// child's end adds to the balance, so the balance ends at one and the owner never reads garbage. No timing:
// each round's two threads start together at a latch, and every interleaving must give the same result.
TEST(JoinSlot, OwnerAndTakerAtOnceWriteTheFieldsOnceBeforeTheChildsEnd) {
  const int rounds = roost_test::under_sanitizer() ? 2000 : 20000;
  std::atomic<int> owner_first{0}, taker_first{0};
  for (int r = 0; r < rounds; ++r) {
    join_slot s;
    std::atomic<int> go{0};
    std::int64_t owner_saw = -1;
    std::thread taker([&] {
      go.fetch_add(1);
      while (go.load() < 2) std::this_thread::yield();
      if (roost::detail::take_join_slot(*s.f, *s.g)) taker_first.fetch_add(1);
      s.g->remote_balance.fetch_add(1);  // the half ran here and ended remotely
    });
    go.fetch_add(1);
    while (go.load() < 2) std::this_thread::yield();
    roost::detail::settle_join_slot(*s.g);
    owner_saw = s.g->remote_balance.load();
    taker.join();
    if (s.f->k() == kind::fresh_unnamed) owner_first.fetch_add(1);
    ASSERT_TRUE(owner_saw == 0 || owner_saw == 1) << "round " << r << ": the owner read " << owner_saw;
    ASSERT_EQ(s.g->remote_balance.load(), 1) << "round " << r << ": the child's end was written over";
    ASSERT_EQ(s.g->error.load(), nullptr) << "round " << r;
  }
  EXPECT_EQ(owner_first.load() + taker_first.load(), rounds) << "each round has exactly one claimer";
  std::printf("the owner claimed first in %d rounds of %d, the taker in %d\n", owner_first.load(), rounds,
              taker_first.load());
}

// A join's frame may lie in the private part of a deque whose owner shares it, stamping it with its
// floating-point state (job::stamp_fp_state), while the join's owner, moved to another worker, claims it
// (settle_join_slot): the stamp must neither undo the claim's release nor make the claim fail unclaimed
// (both were seen with a plain or-assignment and a single compare-exchange), and the stamp must stay.
TEST(JoinSlot, AStampDuringTheOwnersClaimNeitherUndoesItNorIsLost) {
  const int rounds = roost_test::under_sanitizer() ? 2000 : 20000;
  const std::uint64_t state = roost::detail::fp_control::capture();
  if (state == 0) GTEST_SKIP() << "no floating-point state to stamp on this architecture";
  for (int r = 0; r < rounds; ++r) {
    join_slot s;
    std::atomic<int> go{0};
    std::thread deque_owner([&] {
      go.fetch_add(1);
      while (go.load() < 2) std::this_thread::yield();
      s.f->stamp_fp_state(state);
    });
    go.fetch_add(1);
    while (go.load() < 2) std::this_thread::yield();
    roost::detail::settle_join_slot(*s.g);
    deque_owner.join();
    ASSERT_TRUE(s.written()) << "round " << r << ": the owner's claim wrote nothing";
    ASSERT_EQ(s.f->k(), kind::fresh_unnamed) << "round " << r << ": the claim's release was undone";
    ASSERT_EQ(s.f->fp_state(), state) << "round " << r << ": the stamp was lost";
  }
}
