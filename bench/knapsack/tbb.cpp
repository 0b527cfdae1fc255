#include "common/fj_tbb.hpp"
#include "knapsack/knapsack.hpp"

namespace bench::knapsack {
void tbb_tasks(problem& p) { tbb_tasks_of<problem_t>(p); }
}  // namespace bench::knapsack
