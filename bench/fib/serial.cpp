#include "fib/fib.hpp"

namespace bench::fib {
// The plain recursion: the baseline every spawn overhead is measured against.
long serial_fib(int n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }
void serial(problem& p) { static_cast<problem_t&>(p).result = serial_fib(static_cast<problem_t&>(p).n); }
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 1, "N, e.g. 35");
  if (v[0] > 60) throw size_error("size '" + size + "' for " + name + ": N at most 60");
  return std::make_unique<problem_t>(static_cast<int>(v[0]));
}
}  // namespace bench::fib
