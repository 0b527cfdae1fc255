#include "pfor/pfor.hpp"

namespace bench::pfor {
void iterations(problem_t& p, long lo, long hi) {
  for (long i = lo; i < hi; ++i) p.x[i] = 3 * i + 1;
}
}  // namespace bench::pfor
