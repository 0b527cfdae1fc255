#include "common/fj_roost.hpp"
#include "rrm/rrm.hpp"

namespace bench::rrm {
void roost_tasks(problem& p) { roost_tasks_of<problem_t>(p); }
}  // namespace bench::rrm
