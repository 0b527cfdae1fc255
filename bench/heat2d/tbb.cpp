#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include "common/fj_tbb.hpp"
#include "heat2d/heat2d.hpp"

namespace bench::heat2d {
void tbb_tasks(problem& p) {
  run_tasks<tbb_fj>(static_cast<problem_t&>(p), [](auto&& body) { body(); }, [](const void*, std::size_t, std::size_t, std::size_t, bool) {});
}
void tbb_pfor(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  tbb::affinity_partitioner ap;
  run_loops(p, [&](long tiles, auto&& body) {
    tbb::parallel_for(tbb::blocked_range<long>(0, tiles, 1),
                      [&](const tbb::blocked_range<long>& r) {
                        for (long t = r.begin(); t < r.end(); ++t) body(t);
                      }, ap);
  });
  p.result = final_buffer(p);
}
}  // namespace bench::heat2d
