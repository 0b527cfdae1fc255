#include "common/fj_omp.hpp"
#include "nqueens/nqueens.hpp"

namespace bench::nqueens {
void omp_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  long r = 0;
#pragma omp parallel
#pragma omp single
  r = queens<omp_fj>(p.n, 0, board{});
  p.result = r;
}
}  // namespace bench::nqueens
