// Vecmul (seed 002 Table 4): V independent vector pairs, each an array of L three-dimensional double
// vectors; every time step computes c[i] = a[i] x b[i] (cross product) for each pair, one task per pair.
// Seed 002 deals each pair's task to the node holding it (coarse distribution): one task spawns a task per
// pair, declaring its a, b and c, with equal work hints and the group's bytes as its data-size hint.
// The cross product is computed the same way everywhere, so results are exact.
#pragma once
#include <cstring>
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::vecmul {

struct problem_t final : problem {
  long pairs, len, iters;
  buffer<double> a, b, c, ref;  // pair k, vector i, component d at [(k * len + i) * 3 + d]
  problem_t(long np, long l, long it)
      : pairs(np), len(l), iters(it), a(np * l * 3, np), b(np * l * 3, np), c(np * l * 3, np), ref(np * l * 3) {
    for (long i = 0; i < np * l * 3; ++i) {
      a[i] = static_cast<double>((i * 37) % 101) * 0.02 - 1.0;
      b[i] = static_cast<double>((i * 53) % 97) * 0.03 - 1.5;
    }
  }
  void reset() override { std::memset(c.data(), 0, sizeof(double) * pairs * len * 3); }
  bool check() const override { return std::memcmp(c.data(), ref.data(), sizeof(double) * pairs * len * 3) == 0; }
  std::string describe() const override {
    return std::to_string(pairs) + " pairs x " + std::to_string(len) + " 3-vectors, " + std::to_string(iters) +
           " iterations, " + std::to_string(pairs * len * 72 >> 20) + " MiB";
  }
};

// Compiled once, in kernels.cpp, for every variant: common/forkjoin.hpp says why.
void cross_kernel(const double* a, const double* b, double* c, long len);

template <class Touch>
void cross(const double* a, const double* b, double* c, long len, const Touch& touch) {
  const std::size_t bytes = static_cast<std::size_t>(len) * 3 * sizeof(double);
  touch(a, bytes, false);
  touch(b, bytes, false);
  touch(c, bytes, true);
  cross_kernel(a, b, c, len);
}

template <class Touch>
void pair(problem_t& p, long k, const Touch& touch) {
  const long off = k * p.len * 3;
  cross(p.a.data() + off, p.b.data() + off, p.c.data() + off, p.len, touch);
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  const double bytes = 3.0 * static_cast<double>(p.len) * 3 * sizeof(double);
  for (long t = 0; t < p.iters; ++t)
    iteration([&] {
      auto decl_of = [&](long k) {
        const std::size_t off = static_cast<std::size_t>(k * p.len * 3), n = static_cast<std::size_t>(p.len * 3) * sizeof(double);
        return decl{}.add(p.a.data() + off, n, false).add(p.b.data() + off, n, false).add(p.c.data() + off, n, true);
      };
      spawn_each_declared<FJ>(p.pairs, bytes, decl_of, [&](long k) { pair(p, k, touch); });
    });
}

template <class ForEach>
void run_loops(problem_t& p, ForEach&& for_each) {
  for (long t = 0; t < p.iters; ++t)
    for_each(p.pairs, [&](long k) { pair(p, k, no_touch{}); });
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::vecmul
