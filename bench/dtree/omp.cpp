#include "common/fj_omp.hpp"
#include "dtree/dtree.hpp"

namespace bench::dtree {
void omp_tasks(problem& p) { omp_tasks_of<problem_t>(p); }
}  // namespace bench::dtree
