#include "common/fj_roost.hpp"
#include "pfor/pfor.hpp"

namespace bench::pfor {
void roost_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  current_runtime()->run([&] { roost::parallel_for(0L, p.n, 1, [&](long lo, long hi) { iterations(p, lo, hi); }); });
}
}  // namespace bench::pfor
