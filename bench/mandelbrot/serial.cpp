#include "mandelbrot/mandelbrot.hpp"

namespace bench::mandelbrot {
void serial(problem& pb) { run_tasks<serial_fj>(static_cast<problem_t&>(pb), [](auto&& body) { body(); }); }
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 2, "NxMAX_ITERATIONS, e.g. 512x512");
  check_fits(name, size, 2 * 4.0L * static_cast<long double>(v[0]) * static_cast<long double>(v[0]));
  auto p = std::make_unique<problem_t>(v[0], v[1]);
  p->reset();
  serial(*p);
  std::memcpy(p->ref.data(), p->out.data(), sizeof(int) * p->n * p->n);
  p->reset();
  return p;
}
}  // namespace bench::mandelbrot
