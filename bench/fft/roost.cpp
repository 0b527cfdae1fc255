#include "common/fj_roost.hpp"
#include "fft/fft.hpp"

namespace bench::fft {
void roost_tasks(problem& p) { roost_tasks_of<problem_t>(p); }
}  // namespace bench::fft
