// The block update kernel, in a translation unit of their own so that every variant (serial, roost, the peers) runs the
// very same machine code at the same address (common/forkjoin.hpp, "One copy of each kernel").
#include "jacobi/jacobi.hpp"

namespace bench::jacobi {

void block_kernel(const double* src, double* dst, long n, long r0, long r1, long c0, long c1) {
  for (long i = r0; i < r1; ++i)
    for (long j = c0; j < c1; ++j)
      dst[i * n + j] = 0.25 * (src[(i - 1) * n + j] + src[(i + 1) * n + j] + src[i * n + j - 1] + src[i * n + j + 1]);
}

}  // namespace bench::jacobi
