// Gaussian elimination (seed 000's GE, GE-ub): LU factorisation without pivoting of a diagonally dominant
// n x n matrix of doubles. Step k updates rows k+1..n-1, split into row blocks (halves down to 8 rows, or
// seed 000's Algorithm 1 for ge-ub). Every element sees the same operations in the same order under any
// schedule, so results are compared exactly.
#pragma once
#include <cstring>
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::ge {

enum class shape { balanced, unbalanced };
constexpr long kCutoffRows = 8;

struct problem_t final : problem {
  shape s;
  long n;
  buffer<double> a, init, ref;
  problem_t(shape s_, long n_) : s(s_), n(n_), a(n_ * n_), init(n_ * n_), ref(n_ * n_) {
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) init[i * n + j] = i == j ? 2.0 * n : ((i * 31 + j * 17) % 23) / 23.0;
  }
  void reset() override { std::memcpy(a.data(), init.data(), sizeof(double) * n * n); }
  bool check() const override { return std::memcmp(a.data(), ref.data(), sizeof(double) * n * n) == 0; }
  std::string describe() const override {
    return std::to_string(n) + "x" + std::to_string(n) + " doubles, " + std::to_string(n * n * 8 >> 20) + " MiB";
  }
};

// Compiled once, in kernels.cpp, for every variant: common/forkjoin.hpp says why.
void eliminate_rows_kernel(double* a, long n, long k, long lo, long hi);

template <class Touch>
void eliminate_rows(double* a, long n, long k, long lo, long hi, Touch&& touch) {
  touch(a + k * n + k, static_cast<std::size_t>(n - k) * sizeof(double), false);
  touch(a + lo * n, static_cast<std::size_t>(hi - lo) * n * sizeof(double), true);
  eliminate_rows_kernel(a, n, k, lo, hi);
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, Touch&& touch) {
  double* a = p.a.data();
  const long n = p.n;
  const double bpr = static_cast<double>(n) * sizeof(double);
  iteration([&] {
    for (long k = 0; k + 1 < n; ++k) {
      auto leaf = [&](long lo, long hi) { eliminate_rows(a, n, k, lo, hi, touch); };
      if (p.s == shape::balanced) split_rows<FJ>(k + 1, n, kCutoffRows, bpr, leaf);
      else split_rows_ub<FJ>(k + 1, n, kCutoffRows, bpr, leaf);
    }
  });
}

template <class ForRows>
void run_loops(problem_t& p, ForRows&& for_rows) {
  double* a = p.a.data();
  const long n = p.n;
  for (long k = 0; k + 1 < n; ++k)
    for_rows(k + 1, n, [&](long lo, long hi) { eliminate_rows(a, n, k, lo, hi, [](const void*, std::size_t, bool) {}); });
}

std::unique_ptr<problem> prepare(shape s, const std::string& name, const std::string& size);
void serial(problem& p);
void roost_tasks(problem& p);
void tbb_tasks(problem& p);
void tbb_pfor(problem& p);
void omp_tasks(problem& p);
void omp_static(problem& p);
void omp_dynamic(problem& p);

}  // namespace bench::ge
