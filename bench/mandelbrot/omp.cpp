#include "common/fj_omp.hpp"
#include "mandelbrot/mandelbrot.hpp"

namespace bench::mandelbrot {
void omp_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  in_omp_team([&] { run_tasks<omp_fj>(p, [](auto&& body) { body(); }); });
}
}  // namespace bench::mandelbrot
