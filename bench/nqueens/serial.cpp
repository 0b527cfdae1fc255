#include "nqueens/nqueens.hpp"

namespace bench::nqueens {
void serial(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = queens<serial_fj>(p.n, 0, board{});
}
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 1, "N from 1 to 16, e.g. 12");
  if (v[0] > 16) throw size_error("size '" + size + "' for " + name + ": N from 1 to 16");
  return std::make_unique<problem_t>(static_cast<int>(v[0]));
}
}  // namespace bench::nqueens
