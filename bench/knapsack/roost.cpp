#include "common/fj_roost.hpp"
#include "knapsack/knapsack.hpp"

namespace bench::knapsack {
void roost_tasks(problem& p) { roost_tasks_of<problem_t>(p); }
}  // namespace bench::knapsack
