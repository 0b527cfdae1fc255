#include "common/fj_roost.hpp"
#include "mandelbrot/mandelbrot.hpp"

namespace bench::mandelbrot {
void roost_tasks(problem& p) { run_tasks<roost_fj>(static_cast<problem_t&>(p), roost_iteration{}); }
}  // namespace bench::mandelbrot
