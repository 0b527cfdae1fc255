// adws-ml's own invariants (seed 003 ch. 5; digest §3) as observers, and the byte recursion their tests run:
// shared by test_adws_ml (native threads) and test_sim (seeded simulated interleavings).
//  * Level descent and per-level dealing (§5.3.3): without stealing, each cache-sized piece is dealt over
//    its package's cores, and the packages' shares over the packages (`leaf_map`, `predicted_worker`).
//  * One root per cache: at no moment do the leaves running under one cache belong to more data than that
//    cache holds (`cache_check`).
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "roost/roost.hpp"

namespace roost_test::adws_ml {

constexpr std::size_t kLeaf = 64 << 10;

// A binary recursion over bytes [lo, hi) with the group's bytes as its data-size hint (RRM-like): a leaf is
// 64 KiB, `leaf(lo, hi)` its body, which returns the leaf's part of the sum.
template <class Leaf>
long chunks(std::size_t lo, std::size_t hi, const Leaf& leaf) {
  if (hi - lo <= kLeaf) return leaf(lo, hi);
  const std::size_t mid = lo + (hi - lo) / 2;
  long a = 0, b = 0;
  roost::task_group tg(2, static_cast<double>(hi - lo));
  tg.run([&] { a = chunks(lo, mid, leaf); }, 1);
  tg.run([&] { b = chunks(mid, hi, leaf); }, 1);
  tg.wait();
  return a + b;
}

inline std::size_t leaf_depth_of(std::size_t n) {
  std::size_t d = 0;
  for (std::size_t s = n; s > kLeaf; s /= 2) ++d;
  return d;
}

// The byte range of a task of chunks(0, n) from its spawn path: child 0 is the lower half.
inline std::pair<std::size_t, std::size_t> range_of_path(const std::vector<std::uint32_t>& path, std::size_t n) {
  std::size_t lo = 0, size = n;
  for (std::size_t i = 1; i < path.size(); ++i) {
    size /= 2;
    lo += path[i] * size;
  }
  return {lo, lo + size};
}

// Where chunks(0, n) puts leaf `leaf` (its index in 64 KiB units) without stealing, on `packages` packages
// of `cores` cores with caches of `capacity` bytes, all powers of two, n larger than all caches together:
// the DRAM level deals the packages' shares as adws deals a binary tree (the first child takes the upper
// part: share j of n goes to package packages-1-j); a package runs its share alone down to the pieces of
// `capacity` bytes, each of which fits its cache, moves down and is dealt over the package's cores (part j
// of a piece to core cores-1-j).
inline int predicted_worker(std::size_t leaf, std::size_t n, unsigned packages, unsigned cores, std::size_t capacity) {
  const std::size_t at = leaf * kLeaf;
  const std::size_t package = packages - 1 - at / (n / packages);
  const std::size_t core = cores - 1 - (at % capacity) / (capacity / cores);
  return static_cast<int>(cores * package + core);
}

struct leaf_map : roost::task_observer {
  std::size_t n, leaf_depth;
  std::mutex m;
  std::map<std::size_t, int> worker_of_leaf;  // leaf index -> worker
  explicit leaf_map(std::size_t n_) : n(n_), leaf_depth(leaf_depth_of(n_)) {}
  void on_task_start(const roost::task_event& e) override {
    if (e.path.size() != leaf_depth + 1) return;
    std::lock_guard<std::mutex> lk(m);
    worker_of_leaf[range_of_path(e.path, n).first / kLeaf] = e.worker;
  }
};

// Per cache, the leaves running now: their lowest common ancestor's bytes must fit the cache.
struct cache_check : roost::task_observer {
  std::size_t n, leaf_depth, capacity;
  unsigned workers_per_cache;
  std::mutex m;
  std::map<unsigned, std::map<std::string, std::vector<std::uint32_t>>> running;  // cache -> leaf -> path
  std::size_t violations = 0, leaves = 0, worst = 0;
  cache_check(std::size_t n_, std::size_t cap, unsigned per)
      : n(n_), leaf_depth(leaf_depth_of(n_)), capacity(cap), workers_per_cache(per) {}
  void on_task_start(const roost::task_event& e) override {
    if (e.path.size() != leaf_depth + 1) return;
    std::lock_guard<std::mutex> lk(m);
    auto& here = running[static_cast<unsigned>(e.worker) / workers_per_cache];
    here[e.path_string()] = e.path;
    std::size_t common = e.path.size();
    for (const auto& [k, p] : here) {
      std::size_t c = 0;
      while (c < common && p[c] == e.path[c]) ++c;
      common = c;
    }
    const std::size_t lca_bytes = n >> (common - 1);
    worst = std::max(worst, lca_bytes);
    ++leaves;
    if (lca_bytes > capacity) ++violations;
  }
  void on_task_end(const roost::task_event& e) override {
    if (e.path.size() != leaf_depth + 1) return;
    std::lock_guard<std::mutex> lk(m);
    running[static_cast<unsigned>(e.worker) / workers_per_cache].erase(e.path_string());
  }
};

}  // namespace roost_test::adws_ml
