#include "common/fj_omp.hpp"
#include "knapsack/knapsack.hpp"

namespace bench::knapsack {
void omp_tasks(problem& p) { omp_tasks_of<problem_t>(p); }
}  // namespace bench::knapsack
