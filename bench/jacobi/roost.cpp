#include "common/fj_roost.hpp"
#include "jacobi/jacobi.hpp"

namespace bench::jacobi {
void roost_tasks(problem& p) { roost_tasks_of<problem_t>(p); }
}  // namespace bench::jacobi
