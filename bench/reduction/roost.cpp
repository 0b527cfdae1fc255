#include "common/fj_roost.hpp"
#include "reduction/reduction.hpp"

namespace bench::reduction {
void roost_tasks(problem& p) { roost_tasks_of<problem_t>(p); }
}  // namespace bench::reduction
