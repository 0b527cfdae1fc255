// Reduction (seed 002 Table 4): the merge phase of BOTS Sort written iteratively. N doubles start as 2^D
// sorted runs; level l merges pairs of runs into runs twice as long, one task per merge, ping-ponging
// between two buffers, until one sorted run remains (seed 002: 256 MB, D = 10, fine distribution). The
// merges of a level are spawned by one task, one task per merge declaring what it reads and writes, with
// equal work hints and their bytes as the data-size hint. The result is compared exactly with std::sort of the input.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::reduction {

struct problem_t final : problem {
  long n, depth;
  buffer<double> a, b, init, ref;
  problem_t(long n_, long d) : n(n_), depth(d), a(n_), b(n_), init(n_), ref(n_) {
    std::uint64_t x = 0x2545f4914f6cdd1dull;
    for (long i = 0; i < n; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      init[i] = static_cast<double>(x % 1000003ull) * 0.5;
    }
    const long run = n >> depth;
    for (long r = 0; r < (1L << depth); ++r) std::sort(init.data() + r * run, init.data() + (r + 1) * run);
  }
  void reset() override { std::memcpy(a.data(), init.data(), sizeof(double) * n); }
  // Level l reads one buffer and writes the other, starting a -> b: after D levels the result is in b when
  // D is odd.
  double* result() const { return depth % 2 ? b.data() : a.data(); }
  bool check() const override { return std::memcmp(result(), ref.data(), sizeof(double) * n) == 0; }
  std::string describe() const override {
    return std::to_string(n) + " doubles in " + std::to_string(1L << depth) + " sorted runs, " +
           std::to_string(2 * n * 8 >> 20) + " MiB";
  }
};

// Compiled once, in kernels.cpp, for every variant: common/forkjoin.hpp says why.
void merge_kernel(const double* src, long run, double* dst);  // the sorted runs src[0, run), src[run, 2 run)

// Merge k of level l: runs 2k and 2k+1 of length n >> (depth - l) from src into dst.
template <class Touch>
void merge(const problem_t& p, const double* src, double* dst, long level, long k, const Touch& touch) {
  const long run = p.n >> (p.depth - level), lo = 2 * k * run;
  const std::size_t bytes = static_cast<std::size_t>(2 * run) * sizeof(double);
  touch(src + lo, bytes, false);
  touch(dst + lo, bytes, true);
  merge_kernel(src + lo, run, dst + lo);
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  iteration([&] {
    for (long l = 0; l < p.depth; ++l) {
      const double* src = l % 2 ? p.b.data() : p.a.data();
      double* dst = l % 2 ? p.a.data() : p.b.data();
      const long merges = 1L << (p.depth - l - 1);
      const double bytes = 2.0 * static_cast<double>(p.n / merges) * sizeof(double);
      const long run2 = 2 * (p.n >> (p.depth - l));  // elements one merge reads and writes
      auto decl_of = [&](long k) {
        const std::size_t n = static_cast<std::size_t>(run2) * sizeof(double);
        return decl{}.add(src + k * run2, n, false).add(dst + k * run2, n, true);
      };
      spawn_each_declared<FJ>(merges, bytes, decl_of, [&](long k) { merge(p, src, dst, l, k, touch); });
    }
  });
}

template <class ForEach>
void run_loops(problem_t& p, ForEach&& for_each) {
  for (long l = 0; l < p.depth; ++l) {
    const double* src = l % 2 ? p.b.data() : p.a.data();
    double* dst = l % 2 ? p.a.data() : p.b.data();
    for_each(1L << (p.depth - l - 1), [&](long k) { merge(p, src, dst, l, k, no_touch{}); });
  }
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::reduction
