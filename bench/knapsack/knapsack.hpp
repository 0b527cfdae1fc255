// 0-1 knapsack by branch and bound (seed 000's CPU-bound set; the Cilk/BOTS program): items sorted by
// value density; at each item the "take it" branch is spawned and the "leave it" branch runs inline; a
// branch is cut when its fractional-relaxation bound is below the greedy solution's value.
//
// Unlike Cilk's version, the incumbent is that fixed greedy value, not the best found so far: with a
// shared, improving incumbent the size of the search tree depends on which branch a scheduler runs first
// (measured here: help-first explored 9-20x more nodes than work-first on the same input), so a ratio
// would compare search orders, not schedulers. With a fixed incumbent every scheduler searches the same
// tree. The optimum is compared exactly with a dynamic-programming reference. No work hints (the tree's
// shape is unknown in advance).
#pragma once
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::knapsack {

struct item {
  long weight, value;
};

struct problem_t final : problem {
  std::vector<item> items;  // by value/weight, densest first
  long capacity;
  long expected = -1;
  long greedy = 0;  // value of filling by density: a feasible lower bound, the search's incumbent
  long result = -1;
  explicit problem_t(long n);
  void reset() override { result = -1; }
  bool check() const override { return result == expected; }
  std::string describe() const override {
    return std::to_string(items.size()) + " items, capacity " + std::to_string(capacity);
  }
};

// Best value reachable from item e on with capacity c left and value v so far (LONG_MIN: infeasible, or
// cut because it cannot reach the incumbent; a branch that can equal it is searched, so the greedy
// solution itself is always found).
template <class FJ>
long search(const item* e, long n, long c, long v, long incumbent) {
  if (c < 0) return LONG_MIN;
  if (n == 0 || c == 0) return v;
  // Fractional bound: fill the remaining capacity at this item's density (the densest left).
  const double bound = static_cast<double>(v) + static_cast<double>(c) * e->value / e->weight;
  if (bound < static_cast<double>(incumbent)) return LONG_MIN;
  long with = LONG_MIN;
  typename FJ::group g;
  g.run([&] { with = search<FJ>(e + 1, n - 1, c - e->weight, v + e->value, incumbent); });
  const long without = search<FJ>(e + 1, n - 1, c, v, incumbent);
  g.wait();
  return std::max(with, without);
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch&) {
  iteration([&] { p.result = search<FJ>(p.items.data(), static_cast<long>(p.items.size()), p.capacity, 0, p.greedy); });
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::knapsack
