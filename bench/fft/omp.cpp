#include "common/fj_omp.hpp"
#include "fft/fft.hpp"

namespace bench::fft {
void omp_tasks(problem& p) { omp_tasks_of<problem_t>(p); }
}  // namespace bench::fft
