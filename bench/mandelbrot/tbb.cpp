#include "common/fj_tbb.hpp"
#include "mandelbrot/mandelbrot.hpp"

namespace bench::mandelbrot {
void tbb_tasks(problem& p) { run_tasks<tbb_fj>(static_cast<problem_t&>(p), [](auto&& body) { body(); }); }
}  // namespace bench::mandelbrot
