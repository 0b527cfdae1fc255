// Quicksort of doubles (seed 003 ch. 5's benchmark, simplified): median-of-three pivot, serial partition,
// both sides spawned with their lengths as work hints and their bytes as the group's data-size hint, below
// 64 KiB (8192 doubles) std::sort. The thesis also partitions in parallel with double buffering; this
// version does not (yet). The result is compared exactly with std::sort of the same input.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::quicksort {

constexpr long kCutoff = 8192;

struct problem_t final : problem {
  long n;
  buffer<double> a, init, ref;
  explicit problem_t(long n_) : n(n_), a(n_), init(n_), ref(n_) {
    std::uint64_t x = 88172645463325252ull;
    for (long i = 0; i < n; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      init[i] = static_cast<double>(x % 1000000007ull) / 1000.0;
    }
  }
  void reset() override { std::memcpy(a.data(), init.data(), sizeof(double) * n); }
  bool check() const override { return std::memcmp(a.data(), ref.data(), sizeof(double) * n) == 0; }
  std::string describe() const override { return std::to_string(n) + " doubles, " + std::to_string(n * 8 >> 20) + " MiB"; }
};

inline long partition(double* a, long n) {
  double x = a[0], y = a[n / 2], z = a[n - 1];
  double pivot = std::max(std::min(x, y), std::min(std::max(x, y), z));  // median of three
  long i = 0, j = n - 1;
  for (;;) {
    while (a[i] < pivot) ++i;
    while (a[j] > pivot) --j;
    if (i >= j) return j + 1;
    std::swap(a[i], a[j]);
    ++i;
    --j;
  }
}

template <class FJ, class Touch>
void sort(double* a, long n, const Touch& touch) {
  if (n <= kCutoff) {
    touch(a, static_cast<std::size_t>(n) * sizeof(double), true);
    std::sort(a, a + n);
    return;
  }
  long m = partition(a, n);
  if (m <= 0 || m >= n) m = n / 2;  // cannot happen with a median-of-three pivot; keeps progress if it did
  typename FJ::group g(static_cast<double>(n), static_cast<double>(n) * sizeof(double));
  g.run([=, &touch] { sort<FJ>(a, m, touch); }, static_cast<double>(m));
  g.run([=, &touch] { sort<FJ>(a + m, n - m, touch); }, static_cast<double>(n - m));
  g.wait();
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  iteration([&] { sort<FJ>(p.a.data(), p.n, touch); });
}

std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);
void roost_tasks(problem& p);
void tbb_tasks(problem& p);
void omp_tasks(problem& p);

}  // namespace bench::quicksort
