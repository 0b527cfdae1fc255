// The escape-time kernel, in a translation unit of its own so that every variant (serial, roost, the peers)
// runs the very same machine code at the same address (common/forkjoin.hpp, "One copy of each kernel").
#include "mandelbrot/mandelbrot.hpp"

namespace bench::mandelbrot {

void rows(problem_t& p, long lo, long hi) {
  for (long i = lo; i < hi; ++i)
    for (long j = 0; j < p.n; ++j) {
      const double cr = -2.0 + 3.0 * static_cast<double>(j) / static_cast<double>(p.n);
      const double ci = -1.5 + 3.0 * static_cast<double>(i) / static_cast<double>(p.n);
      double zr = 0, zi = 0;
      int k = 0;
      while (k < p.max_iter && zr * zr + zi * zi <= 4.0) {
        double t = zr * zr - zi * zi + cr;
        zi = 2.0 * zr * zi + ci;
        zr = t;
        ++k;
      }
      p.out[i * p.n + j] = k;
    }
}

}  // namespace bench::mandelbrot
