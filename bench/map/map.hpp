// Map (seed 002 Table 4, a pattern-based benchmark): V vectors of L doubles, each scaled in place
// (x = 0.75 x + 0.5) once per time step, one task per vector. Seed 002 runs 48 vectors of 1 MB and
// deals each vector's task to the NUMA node holding it (coarse distribution); here the vectors are
// split by recursive bisection with equal work hints and each group's bytes as its data-size hint, so a
// locality-aware schedule gives every worker the same vectors in every step. Results are exact.
#pragma once
#include <cstring>
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::map {

struct problem_t final : problem {
  long vectors, len, iters;
  buffer<double> v, init, ref;
  problem_t(long nv, long l, long it) : vectors(nv), len(l), iters(it), v(nv * l), init(nv * l), ref(nv * l) {
    for (long i = 0; i < nv * l; ++i) init[i] = static_cast<double>((i * 7919) % 1009) * 0.01;
  }
  void reset() override { std::memcpy(v.data(), init.data(), sizeof(double) * vectors * len); }
  bool check() const override { return std::memcmp(v.data(), ref.data(), sizeof(double) * vectors * len) == 0; }
  std::string describe() const override {
    return std::to_string(vectors) + " vectors x " + std::to_string(len) + " doubles, " + std::to_string(iters) +
           " iterations, " + std::to_string(vectors * len * 8 >> 20) + " MiB";
  }
};

// Compiled once, in kernels.cpp, for every variant: common/forkjoin.hpp says why.
void scale_kernel(double* x, long len);

template <class Touch>
void scale(double* x, long len, const Touch& touch) {
  touch(x, static_cast<std::size_t>(len) * sizeof(double), true);
  scale_kernel(x, len);
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  const double bytes = static_cast<double>(p.len) * sizeof(double);
  for (long t = 0; t < p.iters; ++t)
    iteration([&] {
      split_rows<FJ>(0, p.vectors, 1, bytes, [&](long lo, long hi) {
        for (long k = lo; k < hi; ++k) scale(p.v.data() + k * p.len, p.len, touch);
      });
    });
}

// Loop form (the peers' parallel-for variants): one iteration per vector.
template <class ForEach>
void run_loops(problem_t& p, ForEach&& for_each) {
  for (long t = 0; t < p.iters; ++t)
    for_each(p.vectors, [&](long k) { scale(p.v.data() + k * p.len, p.len, no_touch{}); });
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::map
