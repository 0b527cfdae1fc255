// The row elimination kernel, in a translation unit of their own so that every variant (serial, roost, the peers) runs the
// very same machine code at the same address (common/forkjoin.hpp, "One copy of each kernel").
#include "ge/ge.hpp"

namespace bench::ge {

void eliminate_rows_kernel(double* a, long n, long k, long lo, long hi) {
  const double* pivot = a + k * n;
  for (long i = lo; i < hi; ++i) {
    double* row = a + i * n;
    const double f = row[k] / pivot[k];
    row[k] = f;
    for (long j = k + 1; j < n; ++j) row[j] -= f * pivot[j];
  }
}

}  // namespace bench::ge
