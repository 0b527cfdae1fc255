#include "common/fj_roost.hpp"
#include "nqueens/nqueens.hpp"

namespace bench::nqueens {
void roost_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = current_runtime()->run([&] { return queens<roost_fj>(p.n, 0, board{}); });
}
}  // namespace bench::nqueens
