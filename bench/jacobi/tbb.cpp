#include "common/fj_tbb.hpp"
#include "common/fj_tbb_loops.hpp"
#include "jacobi/jacobi.hpp"

namespace bench::jacobi {
void tbb_tasks(problem& p) { tbb_tasks_of<problem_t>(p); }
void tbb_pfor(problem& p) { tbb_pfor_of<problem_t>(p); }
}  // namespace bench::jacobi
