#include "common/fj_roost.hpp"
#include "sparselu/sparselu.hpp"

namespace bench::sparselu {
void roost_tasks(problem& p) { roost_tasks_of<problem_t>(p); }
}  // namespace bench::sparselu
