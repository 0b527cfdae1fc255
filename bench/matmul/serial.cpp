#include "matmul/matmul.hpp"

namespace bench::matmul {
void serial(problem& pb) {
  run_tasks<serial_fj>(static_cast<problem_t&>(pb), [](auto&& body) { body(); }, no_touch{});
}
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 1, "N, a power of two times 64 at most, e.g. 1024");
  check_fits(name, size, 4 * 4.0L * static_cast<long double>(v[0]) * static_cast<long double>(v[0]));
  long n = v[0];
  long m = n;
  while (m > kLeaf && m % 2 == 0) m /= 2;
  if (m > kLeaf) throw size_error("size '" + size + "' for " + name + ": N must halve down to 64 or less (e.g. 512, 1024, 2048)");
  auto p = std::make_unique<problem_t>(n);
  p->reset();
  serial(*p);
  std::memcpy(p->ref.data(), p->c.data(), sizeof(float) * p->n * p->ld);
  p->reset();
  return p;
}
}  // namespace bench::matmul
