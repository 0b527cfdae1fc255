// RRM, Recursive Repeated Map (seed 003 ch. 5, digest's benchmark table): at each level of a binary
// recursion over an array of doubles, apply a[i] += c * a[i] three times (N_b = 3) to the whole subarray,
// each time as a parallel loop (recursive bisection, leaves of 128 KB), then recurse on both halves with
// task_group(2, bytes) and hints 1 : 1, stopping below 32 KB. Deeper levels re-read data that fits ever
// smaller caches: the multi-level ADWS workload. Every element sees the same operations in the same order
// under any schedule, so results are exact.
#pragma once
#include <cstring>
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::rrm {

constexpr long kLeafElems = 128 * 1024 / sizeof(double);  // parallel-loop leaves
constexpr long kStopElems = 32 * 1024 / sizeof(double);   // recursion cutoff
constexpr int kRepeats = 3;
constexpr double kFactor = 1.0 / 1024;

struct problem_t final : problem {
  long n;
  buffer<double> a, init, ref;
  explicit problem_t(long n_) : n(n_), a(n_), init(n_), ref(n_) {
    for (long i = 0; i < n; ++i) init[i] = static_cast<double>((i * 2654435761u) % 10007) * 0.001;
  }
  void reset() override { std::memcpy(a.data(), init.data(), sizeof(double) * n); }
  bool check() const override { return std::memcmp(a.data(), ref.data(), sizeof(double) * n) == 0; }
  std::string describe() const override { return std::to_string(n) + " doubles, " + std::to_string(n * 8 >> 20) + " MiB"; }
};

// Compiled once, in kernels.cpp, for every variant: common/forkjoin.hpp says why.
void map_kernel(double* a, long lo, long hi);  // a[i] += kFactor * a[i]

template <class FJ, class Touch>
void rrm(double* a, long lo, long hi, const Touch& touch) {
  for (int r = 0; r < kRepeats; ++r)
    split_rows<FJ>(lo, hi, kLeafElems, sizeof(double), [&](long l, long h) {
      touch(a + l, static_cast<std::size_t>(h - l) * sizeof(double), true);
      map_kernel(a, l, h);
    });
  if (hi - lo <= kStopElems) return;
  const long mid = lo + (hi - lo) / 2;
  typename FJ::group g(2, static_cast<double>(hi - lo) * sizeof(double));
  g.run([&] { rrm<FJ>(a, lo, mid, touch); }, 1);
  g.run([&] { rrm<FJ>(a, mid, hi, touch); }, 1);
  g.wait();
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  iteration([&] { rrm<FJ>(p.a.data(), 0, p.n, touch); });
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::rrm
