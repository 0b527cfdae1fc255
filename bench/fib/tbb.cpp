#include <tbb/parallel_invoke.h>

#include "common/fj_tbb.hpp"
#include "fib/fib.hpp"

namespace bench::fib {
void tbb_tasks(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = fib<tbb_fj>(p.n);
}

namespace {
struct tbb_invoke_fn {  // inline, as roost.cpp's
  template <class F, class G>
  __attribute__((always_inline)) void operator()(const F& f, const G& g) const { tbb::parallel_invoke(f, g); }
};
}  // namespace
void tbb_invoke(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = fib_invoke<tbb_invoke_fn>(p.n);
}
}  // namespace bench::fib
