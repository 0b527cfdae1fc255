#include "kdtree/kdtree.hpp"

namespace bench::kdtree {
void serial(problem& p) { serial_of<problem_t>(p); }
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 1, "N points, e.g. 1000000");
  check_fits(name, size, 3 * 32.0L * static_cast<long double>(v[0]));
  auto p = std::make_unique<problem_t>(v[0]);
  p->reset();
  serial(*p);
  std::memcpy(static_cast<void*>(p->ref.data()), p->pts.data(), sizeof(point) * p->n);
  p->ref_hash = p->hash;
  p->reset();
  return p;
}
}  // namespace bench::kdtree
