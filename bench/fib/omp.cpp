#include "fib/fib.hpp"

namespace bench::fib {
long omp_tasks(int n) {
  if (n < 2) return n;
  long a = 0;
#pragma omp task shared(a) firstprivate(n)
  a = omp_tasks(n - 1);
  long b = omp_tasks(n - 2);
#pragma omp taskwait
  return a + b;
}
}  // namespace bench::fib
