#include "common/fj_omp.hpp"
#include "fib/fib.hpp"

namespace bench::fib {
void omp_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  long r = 0;
#pragma omp parallel
#pragma omp single
  r = fib<omp_fj>(p.n);
  p.result = r;
}
}  // namespace bench::fib
