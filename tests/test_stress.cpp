// Randomized fork-join stress test (issue #2 §9): random fan-out, depth, leaf work, hints, thrown exceptions,
// task groups and parallel_invoke (the two-way join); exact results checked against a serial evaluation of the same tree, for every available
// scheduler, at 1, 2, 3, 8 and 64 workers and on virtual topologies 2x4, 4x4 and 8x8, and two with small
// caches (2x4 with a 2 KiB L3; 2 packages x 2 L2 x 2 cores).
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "roost/roost.hpp"

namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int kTrees = 3;
constexpr int kMaxDepth = 5;
#else
constexpr int kTrees = 40;
constexpr int kMaxDepth = 8;
#endif

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

struct tree_error : std::runtime_error {
  std::uint64_t node;
  explicit tree_error(std::uint64_t n) : std::runtime_error("tree node threw"), node(n) {}
};

// Everything about a node follows from (tree seed, node id): serial and parallel walks see the same tree.
struct node_shape {
  unsigned fanout;     // 0 = leaf
  unsigned leaf_work;  // iterations of busy work
  bool throws;         // throws after its children joined
  bool catches;        // converts a child's exception into a value
  bool inline_last;    // runs its last child inline instead of spawning it
  bool use_group_hints;
  bool joins;         // with 2 or 3 children: one parallel_invoke instead of a task_group
};

node_shape shape_of(std::uint64_t seed, std::uint64_t id, int depth) {
  std::uint64_t r = mix(seed ^ mix(id));
  node_shape s;
  s.fanout = depth >= kMaxDepth ? 0 : static_cast<unsigned>(r % 5);  // 0..4 children
  if (depth == 0 && s.fanout == 0) s.fanout = 3;
  s.leaf_work = static_cast<unsigned>((r >> 8) % 200);
  s.throws = ((r >> 16) % 97) == 0;
  s.catches = ((r >> 24) % 5) == 0;
  s.inline_last = ((r >> 32) % 2) == 0;
  s.use_group_hints = ((r >> 40) % 3) == 0;
  s.joins = ((r >> 48) % 2) == 0;
  return s;
}

std::uint64_t busy(std::uint64_t id, unsigned n) {
  std::uint64_t h = id;
  for (unsigned i = 0; i < n; ++i) h = mix(h + i);
  return h;
}

constexpr std::uint64_t kCaught = 0xCA0617ull;

std::uint64_t combine(std::uint64_t id, const std::vector<std::uint64_t>& kids, std::uint64_t own) {
  std::uint64_t h = own ^ id;
  for (std::uint64_t k : kids) h = mix(h * 31 + k);  // order matters: children in index order
  return h;
}

std::uint64_t serial(std::uint64_t seed, std::uint64_t id, int depth) {
  node_shape s = shape_of(seed, id, depth);
  std::uint64_t own = busy(id, s.leaf_work);
  std::vector<std::uint64_t> kids(s.fanout);
  try {
    for (unsigned i = 0; i < s.fanout; ++i) kids[i] = serial(seed, id * 5 + i + 1, depth + 1);
  } catch (const tree_error&) {
    if (!s.catches) throw;
    return mix(id ^ kCaught);
  }
  if (s.throws) throw tree_error(id);
  return combine(id, kids, own);
}

std::uint64_t parallel(std::uint64_t seed, std::uint64_t id, int depth) {
  node_shape s = shape_of(seed, id, depth);
  std::uint64_t own = busy(id, s.leaf_work);
  std::vector<std::uint64_t> kids(s.fanout);
  try {
    if (s.joins && (s.fanout == 2 || s.fanout == 3)) {  // the two-way join (fork_join2.hpp), or n-ary
      auto kid = [&kids, seed, id, depth](unsigned i) { kids[i] = parallel(seed, id * 5 + i + 1, depth + 1); };
      if (s.fanout == 2) roost::parallel_invoke([&] { kid(0); }, [&] { kid(1); });
      else roost::parallel_invoke([&] { kid(0); }, [&] { kid(1); }, [&] { kid(2); });
    } else {
      // Hints are random and often wrong on purpose: they may change speed, never results.
      std::uint64_t r = mix(id + seed);
      roost::task_group tg = s.use_group_hints ? roost::task_group(static_cast<double>(r % 100),
                                                                    static_cast<double>(r % 4096))
                                               : roost::task_group();
      for (unsigned i = 0; i < s.fanout; ++i) {
        std::uint64_t child = id * 5 + i + 1;
        if (i + 1 == s.fanout && s.inline_last) {
          kids[i] = parallel(seed, child, depth + 1);
        } else if ((r >> i) & 1) {
          tg.run([&kids, i, seed, child, depth] { kids[i] = parallel(seed, child, depth + 1); },
                 static_cast<double>((r >> (8 + i)) % 10));
        } else {
          tg.run([&kids, i, seed, child, depth] { kids[i] = parallel(seed, child, depth + 1); });
        }
      }
      tg.wait();
    }
  } catch (const tree_error&) {
    if (!s.catches) throw;
    return mix(id ^ kCaught);
  }
  if (s.throws) throw tree_error(id);
  return combine(id, kids, own);
}

// Result of a whole tree: a value, or "threw" with the set of node ids that may legitimately be reported
// (when several subtrees throw, which one reaches the root first is a race).
struct outcome {
  bool threw = false;
  std::uint64_t value = 0;
  std::uint64_t node = 0;
};

outcome serial_outcome(std::uint64_t seed) {
  outcome o;
  try {
    o.value = serial(seed, 0, 0);
  } catch (const tree_error& e) {
    o.threw = true;
    o.node = e.node;
  }
  return o;
}

// Which throwing nodes can reach the root: walk serially and collect every uncaught thrower.
void collect_escaping(std::uint64_t seed, std::uint64_t id, int depth, std::set<std::uint64_t>& out, bool& escapes) {
  node_shape s = shape_of(seed, id, depth);
  std::set<std::uint64_t> below;
  bool any = false;
  for (unsigned i = 0; i < s.fanout; ++i) {
    bool child_escapes = false;
    collect_escaping(seed, id * 5 + i + 1, depth + 1, below, child_escapes);
    any |= child_escapes;
  }
  if (any && s.catches) {
    escapes = false;
    return;
  }
  if (any) {
    out.insert(below.begin(), below.end());
    escapes = true;
    return;
  }
  escapes = s.throws;
  if (s.throws) out.insert(id);
}

struct config {
  std::string sched;
  unsigned workers;  // 0: one per PU of the topology
  std::string topology;
  std::string label;  // names the topology in the test name
};

void PrintTo(const config& c, std::ostream* os) {
  *os << c.sched << " workers=" << c.workers << (c.topology.empty() ? "" : " topology='" + c.topology + "'");
}

std::string name_of(const config& c) {
  std::string n = c.sched + "_w" + std::to_string(c.workers);
  if (!c.label.empty()) n += "_" + c.label;
  for (char& ch : n)
    if (ch == '-' || ch == ':' || ch == ' ') ch = '_';
  return n;
}

std::vector<config> configs() {
  std::vector<config> v;
  for (const auto& s : roost::schedulers()) {
    if (!s.available) continue;
    for (unsigned w : {1u, 2u, 3u, 8u, 64u}) v.push_back({s.name, w, "", ""});
    v.push_back({s.name, 0, "pack:2 core:4 pu:1", "2x4"});
    v.push_back({s.name, 0, "pack:4 core:4 pu:1", "4x4"});
    v.push_back({s.name, 0, "pack:8 core:8 pu:1", "8x8"});
    // Caches small enough that the random data-size hints (0..4 KiB) fit some and not others: every
    // multi-level path (descent, aggregation, a 4-level tree) is taken.
    v.push_back({s.name, 0, "pack:2 l3:1(size=2KiB) core:4 pu:1", "2x4_l3"});
    v.push_back({s.name, 0, "pack:2 l3:1(size=4KiB) l2:2(size=1KiB) core:2 pu:1", "2x2x2_l3_l2"});
  }
  return v;
}

class Stress : public ::testing::TestWithParam<config> {};

}  // namespace

TEST_P(Stress, RandomTreesMatchSerial) {
  const config& c = GetParam();
  roost::options o;
  o.scheduler = c.sched;
  if (c.workers) o.workers = c.workers;
  if (!c.topology.empty()) o.topology = c.topology;
  roost::runtime rt(o);
  int threw = 0;
  for (int t = 0; t < kTrees; ++t) {
    std::uint64_t seed = 1000 + static_cast<std::uint64_t>(t) * 7919;
    outcome expect = serial_outcome(seed);
    std::set<std::uint64_t> escaping;
    bool escapes = false;
    collect_escaping(seed, 0, 0, escaping, escapes);
    ASSERT_EQ(escapes, expect.threw);
    for (int rep = 0; rep < 2; ++rep) {
      try {
        std::uint64_t got = rt.run([&] { return parallel(seed, 0, 0); });
        ASSERT_FALSE(expect.threw) << "tree " << seed << " should have thrown";
        ASSERT_EQ(got, expect.value) << "tree " << seed;
      } catch (const tree_error& e) {
        ASSERT_TRUE(expect.threw) << "tree " << seed << " threw from node " << e.node;
        ASSERT_TRUE(escaping.count(e.node)) << "node " << e.node << " cannot reach the root";
        ++threw;
      }
    }
  }
  RecordProperty("trees_that_threw", threw);
}

INSTANTIATE_TEST_SUITE_P(AllSchedulers, Stress, ::testing::ValuesIn(configs()),
                         [](const auto& info) { return name_of(info.param); });
