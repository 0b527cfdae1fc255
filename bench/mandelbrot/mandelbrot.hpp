// Mandelbrot set (seed 000's CPU-bound set): escape-time iteration counts of an N x N grid over
// [-2, 1] x [-1.5, 1.5], rows split in halves down to 4 rows. Integer counts: results compare exactly.
#pragma once
#include <cstring>
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::mandelbrot {

constexpr long kCutoffRows = 4;

struct problem_t final : problem {
  long n, max_iter;
  buffer<int> out, ref;
  problem_t(long n_, long it) : n(n_), max_iter(it), out(n_ * n_), ref(n_ * n_) {}
  void reset() override { std::memset(out.data(), 0, sizeof(int) * n * n); }
  bool check() const override { return std::memcmp(out.data(), ref.data(), sizeof(int) * n * n) == 0; }
  std::string describe() const override {
    return std::to_string(n) + "x" + std::to_string(n) + " pixels, up to " + std::to_string(max_iter) + " iterations";
  }
};

// Compiled once, in kernels.cpp, for every variant: common/forkjoin.hpp says why.
void rows(problem_t& p, long lo, long hi);

template <class FJ, class Iteration>
void run_tasks(problem_t& p, Iteration&& iteration) {
  iteration([&] { split_rows<FJ>(0, p.n, kCutoffRows, 0.0, [&](long lo, long hi) { rows(p, lo, hi); }); });
}

std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);
void roost_tasks(problem& p);
void tbb_tasks(problem& p);
void omp_tasks(problem& p);

}  // namespace bench::mandelbrot
