#include "common/fj_tbb.hpp"
#include "kdtree/kdtree.hpp"

namespace bench::kdtree {
void tbb_tasks(problem& p) { tbb_tasks_of<problem_t>(p); }
}  // namespace bench::kdtree
