#include "common/fj_tbb.hpp"
#include "common/fj_tbb_loops.hpp"
#include "sparselu/sparselu.hpp"

namespace bench::sparselu {
void tbb_tasks(problem& p) { tbb_tasks_of<problem_t>(p); }
void tbb_pfor(problem& p) { tbb_pfor_of<problem_t>(p); }
}  // namespace bench::sparselu
