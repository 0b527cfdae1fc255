// Heat2D (seed 003 §4.5, digest §5): five-point heat stencil on an N x N grid of floats, two buffers
// swapped every time step, each row padded by one cache line (64 B) against power-of-two conflicts. Each
// step splits the interior into quadrants recursively down to 64 x 64 blocks, all four children spawned
// with equal work hints (task_group(4); run(..., 1)) and the group's grid bytes as its data-size hint.
#pragma once
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::heat2d {

constexpr long kLeaf = 64;
constexpr long kPad = 16;  // floats: one 64-byte line

struct problem_t final : problem {
  long n, iters, ld;
  buffer<float> a, b, init, ref;
  float* result = nullptr;
  problem_t(long n_, long it) : n(n_), iters(it), ld(n_ + kPad), a(n_ * ld), b(n_ * ld), init(n_ * ld), ref(n_ * ld) {
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j)
        init[i * ld + j] = (i == 0 || j == 0 || i == n - 1 || j == n - 1) ? 1.0f : static_cast<float>((i ^ j) % 7) * 0.1f;
  }
  void reset() override {
    std::memcpy(a.data(), init.data(), sizeof(float) * n * ld);
    std::memcpy(b.data(), init.data(), sizeof(float) * n * ld);
    result = a.data();
  }
  bool check() const override {
    for (long i = 0; i < n; ++i)
      if (std::memcmp(result + i * ld, ref.data() + i * ld, sizeof(float) * n) != 0) return false;
    return true;
  }
  std::string describe() const override {
    return std::to_string(n) + "x" + std::to_string(n) + " floats, " + std::to_string(iters) + " iterations, " +
           std::to_string(2 * n * ld * 4 >> 20) + " MiB";
  }
};

// touch_rows(base, row_bytes, rows, stride, write): the tile's rows in one annotation. The kernel reads
// the tile of src and writes the tile of dst: one identifier per data structure, its base address (seed
// 001 §3), so that the tile read in one step is the element written in the step before (the buffers
// swap) and KRD sees that reuse. The one-cell halo belongs to the neighbouring tiles and is not annotated:
// as elements of their own, the four halo strips would outnumber the tiles and hide the tiles' reuse.
// Compiled once, in kernels.cpp, for every variant: common/forkjoin.hpp says why.
void block_kernel(const float* src, float* dst, long ld, long r0, long r1, long c0, long c1);

template <class TouchRows>
void block(const float* src, float* dst, long ld, long r0, long r1, long c0, long c1, TouchRows&& touch_rows) {
  const std::size_t width = static_cast<std::size_t>(c1 - c0) * sizeof(float), stride = static_cast<std::size_t>(ld) * sizeof(float);
  touch_rows(src + r0 * ld + c0, width, static_cast<std::size_t>(r1 - r0), stride, false);
  touch_rows(dst + r0 * ld + c0, width, static_cast<std::size_t>(r1 - r0), stride, true);
  block_kernel(src, dst, ld, r0, r1, c0, c1);
}

template <class FJ, class Leaf>
void quad(long r0, long r1, long c0, long c1, double bytes_per_cell, const Leaf& leaf) {
  if (r1 - r0 <= kLeaf && c1 - c0 <= kLeaf) {
    leaf(r0, r1, c0, c1);
    return;
  }
  long rm = r0 + (r1 - r0) / 2, cm = c0 + (c1 - c0) / 2;
  const double w0 = distorted_weight(0, 4), w1 = distorted_weight(1, 4), w2 = distorted_weight(2, 4),
               w3 = distorted_weight(3, 4);
  typename FJ::group g(w0 + w1 + w2 + w3, static_cast<double>((r1 - r0) * (c1 - c0)) * bytes_per_cell);
  g.run([&] { quad<FJ>(r0, rm, c0, cm, bytes_per_cell, leaf); }, w0);
  g.run([&] { quad<FJ>(r0, rm, cm, c1, bytes_per_cell, leaf); }, w1);
  g.run([&] { quad<FJ>(rm, r1, c0, cm, bytes_per_cell, leaf); }, w2);
  g.run([&] { quad<FJ>(rm, r1, cm, c1, bytes_per_cell, leaf); }, w3);
  g.wait();
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, Touch&& touch) {
  float* src = p.a.data();
  float* dst = p.b.data();
  for (long t = 0; t < p.iters; ++t) {
    iteration([&] {
      quad<FJ>(1, p.n - 1, 1, p.n - 1, 2.0 * sizeof(float),
               [&](long r0, long r1, long c0, long c1) { block(src, dst, p.ld, r0, r1, c0, c1, touch); });
    });
    std::swap(src, dst);
  }
  p.result = src;
}

inline float* final_buffer(problem_t& p) { return p.iters % 2 ? p.b.data() : p.a.data(); }

// Loop form for the peers' parallel-for variants, over the same 64 x 64 tiles the recursion computes (so
// the leaf kernel and its shapes are the same), numbered in row-major tile order: a static schedule gives
// each thread a band of tile rows. for_tiles(count, body) runs body(tile) for tile in [0, count) for one
// time step; called by every thread of an OpenMP team, it does not write the problem.
template <class ForTiles>
void run_loops(problem_t& p, ForTiles&& for_tiles) {
  float* src = p.a.data();
  float* dst = p.b.data();
  const long inner = p.n - 2;
  const long per_side = (inner + kLeaf - 1) / kLeaf;
  for (long t = 0; t < p.iters; ++t) {
    for_tiles(per_side * per_side, [&](long tile) {
      long r0 = 1 + (tile / per_side) * kLeaf, c0 = 1 + (tile % per_side) * kLeaf;
      block(src, dst, p.ld, r0, std::min(r0 + kLeaf, p.n - 1), c0, std::min(c0 + kLeaf, p.n - 1),
            [](const void*, std::size_t, std::size_t, std::size_t, bool) {});
    });
    std::swap(src, dst);
  }
}

std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);
void roost_tasks(problem& p);
void roost_pfor(problem& p);  // heat2d-pfor: run_loops with roost::parallel_for
void tbb_tasks(problem& p);
void tbb_pfor(problem& p);
void omp_tasks(problem& p);
void omp_static(problem& p);
void omp_dynamic(problem& p);

}  // namespace bench::heat2d
