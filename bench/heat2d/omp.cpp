#include "common/fj_omp.hpp"
#include "heat2d/heat2d.hpp"

namespace bench::heat2d {
void omp_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
in_omp_team([&] { run_tasks<omp_fj>(p, [](auto&& body) { body(); }, [](const void*, std::size_t, std::size_t, std::size_t, bool) {}); });
}
void omp_static(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
#pragma omp parallel
  run_loops(p, [&](long tiles, auto&& body) {
#pragma omp for schedule(static)
    for (long t = 0; t < tiles; ++t) body(t);
  });
  p.result = final_buffer(p);
}
void omp_dynamic(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
#pragma omp parallel
  run_loops(p, [&](long tiles, auto&& body) {
#pragma omp for schedule(dynamic, 1)
    for (long t = 0; t < tiles; ++t) body(t);
  });
  p.result = final_buffer(p);
}
}  // namespace bench::heat2d
