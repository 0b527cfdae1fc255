#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include "pfor/pfor.hpp"

namespace bench::pfor {
void tbb_pfor(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  tbb::parallel_for(tbb::blocked_range<long>(0, p.n, 1),
                    [&](const tbb::blocked_range<long>& r) { iterations(p, r.begin(), r.end()); },
                    tbb::simple_partitioner());
}
}  // namespace bench::pfor
