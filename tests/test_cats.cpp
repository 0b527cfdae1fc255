// cats (seed 000 §3.2): the partition rule on each case of Fig. 6, the SOID table on a synthetic tree with
// injected footprints, per-task attribution of counter readings (the perf_event path, with injected
// readings since this machine has no PMU), and whole runs: the profile of a binary tree annotated with
// roost::touch puts the leaf inter-socket tasks where eq. 1 says, later iterations keep subtrees in one
// socket, CPU-bound or unannotated programs run as ws, reprofile() learns again.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <csignal>
#include <fstream>
#include <sstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "cab_checker.hpp"
#include "cats_checker.hpp"
#include "profile/footprint.hpp"
#include "profile/soid_tree.hpp"
#include "roost/roost.hpp"

namespace pf = roost::profile;

TEST(CatsPartition, EachCaseOfFigure6) {
  const std::uint64_t cache = 1000;
  EXPECT_EQ(pf::classify(5000, 9000, cache), pf::tier::inter);  // (a) does not fit: inter-socket
  EXPECT_EQ(pf::classify(800, 5000, cache), pf::tier::leaf);    // (b) fits, parent does not: leaf
  EXPECT_EQ(pf::classify(300, 800, cache), pf::tier::intra);    // (c) both fit: intra-socket
  EXPECT_EQ(pf::classify(900, std::nullopt, cache), pf::tier::leaf);   // a root that fits
  EXPECT_EQ(pf::classify(1000, 1001, cache), pf::tier::leaf);          // exactly the cache fits
}

// The tree cats builds while profiling, driven by hand: eq. 1 (leaves own 30 bytes, inner tasks 0, plus
// what is credited to them), the partition of what is left at the end, and the children's nodes freed
// below a task whose subtree fits.
TEST(CatsPartition, SoidTreeOnASyntheticTree) {
  for (std::uint64_t cache : {50, 70, 500}) {
    pf::soid_tree t;
    t.clear();
    auto* root = t.make_root();
    auto* a = t.add_child(*root, 0);
    auto* b = t.add_child(*root, 1);
    pf::soid_tree::node* leaves[4];
    for (int i = 0; i < 4; ++i) {
      leaves[i] = t.add_child(i < 2 ? *a : *b, static_cast<std::uint32_t>(i % 2));
      pf::soid_tree::credit(*leaves[i], 30);
    }
    for (int i = 0; i < 4; ++i) t.end(*leaves[i], 0, cache);
    t.end(*a, 2, cache);
    t.end(*b, 2, cache);
    t.end(*root, 2, cache);
    EXPECT_EQ(root->soid, 120u);
    EXPECT_EQ(a->soid, 60u);
    auto s = t.finish(cache);
    EXPECT_TRUE(s.complete());
    EXPECT_EQ(s.profiled, 7u);
    EXPECT_EQ(s.peak_nodes, 7u);
    EXPECT_EQ(s.root_soid, 120u);
    if (cache == 50) {  // a and b do not fit, the leaves do
      EXPECT_EQ(root->t, pf::tier::inter);
      EXPECT_EQ(a->t, pf::tier::inter);
      EXPECT_EQ(s.leaves, 4u);
      EXPECT_EQ(s.intra, 0u);
      ASSERT_EQ(t.child(*b, 1), leaves[3]);
      EXPECT_EQ(t.child(*b, 1)->t, pf::tier::leaf);
      EXPECT_EQ(t.child(*b, 2), nullptr);  // never spawned
    } else if (cache == 70) {  // a and b fit: their children are intra-socket, their nodes freed
      EXPECT_EQ(t.child(*root, 1), b);
      EXPECT_EQ(b->t, pf::tier::leaf);
      EXPECT_EQ(b->first_child, nullptr);
      EXPECT_EQ(s.leaves, 2u);
      EXPECT_EQ(s.intra, 4u);
    } else {  // everything fits one socket
      EXPECT_EQ(root->t, pf::tier::leaf);
      EXPECT_EQ(s.leaves, 1u);
      EXPECT_EQ(s.intra, 6u);
    }
  }
}

// Fewer leaves than sockets (data that fits two of four sockets' caches): the largest leaves are split
// until every socket has one, and the leaves get homes in address order, contiguous runs of equal SOID.
TEST(CatsPartition, EverySocketGetsALeafAndLeavesGetHomesInAddressOrder) {
  pf::soid_tree t(pf::soid_tree::kDefaultBounds, 4);
  auto* root = t.make_root();
  pf::soid_tree::node* mid[2];
  pf::soid_tree::node* low[4];
  for (int i = 0; i < 2; ++i) mid[i] = t.add_child(*root, static_cast<std::uint32_t>(i));
  for (int i = 0; i < 4; ++i) {
    low[i] = t.add_child(*mid[i / 2], static_cast<std::uint32_t>(i % 2));
    pf::soid_tree::credit(*low[i], 30);
    pf::soid_tree::note_touch(*low[i], 0x10000 + 0x1000 * static_cast<std::uintptr_t>(3 - i), true);  // reversed
  }
  for (int i = 0; i < 4; ++i) t.end(*low[i], 0, 70);
  t.end(*mid[0], 2, 70);
  t.end(*mid[1], 2, 70);
  t.end(*root, 2, 70);
  auto s = t.finish(70);  // the mids fit (60 <= 70): 2 leaves of the seed's rule, 4 sockets
  EXPECT_EQ(s.split, 2u);
  EXPECT_EQ(s.leaves, 4u);
  EXPECT_EQ(s.classes, 4u);
  EXPECT_EQ(mid[0]->t, pf::tier::inter);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(low[i]->t, pf::tier::leaf);
    EXPECT_EQ(low[i]->home, 3 - i) << "leaf " << i << ": homes follow the addresses written, not spawn order";
  }
  EXPECT_EQ(t.child(*mid[1], 1), low[3]);  // the split leaves' children are found by path
  EXPECT_EQ(mid[0]->write_lo, 0x10000u + 0x2000u);  // a subtree's anchor is its lowest child's
}

// SOR's shape: two sweeps (red, black) over the same rows are two sets of leaves that write the same
// addresses. They are one data class each pair: the split goes on until there are as many classes as
// sockets, and both sweeps of a row range share its home.
TEST(CatsPartition, SweepsOverTheSameRowsShareAHome) {
  pf::soid_tree t(pf::soid_tree::kDefaultBounds, 4);
  auto* root = t.make_root();
  std::vector<pf::soid_tree::node*> halves, quarters;
  for (int sweep = 0; sweep < 2; ++sweep)
    for (int h = 0; h < 2; ++h) {
      auto* half = t.add_child(*root, static_cast<std::uint32_t>(2 * sweep + h));
      halves.push_back(half);
      for (int q = 0; q < 2; ++q) {
        auto* quarter = t.add_child(*half, static_cast<std::uint32_t>(q));
        pf::soid_tree::credit(*quarter, 25);
        pf::soid_tree::note_touch(*quarter, 0x100000 + 0x1000 * static_cast<std::uintptr_t>(2 * h + q), false);
        pf::soid_tree::note_touch(*quarter, 0x100000 + 0x1000 * static_cast<std::uintptr_t>(2 * h + q), true);
        t.end(*quarter, 0, 60);
        quarters.push_back(quarter);
      }
      t.end(*half, 2, 60);
    }
  t.end(*root, 4, 60);
  auto s = t.finish(60);  // root 200 > 60; halves 50 fit: 4 leaves but 2 classes
  EXPECT_EQ(s.split, 4u);
  EXPECT_EQ(s.leaves, 8u);
  EXPECT_EQ(s.classes, 4u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(quarters[static_cast<std::size_t>(k)]->home, k);
    EXPECT_EQ(quarters[static_cast<std::size_t>(4 + k)]->home, k) << "the black sweep of the rows of red leaf " << k;
  }
}

// A tree with nothing to split (flat leaves): fewer leaves than sockets stay so, homes still dealt.
TEST(CatsPartition, NoFinerSplitLeavesFewerLeaves) {
  pf::soid_tree t(pf::soid_tree::kDefaultBounds, 4);
  auto* root = t.make_root();
  pf::soid_tree::node* kid[2];
  for (int i = 0; i < 2; ++i) {
    kid[i] = t.add_child(*root, static_cast<std::uint32_t>(i));
    pf::soid_tree::credit(*kid[i], 40);
    t.end(*kid[i], 0, 50);
  }
  t.end(*root, 2, 50);
  auto s = t.finish(50);
  EXPECT_EQ(s.split, 0u);
  EXPECT_EQ(s.leaves, 2u);
  EXPECT_EQ(s.classes, 2u);  // no anchors: a class per leaf, in spawn order
  EXPECT_EQ(kid[0]->home, 1u);  // midpoints 1/4 and 3/4 of 4 sockets
  EXPECT_EQ(kid[1]->home, 3u);
}

// The bounds: a child below max_depth or beyond max_nodes live gets no node (its footprint goes to its
// parent's); freed nodes are used again; a task that does not fit and had children refused leaves the
// profile incomplete, and says which bound did it.
TEST(CatsPartition, SoidTreeBounds) {
  pf::soid_tree t({2, 100, 4});
  t.clear();
  auto* root = t.make_root();
  auto* a = t.add_child(*root, 0);
  auto* a0 = t.add_child(*a, 0);
  EXPECT_EQ(t.add_child(*a0, 0), nullptr);  // depth 3 > 2: folds into a0
  pf::soid_tree::credit(*a0, 10);
  EXPECT_TRUE(a0->cut_by_depth);
  t.end(*a0, 1, 100);
  t.end(*a, 1, 100);  // fits: a0's node is free again
  auto* b = t.add_child(*root, 1);
  auto* c = t.add_child(*root, 2);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);  // root, a, b, c: the budget of 4 with a0's node used again
  EXPECT_EQ(t.add_child(*root, 3), nullptr);
  EXPECT_TRUE(root->cut_by_budget);
  pf::soid_tree::credit(*root, 500);  // child 3's footprint, credited to the root
  t.end(*b, 0, 100);
  t.end(*c, 0, 100);
  t.end(*root, 4, 100);
  EXPECT_EQ(root->soid, 510u);
  auto s = t.finish(100);
  EXPECT_EQ(s.profiled, 5u);
  EXPECT_EQ(s.peak_nodes, 4u);
  EXPECT_FALSE(s.complete());
  EXPECT_EQ(s.cut_by_budget, 1u);
  EXPECT_EQ(s.cut_by_depth, 0u);  // a0 was cut by depth, but it fits: nothing below it is needed
  EXPECT_EQ(t.child(*root, 0), nullptr);  // no lookup is built for an incomplete profile
  t.clear();  // a new profile starts empty
  auto* again = t.make_root();
  t.end(*again, 0, 100);
  EXPECT_TRUE(t.finish(100).complete());
}

// The top of the tree: no deeper than the first depth at which it holds top_tasks tasks, wherever the
// spawns went first. Here 1 + 3 tasks reach 4 at depth 1: the depth-2 task spawned before stays, later
// ones are refused.
TEST(CatsPartition, SoidTreeTakesTheTopOfTheTree) {
  pf::soid_tree t({16, 4, 100});
  auto* root = t.make_root();
  auto* a = t.add_child(*root, 0);
  auto* a0 = t.add_child(*a, 0);  // depth 2, while the top holds 3 tasks
  ASSERT_NE(a0, nullptr);
  auto* b = t.add_child(*root, 1);
  auto* c = t.add_child(*root, 2);  // the 4th task above depth 2: the profile ends at depth 1
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  auto* d = t.add_child(*root, 3);  // depth 1 itself is still profiled
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(t.add_child(*b, 0), nullptr);
  EXPECT_TRUE(b->cut_by_depth);
  EXPECT_EQ(t.add_child(*a0, 0), nullptr);
  for (auto* n : {a0, b, c}) pf::soid_tree::credit(*n, 60);  // none fits a cache of 50
  t.end(*a0, 1, 50);
  t.end(*a, 1, 50);
  t.end(*b, 1, 50);
  t.end(*c, 0, 50);
  t.end(*d, 0, 50);
  t.end(*root, 4, 50);
  auto s = t.finish(50);
  EXPECT_EQ(s.depth, 1u);
  EXPECT_EQ(s.profiled, 6u);
  EXPECT_EQ(s.cut_by_depth, 2u);  // a0 and b: their children's subtrees are unknown; c has none
  EXPECT_FALSE(s.complete());
}

TEST(CatsFootprint, CounterMeterTurnsReadingsIntoBytes) {
  pf::counter_meter m(64);  // one count = one 64-byte line
  EXPECT_EQ(m.bytes_since_last(100), 0u);  // the first reading sets the base
  EXPECT_EQ(m.bytes_since_last(110), 10u * 64);
  EXPECT_EQ(m.bytes_since_last(150), 40u * 64);
  EXPECT_EQ(m.bytes_since_last(10), 0u);  // a counter that went backwards (reset) gives nothing
  EXPECT_EQ(m.bytes_since_last(15), 5u * 64);
}

TEST(CatsFootprint, TouchedSpansCountOverlapsOnceAndStayBounded) {
  pf::touched_spans t;
  t.add(1000, 2000);
  t.add(1500, 2500);
  t.add(3000, 3100);
  EXPECT_EQ(t.take_distinct_bytes(), 1600u);
  EXPECT_EQ(t.take_distinct_bytes(), 0u);
  // The same 64 bytes many times over: merged in place, the count stays exact.
  for (int i = 0; i < 100000; ++i) t.add(4096, 4160);
  EXPECT_EQ(t.take_distinct_bytes(), 64u);
  // Disjoint spans beyond the buffer: their size is kept, exactly.
  for (std::uintptr_t i = 0; i < 3 * pf::touched_spans::kMaxSpans; ++i) t.add(i * 128, i * 128 + 64);
  EXPECT_EQ(t.take_distinct_bytes(), 3u * pf::touched_spans::kMaxSpans * 64);
}

TEST(CatsFootprint, CounterAbsenceIsReported) {
  std::string why;
  auto c = pf::open_cache_miss_counter(why);
  if (c) {
    std::uint64_t v = 0;
    EXPECT_TRUE(c->read(v));
  } else {
    EXPECT_NE(why.find("perf_event_open"), std::string::npos) << why;
  }
}

namespace {

using roost_test::scoped_env;

using roost_test::cats::g_data;
using roost_test::cats::t_fake_misses;
using roost_test::cats::tree;
using roost_test::cats::tree_serial;

// The injected counter source: each worker thread's "misses" are what its leaves declare (cats_checker.hpp).
struct fake_counter : pf::counter_reader {
  bool read(std::uint64_t& v) override {
    v = t_fake_misses;
    return true;
  }
};
std::unique_ptr<pf::counter_reader> open_fake_counter(std::string&) { return std::make_unique<fake_counter>(); }

}  // namespace

TEST(Cats, ProfileFindsLeavesWhereEquationOnePutsThemAndSubtreesStayInOneSocket) {
  // The CPU-bound test is about speed (bytes per ns) and would misfire under a sanitizer; it has its own test.
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  roost::options o;
  o.scheduler = "cats";
  o.topology = "pack:2 l3:1(size=64KiB) core:2 pu:1";
  roost::runtime rt(o);
  // depth 8, 1 KiB per leaf: a node of height h has SOID 2^h KiB; 64 KiB fits at height 6 = depth 2.
  EXPECT_EQ(rt.run([] { return tree(8, 1, 1024); }), tree_serial(8, 1));
  std::string d = rt.describe();
  EXPECT_NE(d.find("bi-tier"), std::string::npos) << d;
  EXPECT_NE(d.find("511 tasks profiled, 4 leaf inter-socket tasks"), std::string::npos) << d;
  for (int it = 0; it < 3; ++it) {
    roost_test::cab::checker chk(2, 2);  // cab's tier rules on the leaf inter-socket tasks at depth 2
    roost::set_task_observer(&chk);
    EXPECT_EQ(rt.run([] { return tree(8, 1, 1024); }), tree_serial(8, 1));
    roost::set_task_observer(nullptr);
    EXPECT_EQ(chk.subtree_socket.size(), 4u);
    EXPECT_EQ(chk.leaf_inter_starts, 4L);
    EXPECT_TRUE(chk.errors.empty()) << chk.errors.size() << " tier rules broken, e.g. " << chk.errors[0];
  }
  // reprofile(): the next iteration profiles again (with a new leaf size: the split moves).
  rt.reprofile();
  EXPECT_EQ(rt.run([] { return tree(8, 1, 4096); }), tree_serial(8, 1));
  d = rt.describe();
  EXPECT_NE(d.find("511 tasks profiled, 16 leaf inter-socket tasks"), std::string::npos) << d;
}

// A flat task set (sparselu's shape: one task per block, no children) gives leaf inter-socket tasks and no
// intra-socket tier. Bi-tier stealing would let only the head core of the one socket run them: serial.
long flat(int tasks, std::size_t bytes_each) {
  std::vector<long> out(static_cast<std::size_t>(tasks));
  roost::task_group tg;
  for (int i = 0; i < tasks; ++i)
    tg.run([&out, i, bytes_each] {
      roost::touch(g_data.data() + static_cast<std::size_t>(i) * bytes_each % (g_data.size() - bytes_each), bytes_each);
      out[static_cast<std::size_t>(i)] = i % 7;
    });
  tg.wait();
  long sum = 0;
  for (long v : out) sum += v;
  return sum;
}

TEST(Cats, FlatTaskSetRunsAsWsAndSaysWhy) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  roost::options o;
  o.scheduler = "cats";
  o.topology = "pack:1 l3:1(size=64KiB) core:2 pu:1";
  roost::runtime rt(o);
  long expected = 0;
  for (int i = 0; i < 64; ++i) expected += i % 7;
  EXPECT_EQ(rt.run([] { return flat(64, 48 * 1024); }), expected);  // the root's footprint (all of g_data) exceeds the cache
  std::string d = rt.describe();
  EXPECT_NE(d.find("running as ws"), std::string::npos) << d;
  EXPECT_NE(d.find("65 tasks profiled, 64 leaf inter-socket tasks"), std::string::npos) << d;
  EXPECT_NE(d.find("only 0 intra-socket tasks: too flat for bi-tier stealing"), std::string::npos) << d;
  EXPECT_EQ(rt.run([] { return flat(64, 48 * 1024); }), expected);
}

// A chain as deep as UTS's (seed of issue #23: 4 million tasks, 1,572 levels, all in one run): each link
// spawns a leaf touching `leaf_bytes` and the next link. Its leaves' ids are first, first + 1, ...
long chain(int links, long first, std::size_t leaf_bytes) {
  if (links == 0) return 0;
  long a = 0, b = 0;
  roost::task_group tg;
  tg.run([&] {
    const std::size_t at = static_cast<std::size_t>(first) * leaf_bytes % (g_data.size() - leaf_bytes);
    roost::touch(g_data.data() + at, leaf_bytes);
    a = first % 3;
  });
  tg.run([&] { b = chain(links - 1, first + 1, leaf_bytes); });
  tg.wait();
  return a + b;
}
long chain_serial(int links, long first) {
  long sum = 0;
  for (long id = first; id < first + links; ++id) sum += id % 3;
  return sum;
}

// A binary top of `height` levels over 2^height chains of `links` links.
long chains_under_a_binary_top(int height, long index, int links, std::size_t leaf_bytes) {
  if (height == 0) return chain(links, index * 10000, leaf_bytes);
  long a = 0, b = 0;
  roost::task_group tg;
  tg.run([&] { a = chains_under_a_binary_top(height - 1, 2 * index, links, leaf_bytes); });
  tg.run([&] { b = chains_under_a_binary_top(height - 1, 2 * index + 1, links, leaf_bytes); });
  tg.wait();
  return a + b;
}
long chains_under_a_binary_top_serial(int height, long index, int links) {
  if (height == 0) return chain_serial(links, index * 10000);
  return chains_under_a_binary_top_serial(height - 1, 2 * index, links) +
         chains_under_a_binary_top_serial(height - 1, 2 * index + 1, links);
}

std::size_t tasks_profiled(const std::string& describe) {
  const auto at = describe.find(" tasks profiled");
  if (at == std::string::npos) return 0;
  const auto from = describe.rfind('(', at) + 1;
  return std::stoul(describe.substr(from, at - from));
}

// Issue #23: the profile of a deep tree stops at depth 24 (soid_tree.hpp), so its tables stay small and the
// tasks below run as ws runs them. Before, every task's path was kept, and 3000 levels spawned parent-first
// ran nested on one stack (they overflowed a 1 MiB one). The boundary above that depth is still found and
// used: 8 chains of 3000 leaves of 16 bytes (48,000 bytes each) under a binary top, a 64 KiB cache: the
// chains are the leaf inter-socket tasks.
TEST(Cats, ADeepTreeIsProfiledOnlyAtItsTop) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  roost::options o;
  o.scheduler = "cats";
  o.topology = "pack:2 l3:1(size=64KiB) core:2 pu:1";
  roost::runtime rt(o);
  // ThreadSanitizer cannot keep 3000 fibers' traces at once: 300 links there, of 160 bytes.
  static const int links = roost_test::under_sanitizer() ? 300 : 3000;
  static const std::size_t leaf_bytes = 48000 / links;
  auto program = [] { return chains_under_a_binary_top(3, 0, links, leaf_bytes); };
  const long expected = chains_under_a_binary_top_serial(3, 0, links);
  EXPECT_EQ(rt.run(program), expected);
  const std::string d = rt.describe();
  EXPECT_NE(d.find("bi-tier"), std::string::npos) << d;
  // The top's 15 tasks, and per chain two tasks at each depth from 4 to 24: 351 of 48,015.
  EXPECT_NE(d.find("351 tasks profiled, 8 leaf inter-socket tasks"), std::string::npos) << d;
  // Bi-tier from here on (an observer of the sockets, as above, would build each task's path: 3000 long).
  EXPECT_EQ(rt.run(program), expected);
  EXPECT_NE(rt.describe().find("bi-tier"), std::string::npos) << rt.describe();
}

// A tree as wide and deep as UTS's (2000 children at the root, chains of up to 512 links below, a million
// tasks): the profile takes the top of the tree (about 67,000 tasks), no task deeper than 24 has a node, and
// the boundary is still found.
TEST(Cats, AWideDeepTreeIsProfiledOnlyAtItsTop) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  roost::options o;
  o.scheduler = "cats";
  o.topology = "pack:2 l3:1(size=64KiB) core:1 pu:1";
  roost::runtime rt(o);
  constexpr int kRootChildren = 2000;
  static const unsigned max_links = roost_test::under_sanitizer() ? 64 : 512;
  auto links = [](int i) { return 1 + static_cast<int>((static_cast<unsigned>(i) * 2654435761u >> 7) % max_links); };
  auto program = [&] {
    std::vector<long> sums(kRootChildren);
    roost::task_group tg;
    for (int i = 0; i < kRootChildren; ++i) tg.run([&, i] { sums[i] = chain(links(i), i * 1000, 8); });
    tg.wait();
    long total = 0;
    for (long s : sums) total += s;
    return total;
  };
  // A root child with L links has two tasks at each depth from 2 to L + 1.
  long expected = 0, tasks = 1 + kRootChildren, tasks_to_depth_24 = 1 + kRootChildren;
  for (int i = 0; i < kRootChildren; ++i) {
    expected += chain_serial(links(i), i * 1000);
    tasks += 2 * links(i);
    tasks_to_depth_24 += 2 * std::min(links(i), 23);
  }
  EXPECT_EQ(rt.run(program), expected);
  const std::string d = rt.describe();
  EXPECT_NE(d.find("bi-tier"), std::string::npos) << d;
  EXPECT_NE(d.find(" 2000 leaf inter-socket tasks"), std::string::npos) << d;  // each chain fits, the root does not
  const std::size_t profiled = tasks_profiled(d);
  EXPECT_GT(profiled, 2000u) << d;
  EXPECT_LE(profiled, static_cast<std::size_t>(tasks_to_depth_24)) << d << " of " << tasks << " tasks";
  EXPECT_EQ(rt.run(program), expected);
}

// The node budget (65536 profile nodes live at once): a root with more children than that, none of which
// may be freed while the root's own subtree does not fit. The profile says so and the program runs as ws.
TEST(Cats, AProfileBeyondItsNodeBudgetRunsAsWsAndSaysWhy) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  roost::options o;
  o.scheduler = "cats";
  o.topology = "pack:1 l3:1(size=64KiB) core:2 pu:1";
  roost::runtime rt(o);
  constexpr int kTasks = 70000;
  long expected = 0;
  for (int i = 0; i < kTasks; ++i) expected += i % 7;
  EXPECT_EQ(rt.run([] { return flat(kTasks, 1024); }), expected);
  const std::string d = rt.describe();
  EXPECT_NE(d.find("running as ws"), std::string::npos) << d;
  EXPECT_NE(d.find("65536 tasks profiled"), std::string::npos) << d;
  EXPECT_NE(d.find("at most 65536 profile nodes at once"), std::string::npos) << d;
  EXPECT_NE(d.find("no boundary found below 1 inter-socket tasks whose children exceeded its budget (65536 nodes)"),
            std::string::npos)
      << d;
  EXPECT_EQ(rt.run([] { return flat(kTasks, 1024); }), expected);
}

// The profiling iteration's annotations go on to the consumer that was there before (the simulated platform
// charges for them, a tracer records them): none is lost while cats measures.
TEST(Cats, ProfilingPassesAnnotationsOn) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  struct counting : roost::touch_consumer {
    std::atomic<long> bytes{0};
    void on_touch(int, const void*, std::size_t b, roost::access) override { bytes += static_cast<long>(b); }
  } before;
  roost::options o;
  o.scheduler = "cats";
  o.topology = "pack:2 l3:1(size=64KiB) core:2 pu:1";
  roost::runtime rt(o);
  roost::set_touch_consumer(&before);
  EXPECT_EQ(rt.run([] { return tree(6, 1, 1024); }), tree_serial(6, 1));  // the profiling iteration
  EXPECT_EQ(before.bytes.load(), 64L * 1024);
  EXPECT_EQ(rt.run([] { return tree(6, 1, 1024); }), tree_serial(6, 1));
  EXPECT_EQ(before.bytes.load(), 2L * 64 * 1024);
  EXPECT_EQ(roost::set_touch_consumer(nullptr), &before);
}

// A child of fork() writes ROOST_CATS_PROFILE's file apart from its parent, as ROOST_TRACE's: the parent's
// live runtime claimed the file, and every cats runtime of the child was refused (an outside-user campaign).
TEST(Cats, AChildOfForkWritesItsProfileApart) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  const roost_test::temp_file profile("roost_cats_fork_profile.tsv");
  scoped_env env("ROOST_CATS_PROFILE", profile.path().c_str());
  roost::options o;
  o.scheduler = "cats";
  o.topology = "pack:2 l3:1(size=64KiB) core:2 pu:1";
  // One worker: no worker thread in the parent at the fork (one may hold a lock of the sanitizers' there:
  // the ASan child hung) and none started in the child (TSan cannot follow one).
  o.workers = 1;
  roost::runtime parent(o);
  EXPECT_EQ(parent.run([] { return tree(6, 1, 1024); }), tree_serial(6, 1));
  pid_t pid = -1;
  const int status = roost_test::in_child([&] {
    roost::runtime child(o);
    return child.run([] { return tree(6, 1, 1024); }) == tree_serial(6, 1) ? 0 : 3;
  }, &pid);
  EXPECT_EQ(status, 0) << "the child's cats runtime was refused (2) or wrong (3)";
  const std::string child_file = profile.path() + ".pid" + std::to_string(pid);
  std::ifstream in(child_file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\n0\t0\t"), std::string::npos) << child_file << ": " << text;
  std::remove(child_file.c_str());
}

// ROOST_CATS_PROFILE (seed 000 Fig. 8): the profile as a table, SOIDs by eq. 1 against the tree's known
// footprints (leaves of 1 KiB: a task at height h has 2^h KiB); a directory is refused at start-up.
TEST(Cats, ProfileIsWrittenWhereAsked) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  const roost_test::temp_file profile("roost_cats_profile.tsv");
  const std::string& path = profile.path();
  roost::options o;
  o.scheduler = "cats";
  o.topology = "pack:2 l3:1(size=64KiB) core:2 pu:1";
  o.cats_profile = path;
  {
    roost::runtime rt(o);
    EXPECT_EQ(rt.run([] { return tree(8, 1, 1024); }), tree_serial(8, 1));
  }
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\n0\t0\t262144\tinter-socket\t-\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n0.0\t1\t131072\tinter-socket\t-\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n0.0.0\t2\t65536\tleaf inter-socket\t0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n0.1.1\t2\t65536\tleaf inter-socket\t1\n"), std::string::npos) << text;
  o.cats_profile = ::testing::TempDir();
  try {
    roost::runtime bad(o);
    ADD_FAILURE() << "a directory was accepted";
  } catch (const roost::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("options::cats_profile="), std::string::npos) << e.what();
  }
}

// One cats worker on a machine of two sockets with a 64 KiB cache each, writing its profile to `path`.
roost::options one_worker_profiling_to(const std::string& path) {
  roost::options o;
  o.scheduler = "cats";
  o.workers = 1;
  o.topology = "pack:2 l3:1(size=64KiB) core:2 pu:1";
  o.cats_profile = path;
  return o;
}

// A child that its owner's join ran on the owner's stack, spawning into the owner's group, names that child
// under the owner (engine/observe.hpp: under itself, the id dangled once it ended), and its profile node hangs
// under the owner's: under the spawner's, it took an index of the owner's count beside the spawner's own
// children, and two nodes of one parent had one path (0.0.1 here), of which a later iteration found only
// the first. One worker: other's join runs S where the root runs.
TEST(Cats, ASpawnIntoTheOwnersGroupFromItsStackIsProfiledUnderTheOwner) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  const roost_test::temp_file profile("roost_cats_profile_owner.tsv");
  const roost::options o = one_worker_profiling_to(profile.path());
  std::atomic<int> ran{0};
  // Each leaf touches 48 KiB of its own: S's subtree overflows the 64 KiB cache, so the profile keeps its nodes.
  static std::vector<char> data(5 * 48 * 1024);
  const auto leaf = [&](int i) {
    return [&ran, i] {
      roost::touch(data.data() + i * 48 * 1024, 48 * 1024);
      ran.fetch_add(1);
    };
  };
  {
    roost::runtime rt(o);
    for (int iteration = 0; iteration < 2; ++iteration)
      rt.run([&] {
        roost::task_group g;
        {
          roost::task_group other;
          other.run([&] {  // S, 0.0
            roost::task_group h;
            for (int i = 0; i < 4; ++i) h.run(leaf(i));  // 0.0.0 .. 0.0.3
            g.run(leaf(4));                              // the root's second child: 0.1
            h.wait();
          });
          other.wait();
        }
        g.wait();
      });
  }
  EXPECT_EQ(ran.load(), 10);
  std::ifstream in(profile.path());
  std::multiset<std::string> paths;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') paths.insert(line.substr(0, line.find('\t')));
  for (const std::string& p : {"0", "0.0", "0.0.0", "0.0.1", "0.0.2", "0.0.3", "0.1"})
    EXPECT_EQ(paths.count(p), 1u) << p;
  EXPECT_EQ(paths.size(), 7u) << [&] {
    std::ifstream again(profile.path());
    return std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  }();
}

// While profiling, cats spawns a profiled task's children parent-first and must see each start and end: a
// group's only child lies on the deque in the group's inline slot, where task_group::wait's inline pop would
// take it and run it in place, unseen, its footprint credited to its parent (a review found that once). A task
// that owns a profile node names no join queue, which shuts the worker's inline pops (abi.hpp,
// name_join_queue), so such a wait goes to the engine's join. The root's second child (0.1) runs while its
// third still lies on the deque, so that 0.1's only child is pushed privately, where the window could pop it.
TEST(Cats, AnOnlyChildIsProfiledAsANodeOfItsOwn) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  const roost_test::temp_file profile("roost_cats_profile_only_child.tsv");
  const roost::options o = one_worker_profiling_to(profile.path());
  static std::vector<char> data(4 * 96 * 1024);  // each leaf's footprint alone overflows the 64 KiB cache
  int ran = 0;
  const auto leaf = [&](int i) {
    return [&ran, i] {
      roost::touch(data.data() + i * 96 * 1024, 96 * 1024);
      ++ran;
    };
  };
  {
    roost::runtime rt(o);
    rt.run([&] {
      roost::task_group g;
      g.run(leaf(0));  // 0.0
      g.run([&] {      // 0.1
        roost::task_group h;
        h.run(leaf(1));  // 0.1.0, the only child
        h.wait();
      });
      g.run(leaf(2));  // 0.2
      g.wait();
    });
  }
  EXPECT_EQ(ran, 3);
  // Each node's SOID (path, depth, soid_bytes, ...): the only child's footprint is its own.
  std::ifstream in(profile.path());
  std::map<std::string, long> soid;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string path;
    int depth = 0;
    long bytes = -1;
    fields >> path >> depth >> bytes;
    soid[path] = bytes;
  }
  const long leaf_bytes = 96 * 1024;
  EXPECT_EQ(soid, (std::map<std::string, long>{
                      {"0", 3 * leaf_bytes}, {"0.0", leaf_bytes}, {"0.1", leaf_bytes}, {"0.1.0", leaf_bytes},
                      {"0.2", leaf_bytes}}));
}

// A profile that cannot be written (here a file size limit; a full disk alike) is a std::system_error thrown
// by the run() that profiled, once its iteration ended; that run's result was computed, and the next run goes
// on as the profile decided. It was only said on stderr, and not at all when the whole profile fitted the
// stream's buffer: the failure came at the close, after the test. In a child: the limit is the process's.
TEST(Cats, AProfileThatCannotBeWrittenIsThrownByTheRunThatProfiled) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  const roost_test::temp_file profile("roost_cats_profile_limit.tsv");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of ending the process
    const rlimit rl{64, 64};        // the profile's first line alone is longer
    if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(2);
    roost::options o;
    o.scheduler = "cats";
    o.topology = "pack:2 l3:1(size=64KiB) core:2 pu:1";
    o.cats_profile = profile.path();
    roost::runtime rt(o);
    // A profiled run whose root throws: its exception leaves, and the profile's failure is said on stderr
    // (it was dropped: a review).
    int said_pipe[2];  // not a file: the size limit would cut what is said
    if (::pipe(said_pipe) != 0 || ::dup2(said_pipe[1], 2) < 0) ::_exit(2);
    try {
      rt.run([] {
        (void)tree(8, 1, 1024);
        throw std::runtime_error("the root's");
      });
      ::_exit(7);
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()) != "the root's") ::_exit(8);
    }
    std::fflush(stderr);
    {
      ::close(said_pipe[1]);
      ::close(2);  // the pipe's last writer: the read below ends
      std::string said;
      char buf[4096];
      for (ssize_t n; (n = ::read(said_pipe[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<std::size_t>(n));
      if (said.find("writing the profile failed") == std::string::npos || said.find("not thrown") == std::string::npos)
        ::_exit(9);
    }
    rt.reprofile();
    long result = 0;
    try {
      rt.run([&] { result = tree(8, 1, 1024); });
      ::_exit(3);
    } catch (const std::system_error& e) {
      if (std::string(e.what()).find("options::cats_profile='" + profile.path() + "': writing the profile failed") ==
          std::string::npos)
        ::_exit(4);
    }
    if (result != tree_serial(8, 1)) ::_exit(5);
    if (rt.run([] { return tree(8, 1, 1024); }) != tree_serial(8, 1)) ::_exit(6);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no limit, 3: no error, 4: another message, 5: wrong result, 6: next "
                                       "run, 7-8: the root's exception, 9: nothing said of the profile";
}

// describe() from another thread while run() profiles and concludes: the conclusion's text was written by the
// run's thread while describe() copied it (a heap-use-after-free under ASan, a race under TSan: an
// outside-user campaign). The sanitizer builds are the check here; the release build checks the text.
TEST(Cats, DescribeFromAnotherThreadWhileRunsProfileIsSafe) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  roost::options o;
  o.scheduler = "cats";
  o.topology = "pack:2 l3:1(size=64KiB) core:1 pu:1";
  roost::runtime rt(o);
  std::atomic<bool> done{false};
  std::thread runs([&] {
    for (int i = 0; i < 40; ++i) {
      rt.reprofile();
      EXPECT_EQ(rt.run([] { return tree(6, 1, 1024); }), tree_serial(6, 1));
    }
    done.store(true);
  });
  do {
    EXPECT_NE(rt.describe().find("footprint source:"), std::string::npos);
  } while (!done.load());
  runs.join();
}

TEST(Cats, UnannotatedProgramRunsAsWsAndSaysWhy) {
  roost::options o;
  o.scheduler = "cats";
  roost::runtime rt(o);
  std::function<long(int)> fib = [&](int n) -> long {
    if (n < 2) return n;
    long a = 0;
    roost::task_group tg;
    tg.run([&] { a = fib(n - 1); });
    long b = fib(n - 2);
    tg.wait();
    return a + b;
  };
  EXPECT_EQ(rt.run([&] { return fib(18); }), 2584);
  std::string d = rt.describe();
  EXPECT_NE(d.find("running as ws"), std::string::npos) << d;
  EXPECT_NE(d.find("no footprint measured"), std::string::npos) << d;
  EXPECT_NE(d.find("footprint source: annotations"), std::string::npos) << d;
  EXPECT_EQ(rt.run([&] { return fib(18); }), 2584);
}

TEST(Cats, CpuBoundProgramRunsAsWs) {
  scoped_env hi("ROOST_CATS_MIN_INTENSITY", "1e6");  // nothing is that memory-bound
  roost::options o;
  o.scheduler = "cats";
  o.topology = "pack:2 l3:1(size=64KiB) core:1 pu:1";
  roost::runtime rt(o);
  EXPECT_EQ(rt.run([] { return tree(6, 1, 1024); }), tree_serial(6, 1));
  std::string d = rt.describe();
  EXPECT_NE(d.find("CPU-bound"), std::string::npos) << d;
  EXPECT_EQ(rt.run([] { return tree(6, 1, 1024); }), tree_serial(6, 1));
}

// The same tree as tree() (its leaves' bytes touched by the two halves of a two-way join), recording in each
// task and each half whether a two-way join there may take the inline path: the queue it would push onto
// (worker_abi::join_queue) is the worker's own deque, or none (the engine's path). Keyed by depth (the root
// is 0, the halves below the leaves one deeper).
struct join_queues_seen {
  std::mutex m;
  std::map<int, std::pair<int, int>> by_depth;  // depth -> (tasks naming the deque, tasks naming none)
  void record(int depth) {
    roost::detail::worker_abi& w = *roost::detail::current_fiber_or_throw("record")->worker;
    const bool inline_join = w.join_queue.load(std::memory_order_relaxed) == &w.deque;
    std::lock_guard<std::mutex> lk(m);
    auto& [named, none] = by_depth[depth];
    ++(inline_join ? named : none);
  }
};

long tree_recording(int depth, int height, long id, std::size_t leaf_bytes, join_queues_seen& seen) {
  seen.record(depth);
  if (height == 0) {  // a two-way join, each half touching half the leaf's bytes
    char* data = g_data.data() + (static_cast<std::size_t>(id) * leaf_bytes) % (g_data.size() - leaf_bytes);
    long a = 0, b = 0;
    roost::parallel_invoke(
        [&] {
          seen.record(depth + 1);
          roost::touch(data, leaf_bytes / 2);
          a = id % 5;
        },
        [&] {
          seen.record(depth + 1);
          roost::touch(data + leaf_bytes / 2, leaf_bytes / 2);
        });
    return a + b;
  }
  long a = 0, b = 0;
  roost::task_group tg;
  tg.run([&] { a = tree_recording(depth + 1, height - 1, 2 * id, leaf_bytes, seen); });
  tg.run([&] { b = tree_recording(depth + 1, height - 1, 2 * id + 1, leaf_bytes, seen); });
  tg.wait();
  return a + b;
}

// cats joins inline (cab's inline_join_queue) exactly where no child's tier has to be looked up by its
// spawn path: in leaf inter-socket and intra-socket tasks under bi-tier stealing, and everywhere in a
// program run as ws; never while profiling, which needs every task's path.
TEST(Cats, TwoWayJoinsAreInlineWhereNoTierIsLookedUp) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  roost::options o;
  o.scheduler = "cats";
  o.topology = "pack:2 l3:1(size=64KiB) core:2 pu:1";
  roost::runtime rt(o);
  {  // the profiling iteration: depth 8, 1 KiB a leaf, leaf inter-socket tasks at depth 2 (as above)
    join_queues_seen seen;
    EXPECT_EQ(rt.run([&] { return tree_recording(0, 8, 1, 1024, seen); }), tree_serial(8, 1));
    for (const auto& [depth, counts] : seen.by_depth)
      EXPECT_EQ(counts.first, 0) << "depth " << depth << ": a profiled task would join inline";
  }
  ASSERT_NE(rt.describe().find("bi-tier"), std::string::npos) << rt.describe();
  for (int it = 0; it < 3; ++it) {
    join_queues_seen seen;
    EXPECT_EQ(rt.run([&] { return tree_recording(0, 8, 1, 1024, seen); }), tree_serial(8, 1));
    for (const auto& [depth, counts] : seen.by_depth) {
      const int expected_inline = depth >= 2 ? 1 << depth : 0;
      EXPECT_EQ(counts.first, expected_inline) << "depth " << depth << ", iteration " << it;
      EXPECT_EQ(counts.second, (1 << depth) - expected_inline) << "depth " << depth << ", iteration " << it;
    }
  }
  // A program found CPU-bound runs as ws: every task joins inline.
  scoped_env hi("ROOST_CATS_MIN_INTENSITY", "1e6");
  roost::runtime cpu_bound(o);
  join_queues_seen profiled;
  EXPECT_EQ(cpu_bound.run([&] { return tree_recording(0, 6, 1, 1024, profiled); }), tree_serial(6, 1));
  ASSERT_NE(cpu_bound.describe().find("CPU-bound"), std::string::npos) << cpu_bound.describe();
  join_queues_seen as_ws;
  EXPECT_EQ(cpu_bound.run([&] { return tree_recording(0, 6, 1, 1024, as_ws); }), tree_serial(6, 1));
  for (const auto& [depth, counts] : as_ws.by_depth) {
    EXPECT_EQ(counts.first, 1 << depth) << "depth " << depth;
    EXPECT_EQ(counts.second, 0) << "depth " << depth;
  }
}

TEST(Cats, ThresholdMustBeANumber) {
  scoped_env bad("ROOST_CATS_MIN_INTENSITY", "lots");
  roost::options o;
  o.scheduler = "cats";
  try {
    roost::runtime rt(o);
    FAIL() << "expected config_error";
  } catch (const roost::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("ROOST_CATS_MIN_INTENSITY='lots'"), std::string::npos) << e.what();
  }
}

TEST(Cats, OverlappingTouchesOfOneTaskCountOnce) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  roost::options o;
  o.scheduler = "cats";
  o.topology = "pack:2 l3:1(size=64KiB) core:2 pu:1";
  roost::runtime rt(o);
  // Each leaf annotates its 1 KiB three times: the footprint is still 1 KiB, so the split is as with one.
  EXPECT_EQ(rt.run([] { return tree(8, 1, 1024, 3); }), tree_serial(8, 1));
  std::string d = rt.describe();
  EXPECT_NE(d.find("511 tasks profiled, 4 leaf inter-socket tasks"), std::string::npos) << d;
}

// The perf_event path with injected readings: per-task attribution between switches must give the same
// SOIDs as the annotations, on every worker count the profile can run with.
TEST(Cats, CounterSourceAttributesMissesPerTask) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  pf::set_counter_factory(&open_fake_counter, "injected test counters");
  for (const char* topo : {"pack:2 l3:1(size=64KiB) core:2 pu:1", "pack:1 l3:1(size=64KiB) core:1 pu:1"}) {
    roost::options o;
    o.scheduler = "cats";
    o.topology = topo;
    roost::runtime rt(o);
    EXPECT_EQ(rt.run([] { return tree(8, 1, 1024, 0); }), tree_serial(8, 1));  // no annotations at all
    std::string d = rt.describe();
    EXPECT_NE(d.find("footprint source: injected test counters x 64-byte lines"), std::string::npos) << d;
    EXPECT_NE(d.find("511 tasks profiled, 4 leaf inter-socket tasks"), std::string::npos) << topo << ": " << d;
    EXPECT_EQ(rt.run([] { return tree(8, 1, 1024, 0); }), tree_serial(8, 1));
  }
  pf::set_counter_factory(nullptr, nullptr);
}

// Simulated, cats profiles from the tasks' annotations even where the host has counters: the host's would
// count the simulation's own work on its one thread (an outside-user campaign: the decision and the
// profile's leaves followed a counter of the host's).
TEST(Cats, SimulatedNeverReadsTheHostsCounters) {
  pf::set_counter_factory(&open_fake_counter, "injected test counters");
  roost::options o;
  o.scheduler = "cats";
  o.platform = "sim";
  o.topology = "pack:2 l3:1(size=64KiB) core:2 pu:1";
  {
    roost::runtime rt(o);
    EXPECT_EQ(rt.run([] { return tree(8, 1, 1024, 0); }), tree_serial(8, 1));
    const std::string d = rt.describe();
    EXPECT_EQ(d.find("injected test counters"), std::string::npos) << d;
    EXPECT_NE(d.find("the simulated platform measures what its tasks declare"), std::string::npos) << d;
  }
  pf::set_counter_factory(nullptr, nullptr);
}

// Children of a group that escapes its creator (the rule break), spawned in a run under bi-tier stealing:
// inter-socket tasks (the profile has no node for them), placed in the root's socket's inter-socket pool,
// a queue of no worker's. They run before the runtime's destruction returns, as under every scheduler (cab's
// take_left_behind, which cats inherits): before, they were never run nor freed (cab: an outside-user
// campaign; cats by the same code). Counted after the destruction.
TEST(Cats, EscapedChildrenInASocketPoolRunBeforeTheDestructionReturns) {
  scoped_env no_cpu_bound_test("ROOST_CATS_MIN_INTENSITY", "0");
  for (int round = 0; round < 4; ++round) {
    std::atomic<int> ran{0};
    std::unique_ptr<roost::task_group> g;
    {
      roost::options o;
      o.scheduler = "cats";
      o.topology = "pack:2 l3:1(size=64KiB) core:2 pu:1";
      roost::runtime rt(o);
      EXPECT_EQ(rt.run([] { return tree(8, 1, 1024); }), tree_serial(8, 1));  // the profiling iteration
      ASSERT_NE(rt.describe().find("bi-tier"), std::string::npos) << rt.describe();
      rt.run([&] {
        g = std::make_unique<roost::task_group>();  // escapes its creator
        for (int i = 0; i < 4; ++i) g->run([&ran] { ran.fetch_add(1); });
      });
    }
    EXPECT_EQ(ran.load(), 4) << "round " << round;
    if (ran.load() != 4) {  // the group's destruction would end the process
      (void)g.release();
      return;
    }
    g.reset();
  }
}
