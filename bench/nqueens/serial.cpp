#include "nqueens/nqueens.hpp"

namespace bench::nqueens {
long serial(int n, int row, board b) {
  if (row == n) return 1;
  long count = 0;
  for (int c = 0; c < n; ++c) {
    b[row] = static_cast<signed char>(c);
    if (legal(n, row, b)) count += serial(n, row + 1, b);
  }
  return count;
}
}  // namespace bench::nqueens
