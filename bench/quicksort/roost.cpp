#include "common/fj_roost.hpp"
#include "quicksort/quicksort.hpp"

namespace bench::quicksort {
void roost_tasks(problem& p) { run_tasks<roost_fj>(static_cast<problem_t&>(p), roost_iteration{}, roost_touch{}); }
}  // namespace bench::quicksort
