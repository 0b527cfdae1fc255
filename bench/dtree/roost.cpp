#include "common/fj_roost.hpp"
#include "dtree/dtree.hpp"

namespace bench::dtree {
void roost_tasks(problem& p) { roost_tasks_of<problem_t>(p); }
}  // namespace bench::dtree
