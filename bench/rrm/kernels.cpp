// The map kernel, in a translation unit of their own so that every variant (serial, roost, the peers) runs the
// very same machine code at the same address (common/forkjoin.hpp, "One copy of each kernel").
#include "rrm/rrm.hpp"

namespace bench::rrm {

void map_kernel(double* a, long lo, long hi) {
  for (long i = lo; i < hi; ++i) a[i] += kFactor * a[i];
}

}  // namespace bench::rrm
