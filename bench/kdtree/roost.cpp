#include "common/fj_roost.hpp"
#include "kdtree/kdtree.hpp"

namespace bench::kdtree {
void roost_tasks(problem& p) { roost_tasks_of<problem_t>(p); }
}  // namespace bench::kdtree
