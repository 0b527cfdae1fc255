#include "common/fj_roost.hpp"
#include "matmul/matmul.hpp"

namespace bench::matmul {
void roost_tasks(problem& p) { run_tasks<roost_fj>(static_cast<problem_t&>(p), roost_iteration{}, roost_touch{}); }
}  // namespace bench::matmul
