#include "common/fj_omp.hpp"
#include "kdtree/kdtree.hpp"

namespace bench::kdtree {
void omp_tasks(problem& p) { omp_tasks_of<problem_t>(p); }
}  // namespace bench::kdtree
