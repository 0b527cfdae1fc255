// The cross-product kernel, in a translation unit of their own so that every variant (serial, roost, the peers) runs the
// very same machine code at the same address (common/forkjoin.hpp, "One copy of each kernel").
#include "vecmul/vecmul.hpp"

namespace bench::vecmul {

void cross_kernel(const double* a, const double* b, double* c, long len) {
  for (long i = 0; i < len; ++i) {
    const double* x = a + 3 * i;
    const double* y = b + 3 * i;
    double* z = c + 3 * i;
    z[0] = x[1] * y[2] - x[2] * y[1];
    z[1] = x[2] * y[0] - x[0] * y[2];
    z[2] = x[0] * y[1] - x[1] * y[0];
  }
}

}  // namespace bench::vecmul
