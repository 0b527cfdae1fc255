// Random fork-join task trees with exact serial answers, shared by the stress tests (native) and the
// simulated platform's deterministic tests: random fan-out, depth, leaf work, hints (often wrong on
// purpose; data sizes from a few bytes to more than any cache), thrown and caught exceptions, task groups
// and parallel_invoke (the two-way join), and a node's children split over two groups open at once and
// joined in either order (the shapes behind adws-ml's stalls found by an outside-user campaign), and a child
// that spawns its last sibling into the group the parent would have spawned it into (a spawn by another task
// than the group's owner, which may come after that group's wait returned: its destructor then joins it).
// Leaf work
// is declared to the simulator (roost::compute, natively free), so that simulated runs interleave.
// Everything about a node follows from (tree seed, node id), so serial and parallel walks see the same tree.
#pragma once
#include <atomic>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include "roost/roost.hpp"

namespace roost_test::tree {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int kMaxDepth = 5;
#else
constexpr int kMaxDepth = 8;
#endif

// Nodes run by parallel() since the last reset (every task exactly once: equal to serial()'s count for a
// tree that does not throw).
inline std::atomic<std::uint64_t> g_nodes_run{0};

inline std::uint64_t mix(std::uint64_t x) {
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
  bool two_groups;    // its spawned children split over two task groups open at once
  bool first_first;   // two groups: the first declared is joined first
  bool sibling_spawns_last;  // a task group's first child spawns the last child (not run inline) itself
};

inline node_shape shape_of(std::uint64_t seed, std::uint64_t id, int depth) {
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
  s.two_groups = ((r >> 52) % 3) == 0;
  s.first_first = ((r >> 56) % 2) == 0;
  s.sibling_spawns_last = ((r >> 60) % 4) == 0;
  return s;
}

inline std::uint64_t busy(std::uint64_t id, unsigned n) {
  std::uint64_t h = id;
  for (unsigned i = 0; i < n; ++i) h = mix(h + i);
  return h;
}

inline constexpr std::uint64_t kCaught = 0xCA0617ull;

inline std::uint64_t combine(std::uint64_t id, const std::vector<std::uint64_t>& kids, std::uint64_t own) {
  std::uint64_t h = own ^ id;
  for (std::uint64_t k : kids) h = mix(h * 31 + k);  // order matters: children in index order
  return h;
}

inline std::uint64_t serial(std::uint64_t seed, std::uint64_t id, int depth) {
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

// A group's hints: total work, and a data size on one of the scales of the topologies the tests use (inside
// an L1 or an L2, a shared cache, more than any): adws-ml descends, aggregates or stays by them.
inline roost::task_group hinted_group(std::uint64_t r) {
  static constexpr double kBytes[] = {0, 24e3, 200e3, 3e6, 1e12};
  return roost::task_group(static_cast<double>(r % 100), kBytes[(r >> 12) % 5] + static_cast<double>(r % 4096));
}

inline std::uint64_t parallel(std::uint64_t seed, std::uint64_t id, int depth) {
  g_nodes_run.fetch_add(1, std::memory_order_relaxed);
  node_shape s = shape_of(seed, id, depth);
  roost::compute(100 * std::uint64_t(s.leaf_work));
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
      roost::task_group tg = s.use_group_hints ? hinted_group(r) : roost::task_group();
      roost::task_group other = s.use_group_hints ? hinted_group(mix(r)) : roost::task_group();
      const auto group_of = [&](unsigned i) -> roost::task_group& {
        return s.two_groups && ((r >> (20 + i)) & 1) ? other : tg;
      };
      // The first child spawns the last one into the last one's group, before its own subtree, so that a
      // tree where nothing throws still runs every node. Only into a group that outlives the first child's
      // join: its own, or `tg`, declared first and so destroyed last. Into `other` from a child of `tg`, the
      // program would be wrong: where something throws, the unwinding destroys `other` before `tg`'s
      // destructor runs the first child, which then spawns into a dead group (ASan: stack-use-after-scope).
      const bool sibling_spawns = s.sibling_spawns_last && s.fanout >= 2 && !s.inline_last &&
                                  (&group_of(s.fanout - 1) == &tg || &group_of(0) == &group_of(s.fanout - 1));
      for (unsigned i = 0; i < s.fanout; ++i) {
        std::uint64_t child = id * 5 + i + 1;
        roost::task_group& into = group_of(i);
        if (sibling_spawns && i == 0) {
          roost::task_group& last_into = group_of(s.fanout - 1);
          const unsigned last = s.fanout - 1;
          const std::uint64_t last_child = id * 5 + s.fanout;
          into.run([&kids, &last_into, last, last_child, seed, child, depth] {
            last_into.run([&kids, last, last_child, seed, depth] { kids[last] = parallel(seed, last_child, depth + 1); });
            kids[0] = parallel(seed, child, depth + 1);
          });
        } else if (sibling_spawns && i + 1 == s.fanout) {
          // spawned by the first child
        } else if (i + 1 == s.fanout && s.inline_last) {
          kids[i] = parallel(seed, child, depth + 1);
        } else if ((r >> i) & 1) {
          into.run([&kids, i, seed, child, depth] { kids[i] = parallel(seed, child, depth + 1); },
                   static_cast<double>((r >> (8 + i)) % 10));
        } else {
          into.run([&kids, i, seed, child, depth] { kids[i] = parallel(seed, child, depth + 1); });
        }
      }
      // One of them throwing leaves the other to its destructor, which joins it while unwinding.
      if (s.first_first) {
        tg.wait();
        other.wait();
      } else {
        other.wait();
        tg.wait();
      }
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

inline outcome serial_outcome(std::uint64_t seed) {
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
inline void collect_escaping(std::uint64_t seed, std::uint64_t id, int depth, std::set<std::uint64_t>& out, bool& escapes) {
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

// The whole tree's node count, and whether any node throws: a tree where none throws runs every node exactly
// once (where one throws, which siblings were spawned before it depends on the schedule).
inline std::uint64_t count_nodes(std::uint64_t seed, std::uint64_t id, int depth, bool& any_throws) {
  node_shape s = shape_of(seed, id, depth);
  any_throws |= s.throws;
  std::uint64_t n = 1;
  for (unsigned i = 0; i < s.fanout; ++i) n += count_nodes(seed, id * 5 + i + 1, depth + 1, any_throws);
  return n;
}

}  // namespace roost_test::tree
