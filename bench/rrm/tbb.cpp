#include "common/fj_tbb.hpp"
#include "rrm/rrm.hpp"

namespace bench::rrm {
void tbb_tasks(problem& p) { tbb_tasks_of<problem_t>(p); }
}  // namespace bench::rrm
