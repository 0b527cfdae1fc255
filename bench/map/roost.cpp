#include "common/fj_roost.hpp"
#include "map/map.hpp"

namespace bench::map {
void roost_tasks(problem& p) { roost_tasks_of<problem_t>(p); }
}  // namespace bench::map
