// Seed 000's memory-bound stencils on a rows x cols grid of doubles (default 1024x512, §4.1):
//   heat     five-point Jacobi heat diffusion, two matrices swapped every time step;
//   sor      successive over-relaxation, red-black ordering (omega 1.25) in place: every cell of one
//            colour reads only cells of the other, so any schedule computes the same bits.
// Rows are split in halves down to 8 rows (balanced) or by seed 000's Algorithm 1 (the -ub variants).
// Every leaf annotates what it touches (roost::touch) through the framework adapter's hook.
#pragma once
#include <cstring>
#include <string>
#include <utility>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::stencil {

enum class kind { heat, sor };
enum class shape { balanced, unbalanced };
constexpr long kCutoffRows = 8;
constexpr double kOmega = 1.25;

struct problem_t final : problem {
  kind k;
  shape s;
  long rows, cols, iters;
  buffer<double> a, b, init, ref;
  double* result = nullptr;  // which buffer holds the last time step

  problem_t(kind k_, shape s_, long r, long c, long it)
      : k(k_), s(s_), rows(r), cols(c), iters(it), a(r * c), b(r * c), init(r * c), ref(r * c) {
    for (long i = 0; i < r; ++i)
      for (long j = 0; j < c; ++j) init[i * c + j] = (i == 0 || j == 0) ? 100.0 : ((i * 7 + j * 13) % 17) * 0.5;
  }
  void reset() override {
    std::memcpy(a.data(), init.data(), sizeof(double) * rows * cols);
    std::memcpy(b.data(), init.data(), sizeof(double) * rows * cols);
    result = a.data();
  }
  bool check() const override { return std::memcmp(result, ref.data(), sizeof(double) * rows * cols) == 0; }
  std::string describe() const override {
    return std::to_string(rows) + "x" + std::to_string(cols) + " doubles, " + std::to_string(iters) +
           " iterations, " + std::to_string((k == kind::heat ? 2 : 1) * rows * cols * 8 >> 20) + " MiB";
  }
  double bytes_per_row() const { return static_cast<double>(cols) * sizeof(double); }
};

// Kernels: rows [lo, hi) of the interior. Annotated as the block of rows they read and write, by its base
// address (seed 001 §3): the rows read in one step are the element written in the step before, and KRD
// sees that reuse. The halo rows belong to the neighbouring blocks and are not annotated (heat2d.hpp).
// Compiled once, in kernels.cpp, for every variant: common/forkjoin.hpp says why.
void heat_rows_kernel(const double* src, double* dst, long cols, long lo, long hi);
void sor_rows_kernel(double* g, long cols, long lo, long hi, int colour);

template <class Touch>
void heat_rows(const double* src, double* dst, long cols, long lo, long hi, Touch&& touch) {
  touch(src + lo * cols, static_cast<std::size_t>(hi - lo) * cols * sizeof(double), false);
  touch(dst + lo * cols, static_cast<std::size_t>(hi - lo) * cols * sizeof(double), true);
  heat_rows_kernel(src, dst, cols, lo, hi);
}

template <class Touch>
void sor_rows(double* g, long cols, long lo, long hi, int colour, Touch&& touch) {
  touch(g + lo * cols, static_cast<std::size_t>(hi - lo) * cols * sizeof(double), false);
  touch(g + lo * cols, static_cast<std::size_t>(hi - lo) * cols * sizeof(double), true);
  sor_rows_kernel(g, cols, lo, hi, colour);
}

struct no_touch {
  void operator()(const void*, std::size_t, bool) const {}
};

// One whole run, fork-join over rows with framework FJ; `iteration(body)` runs one time step (roost: one
// runtime::run per step, so that schedulers that learn across iterations see them).
template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, Touch&& touch) {
  double* src = p.a.data();
  double* dst = p.b.data();
  const long cols = p.cols;
  auto split = [&](auto&& leaf) {
    if (p.s == shape::balanced) split_rows<FJ>(1, p.rows - 1, kCutoffRows, p.bytes_per_row(), leaf);
    else split_rows_ub<FJ>(1, p.rows - 1, kCutoffRows, p.bytes_per_row(), leaf);
  };
  for (long t = 0; t < p.iters; ++t) {
    if (p.k == kind::heat) {
      iteration([&] { split([&](long lo, long hi) { heat_rows(src, dst, cols, lo, hi, touch); }); });
      std::swap(src, dst);
    } else {
      iteration([&] {
        split([&](long lo, long hi) { sor_rows(src, cols, lo, hi, 0, touch); });
        split([&](long lo, long hi) { sor_rows(src, cols, lo, hi, 1, touch); });
      });
    }
  }
  p.result = src;
}

// Which buffer holds the result after all time steps.
inline double* final_buffer(problem_t& p) {
  return (p.k == kind::heat && p.iters % 2 == 1) ? p.b.data() : p.a.data();
}

// Loop form for the peers' parallel-for variants: for_rows(body) runs body(lo, hi) over the interior rows
// for one time step. Called by every OpenMP thread of a team; it does not write the problem.
template <class ForRows>
void run_loops(problem_t& p, ForRows&& for_rows) {
  double* src = p.a.data();
  double* dst = p.b.data();
  const long cols = p.cols;
  for (long t = 0; t < p.iters; ++t) {
    if (p.k == kind::heat) {
      for_rows([&](long lo, long hi) { heat_rows(src, dst, cols, lo, hi, no_touch{}); });
      std::swap(src, dst);
    } else {
      for_rows([&](long lo, long hi) { sor_rows(src, cols, lo, hi, 0, no_touch{}); });
      for_rows([&](long lo, long hi) { sor_rows(src, cols, lo, hi, 1, no_touch{}); });
    }
  }
}

std::unique_ptr<problem> prepare(kind k, shape s, const std::string& name, const std::string& size);
void roost_tasks(problem& p);
void tbb_tasks(problem& p);
void tbb_pfor(problem& p);
void omp_tasks(problem& p);
void omp_static(problem& p);
void omp_dynamic(problem& p);
void serial(problem& p);

}  // namespace bench::stencil
