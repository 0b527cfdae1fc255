// adws-ml (seed 003 ch. 5): the memory tree read from the topology; the mapping that level descent and
// per-level dealing predict, the same in every iteration (observation hook, stealing off); at no moment do
// the leaves running under one cache belong to more data than that cache holds (virtual 2x4 and 4x4, with
// stealing); wrong hints keep results exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "adws_ml_checker.hpp"
#include "api/runtime_core.hpp"
#include "roost/roost.hpp"
#include "sched/adws.hpp"
#include "sched/adws_ml.hpp"
#include "sched/engine_of.hpp"
#include "test_util.hpp"
#include "topology/memory_tree.hpp"

namespace tp = roost::topo;

namespace {
tp::memory_tree tree_of(const std::string& desc, unsigned workers) {
  tp::topology t = tp::topology::load(desc);
  tp::placement pl = tp::place_workers(t, workers, false, {});
  return tp::build_memory_tree(t, pl, workers);
}
}  // namespace

TEST(MemoryTree, PackagesOverCoresFromASyntheticTopology) {
  tp::memory_tree m = tree_of("pack:2 l3:1(size=1MiB) core:4 pu:1", 8);
  ASSERT_EQ(m.depth(), 3u) << m.summary();
  EXPECT_EQ(m.levels[0].groups, 1u);
  EXPECT_EQ(m.levels[0].fanout, 2u);
  EXPECT_EQ(m.levels[1].groups, 2u);
  EXPECT_DOUBLE_EQ(m.levels[1].group_capacity, 1 << 20);
  EXPECT_EQ(m.levels[1].fanout, 4u);
  EXPECT_EQ(m.levels[1].head, (std::vector<unsigned>{0, 4}));
  EXPECT_EQ(m.levels[2].groups, 8u);  // no per-core cache described: leaves of capacity 0
  EXPECT_DOUBLE_EQ(m.levels[2].group_capacity, 0);
  EXPECT_EQ(m.levels[2].group_of_worker[5], 5u);
  EXPECT_EQ(m.summary(), "DRAM > 2 x L3 1 MiB > 8 x worker");
}

TEST(MemoryTree, PrivateCachesAreTheLeavesAndL1MergesIntoL2) {
  tp::memory_tree m = tree_of("pack:1 l3:1(size=8MiB) l2:4(size=256KiB) l1d:1(size=32KiB) core:1 pu:1", 4);
  ASSERT_EQ(m.depth(), 3u) << m.summary();
  EXPECT_EQ(m.summary(), "DRAM > 1 x L3 8 MiB > 4 x L2 256 KiB");
  EXPECT_EQ(m.levels[0].fanout, 1u);
  EXPECT_EQ(m.levels[1].fanout, 4u);
}

TEST(MemoryTree, EachCoreItsOwnPackageCache) {  // DESIGN §4's way to meet real caches on this machine
  tp::memory_tree m = tree_of("pack:2 l3:1(size=1MiB) core:1 pu:1", 2);
  ASSERT_EQ(m.depth(), 2u) << m.summary();
  EXPECT_EQ(m.summary(), "DRAM > 2 x L3 1 MiB");
}

TEST(MemoryTree, MoreWorkersThanPusGetLeavesOfTheirOwn) {
  tp::memory_tree m = tree_of("pack:2 l3:1(size=1MiB) core:1 pu:1", 4);  // workers 0, 2 on PU 0
  ASSERT_EQ(m.depth(), 3u) << m.summary();
  EXPECT_EQ(m.levels[2].groups, 4u);
  EXPECT_EQ(m.levels[1].group_of_worker[2], m.levels[1].group_of_worker[0]);
}

// 6 workers on two packages of two L2s of two cores: the second package fills one of its L2s, whose workers
// are all its L3's, so its workers share one cache, the first package's two. adws-ml cannot use such a tree:
// it says which workers differ, and says so on stderr (it was said only under ROOST_VERBOSE, in words that
// spoke of caches of different depths: an outside-user campaign).
TEST(MemoryTree, WorkersThatFillTheCachesUnevenlyAreNamed) {
  const char* machine = "pack:2 l3:1(size=1MiB) l2:2(size=256KiB) core:2 pu:1";
  tp::memory_tree m = tree_of(machine, 6);
  EXPECT_EQ(m.depth(), 2u) << m.summary();
  EXPECT_NE(m.note.find("the workers do not fill the caches evenly (worker 0 shares 2 caches with other workers, "
                        "worker 4 shares 1;"), std::string::npos) << m.note;
  EXPECT_TRUE(tree_of(machine, 8).note.empty()) << tree_of(machine, 8).note;
  testing::internal::CaptureStderr();
  {
    roost::options o;
    o.scheduler = "adws-ml";
    o.topology = machine;
    o.workers = 6;
    roost::runtime rt(o);
    EXPECT_EQ(rt.run([] { return 7; }), 7);
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("roost: adws-ml: the workers do not fill the caches evenly"), std::string::npos) << err;
  EXPECT_NE(err.find("ROOST_WORKERS"), std::string::npos) << err;
}

// The most workers a runtime may have, oversubscribed on two PUs: the tree was built from a set of workers per
// worker and cache, quadratic in workers (1.26 GB and 14 s to make an adws-ml runtime of 4,096; an
// outside-user campaign). The same tree, from counts.
TEST(MemoryTree, FourThousandWorkersOnTwoCaches) {
  tp::memory_tree m = tree_of("pack:2 l3:1(size=1MiB) core:1 pu:1", 4096);  // even workers on PU 0
  ASSERT_EQ(m.depth(), 3u) << m.summary();
  EXPECT_EQ(m.summary(), "DRAM > 2 x L3 1 MiB > 4096 x worker");
  EXPECT_EQ(m.levels[1].head, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(m.levels[1].group_of_worker[4094], 0u);
  EXPECT_EQ(m.levels[1].group_of_worker[4095], 1u);
  EXPECT_EQ(m.levels[1].fanout, 2048u);
  // Leaves ordered by parent, then head: PU 0's workers first.
  EXPECT_EQ(m.levels[2].head[2047], 4094u);
  EXPECT_EQ(m.levels[2].head[2048], 1u);
  EXPECT_EQ(m.levels[2].group_of_worker[3], 2049u);
}

namespace {

using roost_test::scoped_env;

using roost_test::adws_ml::cache_check;
using roost_test::adws_ml::kLeaf;
using roost_test::adws_ml::leaf_map;

std::vector<unsigned char> g_bytes(16 << 20, 1);

// chunks (adws_ml_checker.hpp) whose leaves read their 64 KiB.
long chunks(std::size_t lo, std::size_t hi) {
  return roost_test::adws_ml::chunks(lo, hi, [](std::size_t lo, std::size_t hi) {
    long s = 0;
    for (std::size_t i = lo; i < hi; i += 64) s += g_bytes[i];
    // A kernel long enough for leaves on different workers to overlap in time even when 8 or 16 workers
    // share this machine's 2 CPUs (a sleeping leaf needs no CPU to stay "running").
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    return s;
  });
}

long expected_sum(std::size_t n) { return static_cast<long>(n / 64); }

}  // namespace

// 8 MiB over 2 packages of 4 cores with 1 MiB caches: the top group does not fit both caches (2 MiB), so it
// is dealt over the packages (the first child takes the upper package); a package runs its 4 MiB alone,
// down to the 1 MiB tasks, each of which fits its cache, moves down and is dealt over the package's
// cores: quarter j of a 1 MiB piece goes to core 3 - j. Every iteration maps the same way.
TEST(AdwsMl, DescentDealsEachCacheSizedPieceOverItsPackage) {
  scoped_env no_steal("ROOST_ADWS_STEAL", "false");
  roost::options o;
  o.scheduler = "adws-ml";
  o.topology = "pack:2 l3:1(size=1MiB) core:4 pu:1";
  roost::runtime rt(o);
  const std::size_t n = 8 << 20;
  for (int it = 0; it < 3; ++it) {
    leaf_map lm(n);
    roost::set_task_observer(&lm);
    EXPECT_EQ(rt.run([&] { return chunks(0, n); }), expected_sum(n));
    roost::set_task_observer(nullptr);
    ASSERT_EQ(lm.worker_of_leaf.size(), n / kLeaf);
    int wrong = 0;
    for (const auto& [leaf, worker] : lm.worker_of_leaf) {
      const int predicted = roost_test::adws_ml::predicted_worker(leaf, n, 2, 4, 1 << 20);
      if (worker != predicted && wrong++ < 5)
        ADD_FAILURE() << "iteration " << it << ": leaf " << leaf << " ran on worker " << worker << ", predicted " << predicted;
    }
  }
  EXPECT_NE(rt.describe().find("memory groups: DRAM > 2 x L3 1 MiB > 8 x worker"), std::string::npos) << rt.describe();
}

class AdwsMlCapacity : public ::testing::TestWithParam<std::pair<const char*, unsigned>> {};

TEST_P(AdwsMlCapacity, LeavesUnderOneCacheNeverOutgrowIt) {
  const auto [topo, cores] = GetParam();
  roost::options o;
  o.scheduler = "adws-ml";
  o.topology = topo;
  roost::runtime rt(o);
  // More data than all the caches together: a group that fits them together is aggregated (dealt flat
  // over all their cores, stealing across caches, as the thesis does) and is not what this checks.
  const std::size_t n = roost_test::under_sanitizer() ? (8 << 20) : (16 << 20);
  for (int it = 0; it < 3; ++it) {
    cache_check chk(n, 1 << 20, cores);
    roost::set_task_observer(&chk);
    EXPECT_EQ(rt.run([&] { return chunks(0, n); }), expected_sum(n));
    roost::set_task_observer(nullptr);
    EXPECT_EQ(chk.leaves, n / kLeaf);
    EXPECT_EQ(chk.violations, 0u) << "worst: leaves of a " << chk.worst << "-byte subtree ran under one 1 MiB cache";
  }
}

INSTANTIATE_TEST_SUITE_P(Topologies, AdwsMlCapacity,
                         ::testing::Values(std::make_pair("pack:2 l3:1(size=1MiB) core:4 pu:1", 4u),
                                           std::make_pair("pack:4 l3:1(size=1MiB) core:4 pu:1", 4u)));

// That the same check fails for single-level adws (the check can fail) depends on which leaves happen to run
// at the same moment: SimPolicies.AdwsMlCachePiecesStayUnderTheirCache asserts it under seeded interleavings.

TEST(AdwsMl, WrongDataSizesKeepResultsExact) {
  roost::options o;
  o.scheduler = "adws-ml";
  o.topology = "pack:2 l3:1(size=256KiB) core:2 pu:1";
  roost::runtime rt(o);
  // Groups that claim 0 bytes or a terabyte, alternately, and random work hints.
  std::function<long(std::size_t, std::size_t, int)> f = [&](std::size_t lo, std::size_t hi, int d) -> long {
    if (hi - lo <= kLeaf) return static_cast<long>((hi - lo) / 64);
    const std::size_t mid = lo + (hi - lo) / 2;
    long a = 0, b = 0;
    roost::task_group tg(3, d % 2 ? 0.0 : 1e12);
    tg.run([&] { a = f(lo, mid, d + 1); }, (d % 3) * 0.7);
    tg.run([&] { b = f(mid, hi, d + 1); }, 2.0);
    tg.wait();
    return a + b;
  };
  for (int it = 0; it < 3; ++it) EXPECT_EQ(rt.run([&] { return f(0, 4 << 20, it); }), static_cast<long>((4 << 20) / 64));
}

// Two stalls of adws-ml that an outside-user campaign found, each on a machine of one L3 over two L2s shared
// by two cores (and its SMT twin), simulated under several seeds (each interleaving is replayed exactly) and
// natively (a stall there ends in the test's timeout):
//  * a group dealt over the L2s (its data fits the L3, not an L2) whose opener's continuation a thief took
//    and there opened a plain group, which descended on the thief, then joined the dealt group first: the
//    join returned it to the thief, and the opener's worker stayed at the L2 level, where nobody took the
//    root's continuation waiting one level up (free_above);
//  * a plain group's child naming its parent's node after the parent joined an older descended group and
//    gave that node back: the child's next group took the same node as its own, its own parent, and a
//    thief's climb went round for ever (adws_nodes.hpp, reserve_one).
namespace {
long out_of_order_descents(double c_bytes) {
  long done = 0;
  roost::task_group a(0, 30e6);
  a.run([&] {
    roost::task_group c(3, c_bytes);
    c.run([] {});
    c.run([] {
      roost::task_group e;
      e.run([] {});
      e.wait();
    });
    roost::task_group d;
    d.run([] {});
    c.wait();
    d.wait();
    done = 1;
  });
  a.wait();
  return done;
}
void leaf() {}
long older_joined_first() {
  std::atomic<long> leaves{0};
  const auto counted = [&] { leaves.fetch_add(1); };
  const auto p = [&] {
    roost::task_group g0(0, 30e6), g1(0, 3e6), g2;
    g0.run(counted), g0.run(counted), g1.run(counted), g2.run(counted), g2.run(counted), g2.run(counted);
    g0.wait(), g1.wait(), g2.wait();
  };
  const auto q = [&] {
    roost::task_group g0(0, 1e12), g1(0, 7e6), g2;
    g0.run(counted), g1.run(counted), g1.run(counted), g1.run(counted), g2.run(counted), g2.run(counted);
    g0.wait(), g1.wait(), g2.wait();
  };
  const auto y = [&] {
    roost::task_group g(0, 3e6);
    g.run(p), g.run(q);
    roost::task_group z;
    z.run(counted), z.run(counted);
    z.wait();
    g.wait();
  };
  roost::task_group g0(0, 3e6), g1;
  g0.run(counted);
  g1.run(leaf), g1.run(y);
  g0.wait(), g1.wait();
  return leaves.load();
}
}  // namespace

TEST(AdwsMl, OutOfOrderJoinsOnSharedL2sComplete) {
  for (const char* machine : {"pack:1 l3:1(size=8MiB) l2:2(size=1MiB) core:2 pu:1",
                              "pack:1 l3:1(size=8MiB) l2:4(size=1MiB) core:1 pu:2"}) {
    for (int seed = 1; seed <= 8; ++seed) {
      roost::options o;
      o.scheduler = "adws-ml";
      o.topology = machine;
      o.workers = 4;
      o.platform = "sim";
      o.sim_seed = static_cast<std::uint64_t>(seed);
      roost::runtime rt(o);
      for (int it = 0; it < 3; ++it) {
        EXPECT_EQ(rt.run([] { return out_of_order_descents(3e6); }), 1) << machine << " seed " << seed;
        EXPECT_EQ(rt.run([] { return older_joined_first(); }), 15) << machine << " seed " << seed;
      }
    }
    roost::options o;
    o.scheduler = "adws-ml";
    o.topology = machine;
    o.workers = 4;
    roost::runtime rt(o);
    for (int it = 0; it < 2000; ++it) {
      ASSERT_EQ(rt.run([] { return out_of_order_descents(3e6); }), 1) << machine;
      ASSERT_EQ(rt.run([] { return older_joined_first(); }), 15) << machine;
    }
  }
}


// Dealt groups joined out of order (two outside-user campaigns). Every task opens 2-5 dealt groups whose
// totals share out its range, each with the task's whole data as its size; the last child sometimes runs
// inline, a plain group sometimes opens and joins between two spawns, and the groups are joined (or
// destroyed without a wait) in a shuffled order.
//  * Without stealing, on a machine with an L2 level, it hung (simulated seed 1 every time, natively about
//    1 run in 50): a held-down head ran a task returned to it, whose descent moved the head a level up, and
//    there the held task's own continuation went to the upper level's queue, which the head no longer
//    served once it went back down (adws_ml.cpp, publish_continuation_slow).
//  * With stealing, on 32 simulated workers, a plain child named its parent's node after the parent joined
//    that node's group; the node, reused, led a chain walk round a cycle for ever (adws_ml.hpp, holders).
namespace {
unsigned mix32(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  return x ^ (x >> 16);
}
long dealt_out_of_order(int lo, int hi) {
  if (hi - lo <= 2) return static_cast<long>(lo) + (hi - lo == 2 ? lo + 1 : 0);
  const unsigned h = mix32(static_cast<unsigned>(lo) * 977u + static_cast<unsigned>(hi) * 13u + 2u);
  const int k = std::min<int>(2 + static_cast<int>(h % 4), hi - lo), step = (hi - lo) / k;
  std::vector<long> r(static_cast<std::size_t>(k), 0);
  std::vector<std::unique_ptr<roost::task_group>> gs;
  double remaining = hi - lo;
  for (int j = 0; j < k; ++j) {
    const int a = lo + j * step, b = j == k - 1 ? hi : a + step;
    gs.push_back(std::make_unique<roost::task_group>(remaining, static_cast<double>(hi - lo) * 65536));
    const unsigned mode = (h >> (4 + 2 * j)) & 3;
    if (mode == 3 && j == k - 1) {
      r[static_cast<std::size_t>(j)] = dealt_out_of_order(a, b);
      continue;
    }
    gs.back()->run([&r, j, a, b] { r[static_cast<std::size_t>(j)] = dealt_out_of_order(a, b); }, b - a);
    remaining -= b - a;
    if (mode == 2) {
      roost::task_group plain;
      plain.run([] {});
      plain.wait();
    }
  }
  std::vector<int> order(static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) order[static_cast<std::size_t>(j)] = j;
  for (int j = k - 1; j > 0; --j)
    std::swap(order[static_cast<std::size_t>(j)], order[mix32(h + static_cast<unsigned>(j)) % static_cast<unsigned>(j + 1)]);
  for (int j : order) {
    auto& g = gs[static_cast<std::size_t>(j)];
    if ((mix32(h ^ static_cast<unsigned>(j)) & 7) == 0) g.reset();
    else g->wait();
  }
  gs.clear();
  long s = 0;
  for (long x : r) s += x;
  return s;
}
}  // namespace

TEST(AdwsMl, NoStealOutOfOrderDealtGroupsComplete) {
  roost::options o;
  o.scheduler = "adws-ml";
  o.topology = "pack:2 l3:1(size=1MiB) l2:2(size=256KiB) core:2 pu:1";
  o.platform = "sim";
  o.sim_seed = 1;
  o.adws_steal = roost::adws_stealing::off;
  roost::runtime rt(o);
  const int n = 1500;
  EXPECT_EQ(rt.run([&] { return dealt_out_of_order(0, n); }), static_cast<long>(n) * (n - 1) / 2);
}

// The same programs over seeded interleavings, with and without stealing, on four machines. A task that ends
// naming a node given back stops the program with an internal error (adws_ml.hpp, release), whatever the
// addresses that made the stale node look like the task's own.
// Nodes go home (adws_nodes.hpp, node_pool::give_back): a node given back on another worker than the one
// whose pool made it stayed there, and the opener allocated a new one, so over many runs the pools grew
// without bound while none was in use (a review: 56 -> 770 nodes over 3,000 runs on 8 simulated workers).
namespace {
// adws or adws-ml, counting its pools' nodes at the end of each run.
template <class Policy>
struct node_counting : Policy {
  using Policy::Policy;
  static inline std::atomic<std::size_t> after_run{0};
  void iteration_end() {
    Policy::iteration_end();
    after_run.store(this->nodes_allocated(), std::memory_order_relaxed);
  }
};
using node_counting_adws_ml = node_counting<roost::sched::adws_ml_policy>;
using node_counting_adws = node_counting<roost::sched::adws_policy>;
}  // namespace

TEST(AdwsMl, NodesStayFlatOverManyRunsOfOutOfOrderJoins) {
  for (const char* machine : {"pack:2 l3:1(size=1MiB) l2:2(size=256KiB) core:2 pu:1",
                              "pack:2 l3:2(size=8MiB) l2:4(size=1MiB) core:2 pu:2"}) {
    roost::options o;
    o.scheduler = "adws-ml";
    o.topology = machine;
    o.platform = "sim";
    o.sim_seed = 1;
    o.adws_steal = roost::adws_stealing::on;
    roost::detail::runtime_core core(o, &roost::sched::make_engine_of<node_counting_adws_ml>);
    // Under a sanitizer fewer runs (flatness itself is the release build's to show): 400 simulated runs took
    // 96 s of TSan's (GCC's runtime, whose vector clocks grow with the fibers), and 160 still 60 s, for
    // nothing the first runs do not show it: TSan checks the host threads' hand-overs, the same every run.
    const int half_runs = roost_test::under_tsan() ? 10 : roost_test::under_sanitizer() ? 40 : 300;
    std::size_t half = 0;
    for (int run = 1; run <= 2 * half_runs; ++run) {
      long got = 0;
      auto body = [&] { got = dealt_out_of_order(7, 1007); };
      core.run([](void* p) { (*static_cast<decltype(body)*>(p))(); }, &body);
      ASSERT_EQ(got, 1000L * (14 + 999) / 2) << machine << ", run " << run;
      if (run == half_runs) half = node_counting_adws_ml::after_run.load(std::memory_order_relaxed);
    }
    // The pools settle at what the busiest interleaving so far needed (simulated seed 1, runs 300 -> 600: 78 ->
    // 81 nodes, and 306 -> 317 on 64 workers; runs 40 -> 80, as under a sanitizer: 68 -> 72 and 282 -> 288);
    // going nowhere home they grew by 0.2 and 0.7 nodes a run (141 -> 201 and 502 -> 722). The simulation
    // replays exactly, so these counts are the same at every run of the test.
    const std::size_t now = node_counting_adws_ml::after_run.load(std::memory_order_relaxed);
    EXPECT_GT(half, 0u) << machine << ": no node counted";
    EXPECT_LE(now, half + half / 20 + 10) << machine << ": " << half << " nodes after " << half_runs << " runs, "
                                          << now << " after " << 2 * half_runs;
  }
}

// A group's first spawn that throws after the group opened (a dealt child too large for the group's slot,
// whose move throws as the engine moves it to its pool) leaves the group unopened: the open is undone at
// once, as the join would (a review: the task kept the group's node and level, and a node leaked a run, under
// adws and adws-ml). Counted over 200 runs, with the same program without the throw beside it.
namespace {
struct throws_when_moved {
  char pad[256] = {};  // larger than the group's inline slot: the engine moves it to its pool
  std::atomic<int>* ran;
  bool throws;
  throws_when_moved(std::atomic<int>* r, bool t) : ran(r), throws(t) {}
  throws_when_moved(const throws_when_moved& o) : ran(o.ran), throws(o.throws) {}
  throws_when_moved(throws_when_moved&& o) : ran(o.ran), throws(o.throws) {
    if (throws) throw std::runtime_error("moved");
  }
  void operator()() const { ran->fetch_add(1); }
};
void first_spawn_throws(bool throws, std::atomic<int>& thrown, std::atomic<int>& ran) {
  roost::task_group outer(2.0);
  outer.run([&] {
        roost::task_group g(2.0);
        throws_when_moved child(&ran, throws);
        try {
          g.run(child, 1.0);  // dealt to another worker: moved to the pool, and shipped
        } catch (const std::runtime_error&) {
          thrown.fetch_add(1);
        }
        g.wait();
      },
      1.0);
  outer.run([] {}, 1.0);
  outer.wait();
}
template <class Policy>
std::size_t nodes_grown(bool throws, const char* scheduler, int& thrown_runs) {
  roost::options o;
  o.scheduler = scheduler;
  o.topology = "pack:4 l3:1(size=1MiB) core:1 pu:1";
  o.platform = "sim";
  o.sim_seed = 1;
  o.adws_steal = roost::adws_stealing::off;
  roost::detail::runtime_core core(o, &roost::sched::make_engine_of<Policy>);
  std::atomic<int> thrown{0}, ran{0};
  std::size_t at10 = 0;
  for (int run = 1; run <= 200; ++run) {
    auto body = [&] { first_spawn_throws(throws, thrown, ran); };
    core.run([](void* p) { (*static_cast<decltype(body)*>(p))(); }, &body);
    if (run == 10) at10 = Policy::after_run.load(std::memory_order_relaxed);
  }
  thrown_runs = thrown.load();
  EXPECT_GT(at10, 0u) << scheduler << ": no node counted";
  EXPECT_EQ(ran.load(), throws ? 0 : 200) << scheduler;
  return Policy::after_run.load(std::memory_order_relaxed) - at10;
}
}  // namespace

TEST(AdwsMl, AFirstSpawnThatThrowsUndoesItsGroupsOpen) {
  int thrown = 0;
  EXPECT_LE((nodes_grown<node_counting_adws_ml>(false, "adws-ml", thrown)), 1u);
  EXPECT_EQ(thrown, 0);
  EXPECT_LE((nodes_grown<node_counting_adws_ml>(true, "adws-ml", thrown)), 1u);
  EXPECT_EQ(thrown, 200);
  EXPECT_LE((nodes_grown<node_counting_adws>(true, "adws", thrown)), 1u);
  EXPECT_EQ(thrown, 200);
}

TEST(AdwsMl, OutOfOrderDealtGroupsCompleteOverSeededInterleavings) {
  const char* machines[] = {"pack:2 l3:1(size=1MiB) l2:2(size=256KiB) core:2 pu:1",
                            "pack:2 l3:1(size=1MiB) core:4 pu:1",
                            "pack:4 l3:1(size=4MiB) l2:2(size=512KiB) core:2 pu:1",
                            "pack:2 l3:2(size=1MiB) l2:2(size=256KiB) core:2 pu:2"};
  for (const char* machine : machines)
    for (auto steal : {roost::adws_stealing::off, roost::adws_stealing::on})
      for (unsigned seed = 1; seed <= (roost_test::under_tsan() ? 4u : roost_test::under_sanitizer() ? 15u : 40u); ++seed) {
        roost::options o;
        o.scheduler = "adws-ml";
        o.topology = machine;
        o.platform = "sim";
        o.sim_seed = seed;
        o.adws_steal = steal;
        roost::runtime rt(o);
        const int lo = static_cast<int>(seed) * 7, n = 600 + static_cast<int>(seed * 37 % 900);
        ASSERT_EQ(rt.run([&] { return dealt_out_of_order(lo, lo + n); }),
                  static_cast<long>(n) * (2L * lo + n - 1) / 2)
            << machine << ", stealing " << (steal == roost::adws_stealing::on ? "on" : "off") << ", seed " << seed;
      }
}
