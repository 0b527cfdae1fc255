// parallel_reduce refuses an identity whose type would cut the body's results (compile_fail/check.sh
// builds this with each NARROW_* defined, and expects the compile to fail, naming the reason, for all
// but NARROW_NONE).
#include <cstddef>
#include <functional>
#include <vector>

#include "roost/roost.hpp"

long sum(const std::vector<long>& v) {
#if defined(NARROW_INTEGER)  // a long body over the identity 0: every partial sum cut to int
  return roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0,
                                [&](std::size_t lo, std::size_t hi) { long s = 0; for (; lo < hi; ++lo) s += v[lo]; return s; },
                                std::plus<>());
#elif defined(NARROW_FLOATING)  // a double body over the identity 0
  return static_cast<long>(roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0,
                                [&](std::size_t lo, std::size_t hi) { double s = 0; for (; lo < hi; ++lo) s += v[lo]; return s; },
                                std::plus<>()));
#else  // NARROW_NONE: an int body over a long identity widens, which is fine
  return roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0L,
                                [&](std::size_t lo, std::size_t hi) { int s = 0; for (; lo < hi; ++lo) s += static_cast<int>(v[lo]); return s; },
                                std::plus<>());
#endif
}

int main() { return 0; }
