#include "vecmul/vecmul.hpp"

namespace bench::vecmul {
void serial(problem& p) { serial_of<problem_t>(p); }
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 3, "PAIRSxLENGTHxITERATIONS, e.g. 128x4096x10");
  check_fits(name, size, 4 * 24.0L * static_cast<long double>(v[0]) * static_cast<long double>(v[1]));
  auto p = std::make_unique<problem_t>(v[0], v[1], v[2]);
  p->reset();
  serial(*p);
  std::memcpy(p->ref.data(), p->c.data(), sizeof(double) * p->pairs * p->len * 3);
  p->reset();
  return p;
}
}  // namespace bench::vecmul
