// N-queens, counting every solution: one task per legal placement, the board copied into each child (the
// BOTS formulation; seed 000's Queens, seed 003 §4.5).
#pragma once
#include <array>
#include <string>

#include "common/bench.hpp"
#include "common/forkjoin.hpp"

namespace bench::nqueens {

constexpr int kMaxN = 20;
using board = std::array<signed char, kMaxN>;

inline bool legal(int row, const board& b) {
  for (int i = 0; i < row; ++i) {
    int d = b[i] - b[row];
    if (d == 0 || d == row - i || d == i - row) return false;
  }
  return true;
}

struct problem_t final : problem {
  int n;
  long result = -1;
  explicit problem_t(int n_) : n(n_) {}
  long expected() const {
    static const long known[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512};
    return known[n];
  }
  void reset() override { result = -1; }
  bool check() const override { return result == expected(); }
  std::string describe() const override { return std::to_string(n) + " queens, all solutions"; }
};

template <class FJ>
long queens(int n, int row, board b) {
  if (row == n) return 1;
  long counts[kMaxN] = {};
  {
    typename FJ::group g;
    for (int c = 0; c < n; ++c) {
      b[row] = static_cast<signed char>(c);
      if (legal(row, b)) g.run([&counts, n, row, b, c] { counts[c] = queens<FJ>(n, row + 1, b); });
    }
    g.wait();
  }
  long total = 0;
  for (int c = 0; c < n; ++c) total += counts[c];
  return total;
}

std::unique_ptr<problem> prepare(const std::string& name, const std::string& size);
void serial(problem& p);
void roost_tasks(problem& p);
void tbb_tasks(problem& p);
void omp_tasks(problem& p);

}  // namespace bench::nqueens
