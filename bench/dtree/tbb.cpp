#include "common/fj_tbb.hpp"
#include "dtree/dtree.hpp"

namespace bench::dtree {
void tbb_tasks(problem& p) { tbb_tasks_of<problem_t>(p); }
}  // namespace bench::dtree
