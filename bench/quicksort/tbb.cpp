#include "common/fj_tbb.hpp"
#include "quicksort/quicksort.hpp"

namespace bench::quicksort {
void tbb_tasks(problem& p) {
  run_tasks<tbb_fj>(static_cast<problem_t&>(p), [](auto&& body) { body(); }, [](const void*, std::size_t, bool) {});
}
}  // namespace bench::quicksort
