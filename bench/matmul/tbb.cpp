#include "common/fj_tbb.hpp"
#include "matmul/matmul.hpp"

namespace bench::matmul {
void tbb_tasks(problem& p) {
  run_tasks<tbb_fj>(static_cast<problem_t&>(p), [](auto&& body) { body(); }, [](const void*, std::size_t, bool) {});
}
}  // namespace bench::matmul
