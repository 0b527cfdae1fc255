#include "common/fj_tbb.hpp"
#include "fib/fib.hpp"

namespace bench::fib {
void tbb_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = fib<tbb_fj>(p.n);
}
}  // namespace bench::fib
