// UTS, the Unbalanced Tree Search of BOTS: count the nodes of an implicit tree, one task per node. The
// binomial shape of BOTS's T3 input: the root has B0 children, every other node 8 children with probability
// 0.124875, else none (8 x 0.124875 = 0.999 children expected: nearly critical, so the tree is deep and very
// unbalanced; BOTS's T3, 4.1 million nodes, is 1,572 levels deep). A node's number of children and its
// children's states come from its own state, and a child's state from its parent's state and its index,
// so every scheduler searches the same tree. BOTS derives them with SHA-1; here SplitMix64's finalizer
// stands in for it, computed GRAIN times per child (BOTS's compute granularity, -g: more work per node, the
// same tree). No work hints (the
// shape is unknown in advance) and no data: CPU-bound, millions of tiny tasks, almost all of them in a
// single runtime::run, as in BOTS.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::uts {

constexpr int kChildren = 8;                 // m: the children of a node that has any
constexpr double kChildProbability = 0.124875;  // q

struct problem_t final : problem {
  long root_children;   // B0
  std::uint64_t root;   // the root's state, from the seed
  int grain;            // times each child's state is computed
  long expected = -1;   // nodes, counted by an explicit-stack walk (prepare)
  long depth = 0;       // the deepest node's depth (the root is 0)
  long result = -1;
  problem_t(long b0, long seed, long g);
  void reset() override { result = -1; }
  bool check() const override { return result == expected; }
  std::string describe() const override;
};

// SplitMix64's finalizer (Steele, Lea, Flood 2014): a bijection that mixes every input bit into every output bit.
inline std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline bool has_children(std::uint64_t state) {
  return mix(state) < static_cast<std::uint64_t>(kChildProbability * 18446744073709551616.0);  // 2^64
}

// Out of line (kernels.cpp), the node's work: the same instructions in every variant.
std::uint64_t child_state(std::uint64_t parent, long index, int grain);

template <class FJ>
long children(std::uint64_t state, long n, int grain);

// The nodes in the subtree of a non-root node. A leaf returns before any task group is built (the
// README's note on recursions with tiny leaves).
template <class FJ>
long subtree(std::uint64_t state, int grain) {
  return has_children(state) ? 1 + children<FJ>(state, kChildren, grain) : 1;
}

// One task per child, as BOTS's parTreeSearch: the parent computes each child's state, then spawns it.
template <class FJ>
__attribute__((noinline)) long children(std::uint64_t state, long n, int grain) {
  long small[kChildren];
  std::vector<long> large;  // the root's B0
  long* counts = small;
  if (n > kChildren) {
    large.resize(static_cast<std::size_t>(n));
    counts = large.data();
  }
  {
    typename FJ::group g;
    for (long i = 0; i < n; ++i) {
      const std::uint64_t s = child_state(state, i, grain);
      g.run([counts, i, s, grain] { counts[i] = subtree<FJ>(s, grain); });
    }
    g.wait();
  }
  long total = 0;
  for (long i = 0; i < n; ++i) total += counts[i];
  return total;
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch&) {
  iteration([&] { p.result = 1 + children<FJ>(p.root, p.root_children, p.grain); });
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::uts
