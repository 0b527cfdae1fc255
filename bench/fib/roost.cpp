#include "common/fj_roost.hpp"
#include "fib/fib.hpp"

namespace bench::fib {
void roost_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = current_runtime()->run([&] { return fib<roost_fj>(p.n); });
}

namespace {
struct roost_invoke_fn {
  template <class F, class G>
  void operator()(F&& f, G&& g) const { roost::parallel_invoke(f, g); }
};
}  // namespace
void roost_invoke(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = current_runtime()->run([&] { return fib_invoke<roost_invoke_fn>(p.n); });
}
}  // namespace bench::fib
