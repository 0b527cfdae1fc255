#include "common/fj_omp.hpp"
#include "sparselu/sparselu.hpp"

namespace bench::sparselu {
void omp_tasks(problem& p) { omp_tasks_of<problem_t>(p); }
void omp_static(problem& p) { omp_static_of<problem_t>(p); }
void omp_dynamic(problem& p) { omp_dynamic_of<problem_t>(p); }
}  // namespace bench::sparselu
