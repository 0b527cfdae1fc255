#include "common/fj_omp.hpp"
#include "ge/ge.hpp"

namespace bench::ge {
void omp_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
in_omp_team([&] { run_tasks<omp_fj>(p, [](auto&& body) { body(); }, [](const void*, std::size_t, bool) {}); });
}
void omp_static(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
#pragma omp parallel
  run_loops(p, [&](long lo, long hi, auto&& body) {
#pragma omp for schedule(static)
    for (long i = lo; i < hi; ++i) body(i, i + 1);
  });
}
void omp_dynamic(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
#pragma omp parallel
  run_loops(p, [&](long lo, long hi, auto&& body) {
#pragma omp for schedule(dynamic, kCutoffRows)
    for (long i = lo; i < hi; ++i) body(i, i + 1);
  });
}
}  // namespace bench::ge
