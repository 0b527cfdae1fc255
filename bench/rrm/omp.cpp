#include "common/fj_omp.hpp"
#include "rrm/rrm.hpp"

namespace bench::rrm {
void omp_tasks(problem& p) { omp_tasks_of<problem_t>(p); }
}  // namespace bench::rrm
