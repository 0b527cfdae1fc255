// Heat2D (seed 003 §4.5, digest §5): five-point heat stencil on an N x N grid of floats, two buffers
// swapped every time step, each row padded by one cache line (64 B) against power-of-two conflicts. Each
// step splits the interior into quadrants recursively down to 64 x 64 blocks, all children spawned with
// their cells as work hints (equal quadrants: the thesis's 1 : 1 : 1 : 1) and the group's grid bytes as
// its data-size hint.
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

// Rows and columns split at tile boundaries (multiples of kLeaf from the interior's first cell), so that the
// leaves are the loop form's 64 x 64 tiles (run_loops) at every size. Split at midpoints, 1448x1448 had
// 1024 leaves of 45 x 45 against the loop's 529 tiles, and compared a shape with twice the leaves to
// OpenMP's static loop. A block one tile high (wide) is split in the other direction only. Work hints are
// the children's tiles (the leaves under each), so equal quadrants get the thesis's 1:1:1:1 (seed 003
// §4.4) even where the interior's last tile is narrower. Cells were tried: 510 interior cells make
// quadrants of 256 and 254 rows, the dealt ranges then miss the worker boundary, and one tile of each
// iteration ran on the other worker's side (src/sched/README.md, "island"). --hint-error distorts them
// (distorted_weight).
template <class FJ, class Leaf>
void quad(long r0, long r1, long c0, long c1, double bytes_per_cell, const Leaf& leaf) {
  const long row_tiles = (r1 - r0 + kLeaf - 1) / kLeaf, col_tiles = (c1 - c0 + kLeaf - 1) / kLeaf;
  if (row_tiles <= 1 && col_tiles <= 1) {
    leaf(r0, r1, c0, c1);
    return;
  }
  const long rm = r0 + (row_tiles / 2) * kLeaf, cm = c0 + (col_tiles / 2) * kLeaf;  // r0 (c0): not split
  struct part {
    long r0, r1, c0, c1;
  };
  part parts[4];
  int k = 0;
  for (const part& p : {part{r0, rm, c0, cm}, part{r0, rm, cm, c1}, part{rm, r1, c0, cm}, part{rm, r1, cm, c1}})
    if (p.r0 < p.r1 && p.c0 < p.c1) parts[k++] = p;
  double work[4], total = 0;
  for (int i = 0; i < k; ++i) {
    const long tiles = ((parts[i].r1 - parts[i].r0 + kLeaf - 1) / kLeaf) *
                       ((parts[i].c1 - parts[i].c0 + kLeaf - 1) / kLeaf);
    total += work[i] = static_cast<double>(tiles) * distorted_weight(i, k);
  }
  typename FJ::group g(total, static_cast<double>((r1 - r0) * (c1 - c0)) * bytes_per_cell);
  for (int i = 0; i < k; ++i) {
    const part p = parts[i];
    g.run([&, p] { quad<FJ>(p.r0, p.r1, p.c0, p.c1, bytes_per_cell, leaf); }, work[i]);
  }
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
