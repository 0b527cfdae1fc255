// Decision-tree training (seed 003 ch. 5): CART for binary classification over continuous attributes with
// histogram-based Gini splits, on a synthetic stand-in for the HIGGS data set (28 double attributes per
// row, a label from a fixed nonlinear rule with noise; no download). At each node a parallel loop over
// blocks of rows builds one 32-bin histogram per attribute (the thesis's consecutive parallel loops), the
// best (attribute, threshold) by weighted Gini impurity is chosen (ties: the smaller pair), and the rows
// are split with the parallel, double-buffered partition (common/partition.hpp); both sides are trained
// as two tasks (hints = row counts, data-size hint = the node's bytes). Cutoffs as in the thesis: the
// recursion runs serially below 64 KB of rows, loops and partitions below 256 KB. The tree, in preorder,
// must equal the serial program's exactly.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"
#include "common/partition.hpp"

namespace bench::dtree {

constexpr int kAttrs = 28;
constexpr int kBins = 32;
constexpr long kMinRows = 32;
struct row {
  double x[kAttrs];
  double label;  // 0 or 1
};
constexpr long kTaskRows = 65536 / sizeof(row);
constexpr long kLoopRows = 262144 / sizeof(row);

struct node {
  int attr;        // -1: a leaf
  int bin;         // rows with bin(x[attr]) <= bin go left
  int label;       // a leaf's majority label
  long rows;
  bool operator==(const node&) const = default;
};
using tree = std::vector<node>;  // preorder

struct problem_t final : problem {
  long n;
  int max_depth;
  buffer<row> rows, scratch, init;
  std::array<double, kAttrs> lo{}, scale{};  // bin(v) = (v - lo) * scale, clamped to [0, kBins)
  tree result, ref;
  problem_t(long n_, int depth);
  int bin(const row& r, int a) const {
    const int b = static_cast<int>((r.x[a] - lo[a]) * scale[a]);
    return b < 0 ? 0 : (b >= kBins ? kBins - 1 : b);
  }
  void reset() override {
    std::memcpy(static_cast<void*>(rows.data()), init.data(), sizeof(row) * n);
    result.clear();
  }
  bool check() const override { return result == ref; }
  std::string describe() const override {
    return std::to_string(n) + " rows x " + std::to_string(kAttrs) + " attributes, depth <= " + std::to_string(max_depth) +
           ", " + std::to_string(n * static_cast<long>(sizeof(row)) >> 20) + " MiB";
  }
};

using histogram = std::array<std::array<std::array<long, 2>, kBins>, kAttrs>;

// Histograms of rows x[0, n): per block of kLoopRows rows, then summed in block order.
template <class FJ, class Touch>
histogram histograms(const problem_t& p, const row* x, long n, const Touch& touch) {
  const long blocks = (n + kLoopRows - 1) / kLoopRows;
  std::vector<histogram> part(static_cast<std::size_t>(blocks));
  split_rows<FJ>(0, blocks, 1, static_cast<double>(kLoopRows) * sizeof(row), [&](long lo, long hi) {
    for (long b = lo; b < hi; ++b) {
      histogram& h = part[b];
      for (auto& a : h)
        for (auto& c : a) c = {0, 0};
      const long s = b * kLoopRows, e = s + kLoopRows < n ? s + kLoopRows : n;
      touch(x + s, static_cast<std::size_t>(e - s) * sizeof(row), false);
      for (long i = s; i < e; ++i) {
        const int y = x[i].label != 0.0;
        for (int a = 0; a < kAttrs; ++a) ++h[a][p.bin(x[i], a)][y];
      }
    }
  });
  histogram total = part[0];
  for (long b = 1; b < blocks; ++b)
    for (int a = 0; a < kAttrs; ++a)
      for (int k = 0; k < kBins; ++k) {
        total[a][k][0] += part[b][a][k][0];
        total[a][k][1] += part[b][a][k][1];
      }
  return total;
}

struct split {
  int attr = -1, bin = -1;
};
split best_split(const histogram& h, long n);  // attr -1: no split lowers the impurity

// Trains the subtree of the n rows in x (y: the other buffer) and returns it in preorder.
template <class FJ, class Touch>
tree train(const problem_t& p, row* x, row* y, long n, int depth, const Touch& touch) {
  if (n <= kTaskRows && !std::is_same_v<FJ, serial_fj>) return train<serial_fj>(p, x, y, n, depth, touch);
  long ones = 0;
  for (long i = 0; i < n; ++i) ones += x[i].label != 0.0;
  const node leaf{-1, -1, 2 * ones >= n ? 1 : 0, n};
  if (depth >= p.max_depth || n < kMinRows || ones == 0 || ones == n) return {leaf};
  const split s = best_split(histograms<FJ>(p, x, n, touch), n);
  if (s.attr < 0) return {leaf};
  const long m = partition_into<FJ>(x, y, n, kLoopRows, [&](const row& r) { return p.bin(r, s.attr) <= s.bin; }, touch);
  tree left, right;
  typename FJ::group g(static_cast<double>(n), static_cast<double>(n) * sizeof(row));
  g.run([&] { left = train<FJ>(p, y, x, m, depth + 1, touch); }, static_cast<double>(m));
  g.run([&] { right = train<FJ>(p, y + m, x + m, n - m, depth + 1, touch); }, static_cast<double>(n - m));
  g.wait();
  tree t{node{s.attr, s.bin, -1, n}};
  t.insert(t.end(), left.begin(), left.end());
  t.insert(t.end(), right.begin(), right.end());
  return t;
}

template <class FJ, class Iteration, class Touch>
void run_tasks(problem_t& p, Iteration&& iteration, const Touch& touch) {
  iteration([&] { p.result = train<FJ>(p, p.rows.data(), p.scratch.data(), p.n, 0, touch); });
}

// The framework variants are the generic ones (roost_tasks_of<problem_t>, ...; driver/registry.cpp).
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);

}  // namespace bench::dtree
