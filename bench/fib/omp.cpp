#include "common/fj_omp.hpp"
#include "fib/fib.hpp"

namespace bench::fib {
void omp_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  in_omp_team([&] { p.result = fib<omp_fj>(p.n); });
}
}  // namespace bench::fib
