// The merge kernel, in a translation unit of their own so that every variant (serial, roost, the peers) runs the
// very same machine code at the same address (common/forkjoin.hpp, "One copy of each kernel").
#include "reduction/reduction.hpp"

namespace bench::reduction {

void merge_kernel(const double* src, long run, double* dst) {
  std::merge(src, src + run, src + run, src + 2 * run, dst);
}

}  // namespace bench::reduction
