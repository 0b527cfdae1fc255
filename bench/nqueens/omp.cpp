#include "nqueens/nqueens.hpp"

namespace bench::nqueens {
long omp_tasks(int n, int row, board b) {
  if (row == n) return 1;
  long counts[kMaxN] = {};
  for (int c = 0; c < n; ++c) {
    b[row] = static_cast<signed char>(c);
    if (legal(n, row, b)) {
#pragma omp task shared(counts) firstprivate(b, c, n, row)
      counts[c] = omp_tasks(n, row + 1, b);
    }
  }
#pragma omp taskwait
  long total = 0;
  for (int c = 0; c < n; ++c) total += counts[c];
  return total;
}
}  // namespace bench::nqueens
