// The heat and SOR row kernels, in a translation unit of their own so that every variant (serial, roost, the peers) runs the
// very same machine code at the same address (common/forkjoin.hpp, "One copy of each kernel").
#include "stencil/stencil.hpp"

namespace bench::stencil {

void heat_rows_kernel(const double* src, double* dst, long cols, long lo, long hi) {
  for (long i = lo; i < hi; ++i) {
    const double* up = src + (i - 1) * cols;
    const double* mid = src + i * cols;
    const double* down = src + (i + 1) * cols;
    double* out = dst + i * cols;
    for (long j = 1; j < cols - 1; ++j)
      out[j] = mid[j] + 0.1 * (up[j] + down[j] + mid[j - 1] + mid[j + 1] - 4.0 * mid[j]);
  }
}

void sor_rows_kernel(double* g, long cols, long lo, long hi, int colour) {
  for (long i = lo; i < hi; ++i) {
    double* row = g + i * cols;
    for (long j = 1 + ((i + colour) & 1); j < cols - 1; j += 2)
      row[j] = (1.0 - kOmega) * row[j] +
               kOmega * 0.25 * (g[(i - 1) * cols + j] + g[(i + 1) * cols + j] + row[j - 1] + row[j + 1]);
  }
}

}  // namespace bench::stencil
