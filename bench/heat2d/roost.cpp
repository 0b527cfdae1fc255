#include "common/fj_roost.hpp"
#include "heat2d/heat2d.hpp"

namespace bench::heat2d {
void roost_tasks(problem& p) { run_tasks<roost_fj>(static_cast<problem_t&>(p), roost_iteration{}, roost_touch_rows{}); }
}  // namespace bench::heat2d
