// cats (seed 000 §3.2): the partition rule on each case of Fig. 6, the SOID table on a synthetic tree with
// injected footprints, per-task attribution of counter readings (the perf_event path, with injected
// readings since this machine has no PMU), and whole runs: the profile of a binary tree annotated with
// roost::touch puts the leaf inter-socket tasks where eq. 1 says, later iterations keep subtrees in one
// socket, CPU-bound or unannotated programs run as ws, reprofile() learns again.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include <stdlib.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "profile/footprint.hpp"
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

TEST(CatsPartition, SoidTableOnASyntheticTree) {
  pf::soid_table t;
  // Eq. 1 by hand: leaves own 30 bytes; inner nodes own 0 (+ children).
  t.record("0", 120);
  t.record("0.0", 60);
  t.record("0.1", 60);
  t.record("0.0.0", 30);
  t.record("0.0.1", 30);
  t.record("0.1.0", 30);
  t.record("0.1.1", 30);
  auto tiers = t.partition(50);
  EXPECT_EQ(tiers["0"], pf::tier::inter);
  EXPECT_EQ(tiers["0.0"], pf::tier::inter);
  EXPECT_EQ(tiers["0.0.0"], pf::tier::leaf);
  EXPECT_EQ(tiers["0.1.1"], pf::tier::leaf);
  tiers = t.partition(70);
  EXPECT_EQ(tiers["0.1"], pf::tier::leaf);
  EXPECT_EQ(tiers["0.1.0"], pf::tier::intra);
  tiers = t.partition(500);
  EXPECT_EQ(tiers["0"], pf::tier::leaf);  // everything fits one socket
}

TEST(CatsFootprint, SegmentMeterAttributesInjectedReadings) {
  roost::detail::task_id parent, child;
  pf::segment_meter m(64);  // one count = one 64-byte line
  m.begin(&parent, 100);
  m.begin(&child, 110);     // parent ran 10 counts, then the child starts on this worker
  m.end(150);               // child: 40 counts
  m.begin(&parent, 150);    // parent resumes
  m.end(155);
  EXPECT_EQ(parent.own_bytes, 15u * 64);
  EXPECT_EQ(child.own_bytes, 40u * 64);
  m.begin(&child, 10);      // a counter that went backwards (reset) attributes nothing
  m.end(5);
  EXPECT_EQ(child.own_bytes, 40u * 64);
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

std::vector<char> g_data(1 << 20);

// The injected counter source: each worker thread's "misses" are what its leaves declare below.
thread_local std::uint64_t t_fake_misses = 0;
struct fake_counter : pf::counter_reader {
  bool read(std::uint64_t& v) override {
    v = t_fake_misses;
    return true;
  }
};
std::unique_ptr<pf::counter_reader> open_fake_counter(std::string&) { return std::make_unique<fake_counter>(); }

// A binary tree whose leaves touch `leaf_bytes` each (so a node at height h has SOID 2^h * leaf_bytes):
// annotated `touches` times over the same bytes, and counted as leaf_bytes / 64 misses for the injected
// counters.
long tree(int depth, long id, std::size_t leaf_bytes, int touches = 1) {
  if (depth == 0) {
    for (int k = 0; k < touches; ++k)
      roost::touch(g_data.data() + (static_cast<std::size_t>(id) * leaf_bytes) % (g_data.size() - leaf_bytes), leaf_bytes);
    t_fake_misses += leaf_bytes / 64;
    return id % 5;
  }
  long a = 0, b = 0;
  roost::task_group tg;
  tg.run([&] { a = tree(depth - 1, 2 * id, leaf_bytes, touches); });
  tg.run([&] { b = tree(depth - 1, 2 * id + 1, leaf_bytes, touches); });
  tg.wait();
  return a + b;
}

long tree_serial(int depth, long id) { return depth == 0 ? id % 5 : tree_serial(depth - 1, 2 * id) + tree_serial(depth - 1, 2 * id + 1); }

struct socket_check : roost::task_observer {
  unsigned leaf_depth, cores_per_socket;
  std::mutex m;
  std::map<std::string, unsigned> leaf_socket;
  std::vector<std::string> errors;
  socket_check(unsigned d, unsigned c) : leaf_depth(d), cores_per_socket(c) {}
  void seen(const roost::task_event& e) {
    std::lock_guard<std::mutex> lk(m);
    unsigned depth = static_cast<unsigned>(e.path.size()) - 1;
    unsigned socket = static_cast<unsigned>(e.worker) / cores_per_socket;
    if (depth == leaf_depth) leaf_socket[e.path_string()] = socket;
    if (depth > leaf_depth) {
      std::string prefix;
      for (unsigned i = 0; i <= leaf_depth; ++i) prefix += (i ? "." : "") + std::to_string(e.path[i]);
      auto it = leaf_socket.find(prefix);
      if (it != leaf_socket.end() && it->second != socket) errors.push_back(e.path_string());
    }
  }
  void on_task_start(const roost::task_event& e) override { seen(e); }
  void on_task_resume(const roost::task_event& e) override { seen(e); }
};

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
    socket_check chk(2, 2);
    roost::set_task_observer(&chk);
    EXPECT_EQ(rt.run([] { return tree(8, 1, 1024); }), tree_serial(8, 1));
    roost::set_task_observer(nullptr);
    EXPECT_EQ(chk.leaf_socket.size(), 4u);
    EXPECT_TRUE(chk.errors.empty()) << chk.errors.size() << " tasks left their subtree's socket, e.g. " << chk.errors[0];
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
    const bool inline_join = w.join_queue == &w.deque;
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
