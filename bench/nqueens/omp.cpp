#include "common/fj_omp.hpp"
#include "nqueens/nqueens.hpp"

namespace bench::nqueens {
void omp_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  in_omp_team([&] { p.result = queens<omp_fj>(p.n, 0, board{}); });
}
}  // namespace bench::nqueens
