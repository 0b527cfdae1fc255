// The scaling kernel, in a translation unit of their own so that every variant (serial, roost, the peers) runs the
// very same machine code at the same address (common/forkjoin.hpp, "One copy of each kernel").
#include "map/map.hpp"

namespace bench::map {

void scale_kernel(double* x, long len) {
  for (long i = 0; i < len; ++i) x[i] = 0.75 * x[i] + 0.5;
}

}  // namespace bench::map
