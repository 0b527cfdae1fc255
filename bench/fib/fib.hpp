// fib(n) without a cutoff: one spawn per call, the seeds' measure of spawn overhead (seed 003 §4.4.5). The
// last child runs inline; hints 2 : 1 as in the thesis (fib(n-1) spawned with 2, W_all = 3).
#pragma once
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::fib {

struct problem_t final : problem {
  int n;
  long result = -1, expected;
  explicit problem_t(int n_) : n(n_) {
    long a = 0, b = 1;
    for (int i = 0; i < n; ++i) {
      long c = a + b;
      a = b;
      b = c;
    }
    expected = a;
  }
  void reset() override { result = -1; }
  bool check() const override { return result == expected; }
  std::string describe() const override { return "fib(" + std::to_string(n) + "), no cutoff"; }
};

template <class FJ>
long fib(int n) {
  if (n < 2) return n;
  long a = 0;
  typename FJ::group g(3);
  g.run([&a, n] { a = fib<FJ>(n - 1); }, 2);
  long b = fib<FJ>(n - 2);
  g.wait();
  return a + b;
}

// fib-invoke: the same recursion written as a two-way join, the form oneTBB's and Rayon's users write
// (parallel_invoke / join). Under roost's ws, ws-help and hws it takes the inline two-way join
// (roost/detail/fork_join2.hpp); the hints are those of fib (2 : 1, W_all = 3) where a policy reads them.
// `n` is captured by value, as the user guide advises: with [&] its address goes into the closures, and GCC
// then no longer splits fib off its leaf test (72.0 instructions a spawn against 56.4 under ws-help;
// src/engine/README.md, "The benchmarks' closures capture `n` by value").
template <class Invoke>
long fib_invoke(int n) {
  if (n < 2) return n;
  long a, b;
  Invoke{}([&a, n] { a = fib_invoke<Invoke>(n - 1); }, [&b, n] { b = fib_invoke<Invoke>(n - 2); });
  return a + b;
}

// fib-join: the same recursion with a join that returns both results (roost::join, Rayon's join): no local of
// fib's is written through a reference, so GCC may make the recursion a loop, as it does Lace's fib.
template <class Join>
long fib_join(int n) {
  if (n < 2) return n;
  auto [a, b] = Join{}([n] { return fib_join<Join>(n - 1); }, [n] { return fib_join<Join>(n - 2); });
  return a + b;
}

long serial_fib(int n);
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);
void roost_tasks(problem& p);
void roost_invoke(problem& p);  // fib-invoke
void roost_join(problem& p);    // fib-join
void tbb_invoke(problem& p);
void tbb_tasks(problem& p);
void omp_tasks(problem& p);
void floor_help_first(problem& p);  // floor.cpp: the least a spawn costs here
void floor_invoke(problem& p);      // fib-invoke's floor-help: the two-way join with Lace's task slots
void floor_linked(problem& p);         // floor-linked: the private part linked through the frames (issue #25)
void floor_linked_invoke(problem& p);  // the same for fib-invoke's two-way join
void floor_value_invoke(problem& p);  // floor-value: a join returning both results, the closure in the slot
void floor_bare_invoke(problem& p);  // floor-bare: parallel_invoke's shape, a join doing only a push and a pop
void floor_erased_invoke(problem& p);  // floor-erased: that join calling the pushed closure through its frame
void floor_work_first(problem& p);
void floor_call(problem& p);

}  // namespace bench::fib
