// Jacobi (seed 002 Table 4): blocked 2-D heat-equation solver on an N x N grid of doubles, B x B blocks,
// two grids swapped every step, one task per block (seed 002: 16384^2, block 512, fine distribution).
// Blocks are numbered row-major; one task spawns a task per block, declaring its rows of both grids, with
// equal work hints and the group's bytes as its data-size hint (the grids' parts are block rows: coarse
// puts block row r on node r mod N). Boundary cells stay fixed. Results are exact.
#pragma once
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::jacobi {

struct problem_t final : problem {
  long n, bs, iters, nb;  // nb blocks per side
  buffer<double> a, b, init, ref;
  problem_t(long n_, long bs_, long it)
      : n(n_), bs(bs_), iters(it), nb((n_ + bs_ - 1) / bs_), a(n_ * n_, nb), b(n_ * n_, nb), init(n_ * n_), ref(n_ * n_) {
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j)
        init[i * n + j] = (i == 0 || j == n - 1) ? 100.0 : static_cast<double>((i * 13 + j * 7) % 17);
  }
  void reset() override {
    std::memcpy(a.data(), init.data(), sizeof(double) * n * n);
    std::memcpy(b.data(), init.data(), sizeof(double) * n * n);
  }
  // Steps alternate a -> b, b -> a: the last one wrote b when the count is odd.
  double* result() const { return iters % 2 ? b.data() : a.data(); }
  bool check() const override { return std::memcmp(result(), ref.data(), sizeof(double) * n * n) == 0; }
  std::string describe() const override {
    return std::to_string(n) + "x" + std::to_string(n) + " doubles, " + std::to_string(bs) + "x" + std::to_string(bs) +
           " blocks, " + std::to_string(iters) + " iterations, " + std::to_string(2 * n * n * 8 >> 20) + " MiB";
  }
};

// Block `blk` (row-major) of one step, clipped to the interior.
// Compiled once, in kernels.cpp, for every variant: common/forkjoin.hpp says why.
void block_kernel(const double* src, double* dst, long n, long r0, long r1, long c0, long c1);

template <class Touch>
void block(const problem_t& p, const double* src, double* dst, long blk, const Touch& touch) {
  const long n = p.n, r0 = std::max(1L, (blk / p.nb) * p.bs), c0 = std::max(1L, (blk % p.nb) * p.bs);
  const long r1 = std::min(n - 1, (blk / p.nb + 1) * p.bs), c1 = std::min(n - 1, (blk % p.nb + 1) * p.bs);
  if (r0 >= r1 || c0 >= c1) return;
  for (long i = r0 - 1; i <= r1; ++i) touch(src + i * n + c0 - 1, static_cast<std::size_t>(c1 - c0 + 2) * sizeof(double), false);
  for (long i = r0; i < r1; ++i) touch(dst + i * n + c0, static_cast<std::size_t>(c1 - c0) * sizeof(double), true);
  block_kernel(src, dst, n, r0, r1, c0, c1);
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  double* src = p.a.data();
  double* dst = p.b.data();
  const double bytes = 2.0 * static_cast<double>(p.bs * p.bs) * sizeof(double);
  for (long t = 0; t < p.iters; ++t) {
    iteration([&] {
      // Block k reads its rows of src and writes them in dst (the one-row halo is left out: the grids'
      // parts are block rows, so the halo's node is a neighbour's).
      auto decl_of = [&](long k) {
        const long r0 = (k / p.nb) * p.bs, r1 = std::min(p.n, r0 + p.bs);
        const long c0 = (k % p.nb) * p.bs, c1 = std::min(p.n, c0 + p.bs);
        const std::size_t row = static_cast<std::size_t>(c1 - c0) * sizeof(double), ld = static_cast<std::size_t>(p.n) * sizeof(double);
        return decl{}
            .add_rows(src + r0 * p.n + c0, row, static_cast<std::size_t>(r1 - r0), ld, false)
            .add_rows(dst + r0 * p.n + c0, row, static_cast<std::size_t>(r1 - r0), ld, true);
      };
      spawn_each_declared<FJ>(p.nb * p.nb, bytes, decl_of, [&](long k) { block(p, src, dst, k, touch); });
    });
    std::swap(src, dst);
  }
}

template <class ForEach>
void run_loops(problem_t& p, ForEach&& for_each) {
  double* src = p.a.data();
  double* dst = p.b.data();
  for (long t = 0; t < p.iters; ++t) {
    for_each(p.nb * p.nb, [&](long k) { block(p, src, dst, k, no_touch{}); });
    std::swap(src, dst);
  }
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::jacobi
