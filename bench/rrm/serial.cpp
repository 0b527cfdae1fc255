#include "rrm/rrm.hpp"

namespace bench::rrm {
void serial(problem& p) { serial_of<problem_t>(p); }
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 1, "N doubles, e.g. 2097152");
  check_fits(name, size, 3 * 8.0L * static_cast<long double>(v[0]));
  auto p = std::make_unique<problem_t>(v[0]);
  p->reset();
  serial(*p);
  std::memcpy(p->ref.data(), p->a.data(), sizeof(double) * p->n);
  p->reset();
  return p;
}
}  // namespace bench::rrm
