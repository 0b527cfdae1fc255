#include "pfor/pfor.hpp"

namespace bench::pfor {
void serial(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  for (long i = 0; i < p.n; ++i) iterations(p, i, i + 1);  // one call per iteration, as the loops make
}
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 1, "N, e.g. 1048576");
  check_fits(name, size, 8.0L * static_cast<long double>(v[0]));
  auto p = std::make_unique<problem_t>(v[0]);
  p->reset();
  return p;
}
}  // namespace bench::pfor
