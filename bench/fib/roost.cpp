#include "common/fj_roost.hpp"
#include "fib/fib.hpp"

namespace bench::fib {
void roost_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = current_runtime()->run([&] { return fib<roost_fj>(p.n); });
}
}  // namespace bench::fib
