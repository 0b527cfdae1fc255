#include "common/fj_roost.hpp"
#include "vecmul/vecmul.hpp"

namespace bench::vecmul {
void roost_tasks(problem& p) { roost_tasks_of<problem_t>(p); }
}  // namespace bench::vecmul
