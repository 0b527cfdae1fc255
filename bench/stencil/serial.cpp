#include "stencil/stencil.hpp"

namespace bench::stencil {

std::unique_ptr<problem> prepare(kind k, shape s, const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 3, "ROWSxCOLSxITERATIONS, e.g. 1024x512x100");
  check_fits(name, size, 4 * 8.0L * static_cast<long double>(v[0]) * static_cast<long double>(v[1]));
  if (v[0] < 3 || v[1] < 3) throw size_error("size '" + size + "' for " + name + ": at least 3x3 cells");
  auto p = std::make_unique<problem_t>(k, s, v[0], v[1], v[2]);
  p->reset();
  run_tasks<serial_fj>(*p, [](auto&& body) { body(); }, no_touch{});
  std::memcpy(p->ref.data(), p->result, sizeof(double) * p->rows * p->cols);
  p->reset();
  return p;
}

}  // namespace bench::stencil

namespace bench::stencil {
void serial(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  run_tasks<serial_fj>(p, [](auto&& body) { body(); }, no_touch{});
}
}  // namespace bench::stencil
