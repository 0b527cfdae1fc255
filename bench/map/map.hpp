// Map (seed 002 Table 4, a pattern-based benchmark): V vectors of L doubles, each scaled in place
// (x = 0.75 x + 0.5) once per time step, one task per vector. Seed 002 runs 48 vectors of 1 MB and
// deals each vector's task to the NUMA node holding it (coarse distribution). As in the seed's Listing 1,
// one task spawns a task per vector, declaring the vector (roost::data), with equal work hints and the
// group's bytes as its data-size hint. Results are exact.
#pragma once
#include <cstring>
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::map {

struct problem_t final : problem {
  long vectors, len, iters;
  buffer<double> v, init, ref;
  // v is nv parts, one per vector: under ROOST_DATA_DISTRIBUTION=coarse each vector lives whole on one node,
  // vector k on node k mod N (seed 002 Listing 1 allocates each vector apart).
  problem_t(long nv, long l, long it) : vectors(nv), len(l), iters(it), v(nv * l, nv), init(nv * l), ref(nv * l) {
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
      // Each spawn declares the vectors it scales (Listing 1's input clause), for the numa scheduler.
      auto decl_of = [&](long k) {
        return decl{}.add(p.v.data() + k * p.len, static_cast<std::size_t>(p.len) * sizeof(double), true);
      };
      spawn_each_declared<FJ>(p.vectors, bytes, decl_of, [&](long k) { scale(p.v.data() + k * p.len, p.len, touch); });
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
