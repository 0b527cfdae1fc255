#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include "common/fj_tbb.hpp"
#include "stencil/stencil.hpp"

namespace bench::stencil {

void tbb_tasks(problem& pb) {
  run_tasks<tbb_fj>(static_cast<problem_t&>(pb), [](auto&& body) { body(); }, no_touch{});
}

void tbb_pfor(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  tbb::affinity_partitioner ap;  // replays the previous step's mapping: TBB's locality mechanism
  run_loops(p, [&](auto&& body) {
    tbb::parallel_for(tbb::blocked_range<long>(1, p.rows - 1, kCutoffRows),
                      [&](const tbb::blocked_range<long>& r) { body(r.begin(), r.end()); }, ap);
  });
  p.result = final_buffer(p);
}

}  // namespace bench::stencil
