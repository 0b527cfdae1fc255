#include "heat2d/heat2d.hpp"

namespace bench::heat2d {
void serial(problem& pb) {
  run_tasks<serial_fj>(static_cast<problem_t&>(pb), [](auto&& body) { body(); }, [](const void*, std::size_t, std::size_t, std::size_t, bool) {});
}
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 2, "NxITERATIONS, e.g. 1024x100");
  check_fits(name, size, 4 * 4.0L * static_cast<long double>(v[0]) * static_cast<long double>(v[0]));
  if (v[0] < 3) throw size_error("size '" + size + "' for " + name + ": N must be at least 3");
  auto p = std::make_unique<problem_t>(v[0], v[1]);
  p->reset();
  serial(*p);
  std::memcpy(p->ref.data(), p->result, sizeof(float) * p->n * p->ld);
  p->reset();
  return p;
}
}  // namespace bench::heat2d
