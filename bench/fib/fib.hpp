// fib(n) without a cutoff: one spawn per call, the seeds' measure of spawn overhead (seed 003 §4.5).
#pragma once

namespace bench::fib {
long serial(int n);
long roost_tasks(int n);          // roost::task_group, work hints 2 : 1 as in seed 003 Table 4.1
long tbb_tasks(int n);            // oneTBB task_group
long omp_tasks(int n);            // OpenMP tasks; call inside parallel + single
inline long expected(int n) {
  long a = 0, b = 1;
  for (int i = 0; i < n; ++i) {
    long c = a + b;
    a = b;
    b = c;
  }
  return a;
}
}  // namespace bench::fib
