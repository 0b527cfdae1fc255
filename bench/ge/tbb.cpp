#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include "common/fj_tbb.hpp"
#include "ge/ge.hpp"

namespace bench::ge {
void tbb_tasks(problem& p) {
  run_tasks<tbb_fj>(static_cast<problem_t&>(p), [](auto&& body) { body(); }, [](const void*, std::size_t, bool) {});
}
void tbb_pfor(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  tbb::affinity_partitioner ap;
  run_loops(p, [&](long lo, long hi, auto&& body) {
    tbb::parallel_for(tbb::blocked_range<long>(lo, hi, kCutoffRows),
                      [&](const tbb::blocked_range<long>& r) { body(r.begin(), r.end()); }, ap);
  });
}
}  // namespace bench::ge
