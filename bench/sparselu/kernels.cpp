// The four BOTS kernels, in a translation unit of their own so that every variant (serial, roost, the
// peers) calls the very same machine code: inlined into one variant's loop they compiled ~1.5x slower or
// faster than elsewhere. Blocks never overlap, hence __restrict.
#include "sparselu/sparselu.hpp"

namespace bench::sparselu {

void lu0(float* d, long bs) {
  for (long k = 0; k < bs; ++k)
    for (long i = k + 1; i < bs; ++i) {
      d[i * bs + k] /= d[k * bs + k];
      for (long j = k + 1; j < bs; ++j) d[i * bs + j] -= d[i * bs + k] * d[k * bs + j];
    }
}
void fwd(const float* __restrict d, float* __restrict col, long bs) {
  for (long k = 0; k < bs; ++k)
    for (long i = k + 1; i < bs; ++i)
      for (long j = 0; j < bs; ++j) col[i * bs + j] -= d[i * bs + k] * col[k * bs + j];
}
void bdiv(const float* __restrict d, float* __restrict row, long bs) {
  for (long i = 0; i < bs; ++i)
    for (long k = 0; k < bs; ++k) {
      row[i * bs + k] /= d[k * bs + k];
      for (long j = k + 1; j < bs; ++j) row[i * bs + j] -= row[i * bs + k] * d[k * bs + j];
    }
}
void bmod(const float* __restrict row, const float* __restrict col, float* __restrict inner, long bs) {
  for (long i = 0; i < bs; ++i)
    for (long k = 0; k < bs; ++k) {
      const float r = row[i * bs + k];
      for (long j = 0; j < bs; ++j) inner[i * bs + j] -= r * col[k * bs + j];
    }
}

}  // namespace bench::sparselu
