#include "map/map.hpp"

namespace bench::map {
void serial(problem& p) { serial_of<problem_t>(p); }
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 3, "VECTORSxLENGTHxITERATIONS, e.g. 48x131072x10");
  check_fits(name, size, 3 * 8.0L * static_cast<long double>(v[0]) * static_cast<long double>(v[1]));
  auto p = std::make_unique<problem_t>(v[0], v[1], v[2]);
  p->reset();
  serial(*p);
  std::memcpy(p->ref.data(), p->v.data(), sizeof(double) * p->vectors * p->len);
  p->reset();
  return p;
}
}  // namespace bench::map
