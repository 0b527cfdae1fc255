// Quicksort of doubles as the thesis writes it (seed 003 ch. 5): pivot = median of the first, middle and
// last elements; the partition itself is parallel (block counts, prefix sum, block copies: common/
// partition.hpp) and double-buffered, so each level moves the data between the array and a scratch array
// of the same size. Both sides are spawned with their lengths as work hints and their bytes as the group's
// data-size hint. 64 KiB (8192 doubles) is the cutoff for both the recursion (std::sort below it) and the
// parallel partition's blocks. The result is compared exactly with std::sort of the same input.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"
#include "common/partition.hpp"

namespace bench::quicksort {

constexpr long kCutoff = 8192;

struct problem_t final : problem {
  long n;
  buffer<double> a, scratch, init, ref;
  explicit problem_t(long n_) : n(n_), a(n_), scratch(n_), init(n_), ref(n_) {
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

// Sorts the n doubles in x, using y as the other buffer; the sorted result ends in x when in_x, else in y.
template <class FJ, class Touch>
void sort(double* x, double* y, long n, bool in_x, const Touch& touch) {
  auto finish = [&] {  // x holds the sorted range: move it where it belongs
    if (!in_x) {
      touch(y, static_cast<std::size_t>(n) * sizeof(double), true);
      std::memcpy(y, x, static_cast<std::size_t>(n) * sizeof(double));
    }
  };
  if (n <= kCutoff) {
    touch(x, static_cast<std::size_t>(n) * sizeof(double), true);
    std::sort(x, x + n);
    finish();
    return;
  }
  const long m = pivot_split<FJ>(x, y, n, kCutoff, [](double v) { return v; }, touch);
  if (m == n) {  // every element equals the pivot: sorted already (it is in y now, and in x)
    finish();
    return;
  }
  typename FJ::group g(static_cast<double>(n), static_cast<double>(n) * sizeof(double));
  g.run([=, &touch] { sort<FJ>(y, x, m, !in_x, touch); }, static_cast<double>(m));
  g.run([=, &touch] { sort<FJ>(y + m, x + m, n - m, !in_x, touch); }, static_cast<double>(n - m));
  g.wait();
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  iteration([&] { sort<FJ>(p.a.data(), p.scratch.data(), p.n, true, touch); });
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::quicksort
