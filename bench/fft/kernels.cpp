// The butterfly kernels, in a translation unit of their own so that every variant (serial, roost, the peers) runs the
// very same machine code at the same address (common/forkjoin.hpp, "One copy of each kernel").
#include "fft/fft.hpp"

namespace bench::fft {

namespace {
inline void butterflies_inline(cplx* out, long m, long lo, long hi, const cplx* tw, long tw_step) {
  for (long k = lo; k < hi; ++k) {
    const cplx t = tw[k * tw_step] * out[k + m / 2];
    out[k + m / 2] = out[k] - t;
    out[k] = out[k] + t;
  }
}
}  // namespace

void butterflies(cplx* out, long m, long lo, long hi, const cplx* tw, long tw_step) {
  butterflies_inline(out, m, lo, hi, tw, tw_step);
}

void small_transform(const cplx* in, cplx* out, long m, long s, const cplx* tw, long tw_step) {
  if (m == 1) {
    out[0] = in[0];
    return;
  }
  small_transform(in, out, m / 2, 2 * s, tw, 2 * tw_step);
  small_transform(in + s, out + m / 2, m / 2, 2 * s, tw, 2 * tw_step);
  butterflies_inline(out, m, 0, m / 2, tw, tw_step);
}

}  // namespace bench::fft
