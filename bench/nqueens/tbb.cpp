#include "common/fj_tbb.hpp"
#include "nqueens/nqueens.hpp"

namespace bench::nqueens {
void tbb_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = queens<tbb_fj>(p.n, 0, board{});
}
}  // namespace bench::nqueens
