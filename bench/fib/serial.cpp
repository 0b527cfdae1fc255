#include "fib/fib.hpp"

namespace bench::fib {
long serial(int n) { return n < 2 ? n : serial(n - 1) + serial(n - 2); }
}  // namespace bench::fib
