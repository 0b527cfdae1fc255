#include "common/fj_omp.hpp"
#include "stencil/stencil.hpp"

namespace bench::stencil {

void omp_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
in_omp_team([&] { run_tasks<omp_fj>(p, [](auto&& body) { body(); }, no_touch{}); });
}

void omp_static(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
#pragma omp parallel
  run_loops(p, [&](auto&& body) {
#pragma omp for schedule(static)
    for (long i = 1; i < p.rows - 1; ++i) body(i, i + 1);
  });
  p.result = final_buffer(p);
}

void omp_dynamic(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
#pragma omp parallel
  run_loops(p, [&](auto&& body) {
#pragma omp for schedule(dynamic, kCutoffRows)
    for (long i = 1; i < p.rows - 1; ++i) body(i, i + 1);
  });
  p.result = final_buffer(p);
}

}  // namespace bench::stencil
