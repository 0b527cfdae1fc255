#include "common/fj_roost.hpp"
#include "fib/fib.hpp"

namespace bench::fib {
void roost_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = current_runtime()->run([&] { return fib<roost_fj>(p.n); });
}

namespace {
// Always inline, in every variant's wrapper (tbb.cpp, floor.cpp): the call then stands where a program writes
// it, in fib itself. Left to GCC this operator stayed out of line, a second frame a level that saved its
// registers again (callgrind, fib(24) less fib(20): ws 76.4 -> 71.0, ws-help 74.2 -> 68.0 a spawn).
struct roost_invoke_fn {
  template <class F, class G>
  __attribute__((always_inline)) void operator()(F&& f, G&& g) const { roost::parallel_invoke(f, g); }
};
// roost::join, always inline as roost_invoke_fn.
struct roost_join_fn {
  template <class F, class G>
  __attribute__((always_inline)) auto operator()(F&& f, G&& g) const { return roost::join(f, g); }
};
}  // namespace
void roost_join(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = current_runtime()->run([&] { return fib_join<roost_join_fn>(p.n); });
}
void roost_invoke(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = current_runtime()->run([&] { return fib_invoke<roost_invoke_fn>(p.n); });
}
}  // namespace bench::fib
