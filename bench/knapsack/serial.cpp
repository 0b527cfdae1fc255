#include <cstdint>

#include "knapsack/knapsack.hpp"

namespace bench::knapsack {

// Strongly correlated instance (value = weight + 10), the hard kind for branch and bound, from a fixed
// xorshift stream; capacity half the total weight.
problem_t::problem_t(long n) {
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  long total = 0;
  for (long i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const long w = 10 + static_cast<long>(x % 90);
    items.push_back({w, w + 10});
    total += w;
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const item& a, const item& b) { return a.value * b.weight > b.value * a.weight; });
  capacity = total / 2;
  long room = capacity;
  for (const item& it : items)
    if (it.weight <= room) {
      room -= it.weight;
      greedy += it.value;
    }
}

void serial(problem& p) { serial_of<problem_t>(p); }

std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 1, "N items, e.g. 28");
  if (v[0] > 64) throw size_error("size '" + size + "' for " + name + ": at most 64 items");
  auto p = std::make_unique<problem_t>(v[0]);
  // Reference: dynamic programming over the capacity, independent of the search.
  std::vector<long> dp(static_cast<std::size_t>(p->capacity) + 1, 0);
  for (const item& it : p->items)
    for (long c = p->capacity; c >= it.weight; --c) dp[c] = std::max(dp[c], dp[c - it.weight] + it.value);
  p->expected = dp[p->capacity];
  p->reset();
  return p;
}

}  // namespace bench::knapsack
