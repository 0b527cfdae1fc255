#include "common/fj_omp.hpp"
#include "quicksort/quicksort.hpp"

namespace bench::quicksort {
void omp_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  in_omp_team([&] { run_tasks<omp_fj>(p, [](auto&& body) { body(); }, [](const void*, std::size_t, bool) {}); });
}
}  // namespace bench::quicksort
