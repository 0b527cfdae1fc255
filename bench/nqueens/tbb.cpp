#include <tbb/task_group.h>

#include "nqueens/nqueens.hpp"

namespace bench::nqueens {
long tbb_tasks(int n, int row, board b) {
  if (row == n) return 1;
  long counts[kMaxN] = {};
  tbb::task_group tg;
  for (int c = 0; c < n; ++c) {
    b[row] = static_cast<signed char>(c);
    if (legal(n, row, b)) tg.run([&counts, n, row, b, c] { counts[c] = tbb_tasks(n, row + 1, b); });
  }
  tg.wait();
  long total = 0;
  for (int c = 0; c < n; ++c) total += counts[c];
  return total;
}
}  // namespace bench::nqueens
