// The five-point tile kernel, in a translation unit of their own so that every variant (serial, roost, the peers) runs the
// very same machine code at the same address (common/forkjoin.hpp, "One copy of each kernel").
#include "heat2d/heat2d.hpp"

namespace bench::heat2d {

void block_kernel(const float* src, float* dst, long ld, long r0, long r1, long c0, long c1) {
  for (long i = r0; i < r1; ++i) {
    const float* up = src + (i - 1) * ld;
    const float* mid = src + i * ld;
    const float* down = src + (i + 1) * ld;
    float* out = dst + i * ld;
    for (long j = c0; j < c1; ++j) out[j] = mid[j] + 0.1f * (up[j] + down[j] + mid[j - 1] + mid[j + 1] - 4.0f * mid[j]);
  }
}

}  // namespace bench::heat2d
