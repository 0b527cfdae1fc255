// The leaf multiply-add kernel, in a translation unit of their own so that every variant (serial, roost, the peers) runs the
// very same machine code at the same address (common/forkjoin.hpp, "One copy of each kernel").
#include "matmul/matmul.hpp"

namespace bench::matmul {

void leaf_kernel(const float* __restrict a, const float* __restrict b, float* __restrict c, long ld, long m) {
  for (long i = 0; i < m; ++i)
    for (long k = 0; k < m; ++k) {
      const float aik = a[i * ld + k];
      for (long j = 0; j < m; ++j) c[i * ld + j] += aik * b[k * ld + j];
    }
}

}  // namespace bench::matmul
