// N-queens, counting all solutions: one task per legal placement, the board copied into each child (the
// BOTS formulation used by seed 003 §4.5 and seed 000's CPU-bound set).
#pragma once
#include <array>

namespace bench::nqueens {
using board = std::array<signed char, 20>;
constexpr int kMaxN = 20;

inline bool legal(int n, int row, const board& b) {
  (void)n;
  for (int i = 0; i < row; ++i) {
    int d = b[i] - b[row];
    if (d == 0 || d == row - i || d == i - row) return false;
  }
  return true;
}

long serial(int n, int row, board b);
long roost_tasks(int n, int row, board b);
long tbb_tasks(int n, int row, board b);
long omp_tasks(int n, int row, board b);

inline long expected(int n) {
  static const long known[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184};
  return n < 16 ? known[n] : -1;
}
}  // namespace bench::nqueens
