// KD-tree construction (seed 003 ch. 5): random 3-D points of doubles; each node splits its points on the
// axis depth % 3 around the median of three coordinates (first, middle, last) with the parallel,
// double-buffered partition of common/partition.hpp, then builds both sides as two tasks (hints = point
// counts, data-size hint = the node's bytes). Leaves hold at most 4 KiB of points; below 64 KiB the
// recursion and the partition run serially. The tree is implicit in the final order of the points; each
// build also returns a hash of its split values in tree order. Both must equal the serial build's exactly.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"
#include "common/partition.hpp"

namespace bench::kdtree {

struct point {
  double c[3];
};
constexpr long kLeafPoints = 4096 / sizeof(point);
constexpr long kTaskPoints = 65536 / sizeof(point);

struct problem_t final : problem {
  long n;
  buffer<point> pts, scratch, init, ref;
  std::uint64_t hash = 0, ref_hash = 0;
  explicit problem_t(long n_) : n(n_), pts(n_), scratch(n_), init(n_), ref(n_) {
    std::uint64_t x = 0x853c49e6748fea9bull;
    for (long i = 0; i < n; ++i)
      for (double& c : init[i].c) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c = static_cast<double>(x >> 11) * 0x1.0p-53;
      }
  }
  void reset() override {
    std::memcpy(static_cast<void*>(pts.data()), init.data(), sizeof(point) * n);
    hash = 0;
  }
  bool check() const override { return hash == ref_hash && std::memcmp(pts.data(), ref.data(), sizeof(point) * n) == 0; }
  std::string describe() const override { return std::to_string(n) + " 3-D points, " + std::to_string(n * 24 >> 20) + " MiB"; }
};

inline std::uint64_t mix(std::uint64_t h, double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return (h ^ b) * 0x100000001b3ull;
}

// Builds the subtree of the n points in x (y: the other buffer); the points end in x when in_x, else y.
template <class FJ, class Touch>
std::uint64_t build(point* x, point* y, long n, int depth, bool in_x, const Touch& touch) {
  auto finish = [&] {
    if (!in_x) {
      touch(y, static_cast<std::size_t>(n) * sizeof(point), true);
      std::memcpy(static_cast<void*>(y), x, static_cast<std::size_t>(n) * sizeof(point));
    }
  };
  if (n <= kLeafPoints) {
    finish();
    return 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(n);
  }
  if (n <= kTaskPoints && !std::is_same_v<FJ, serial_fj>) return build<serial_fj>(x, y, n, depth, in_x, touch);
  const int axis = depth % 3;
  double pivot = 0;
  const long m = pivot_split<FJ>(x, y, n, kTaskPoints, [axis](const point& p) { return p.c[axis]; }, touch, &pivot);
  if (m == n) {  // every coordinate on this axis equals the pivot: a leaf (cannot happen with random doubles)
    finish();
    return mix(0, pivot);
  }
  std::uint64_t left = 0, right = 0;
  typename FJ::group g(static_cast<double>(n), static_cast<double>(n) * sizeof(point));
  g.run([&] { left = build<FJ>(y, x, m, depth + 1, !in_x, touch); }, static_cast<double>(m));
  g.run([&] { right = build<FJ>(y + m, x + m, n - m, depth + 1, !in_x, touch); }, static_cast<double>(n - m));
  g.wait();
  return mix(mix(mix(0, pivot), static_cast<double>(left)), static_cast<double>(right));
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  iteration([&] { p.hash = build<FJ>(p.pts.data(), p.scratch.data(), p.n, 0, true, touch); });
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::kdtree
