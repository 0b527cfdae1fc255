#include "common/fj_tbb.hpp"
#include "fft/fft.hpp"

namespace bench::fft {
void tbb_tasks(problem& p) { tbb_tasks_of<problem_t>(p); }
}  // namespace bench::fft
