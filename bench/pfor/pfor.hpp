// pfor: a parallel loop over N trivial iterations at grain 1, the cost of a loop's splits and nothing else
// (roost::parallel_for, oneTBB's parallel_for with a simple_partitioner: both bisect down to one
// iteration). Not from a seed: it measures what roost's two-way join (roost/detail/fork_join2.hpp) buys a
// loop. Each iteration writes its own element, so a missed or repeated one shows in the check.
#pragma once
#include <string>

#include "common/bench.hpp"

namespace bench::pfor {

struct problem_t final : problem {
  long n;
  buffer<long> x;
  explicit problem_t(long n_) : n(n_), x(n_) {}
  void reset() override {
    for (long i = 0; i < n; ++i) x[i] = -1;
  }
  bool check() const override {
    for (long i = 0; i < n; ++i)
      if (x[i] != 3 * i + 1) return false;
    return true;
  }
  std::string describe() const override { return std::to_string(n) + " iterations, grain 1"; }
};

// Compiled once, in kernels.cpp, for every variant (common/forkjoin.hpp says why).
void iterations(problem_t& p, long lo, long hi);

std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);
void roost_tasks(problem& p);
void tbb_pfor(problem& p);

}  // namespace bench::pfor
