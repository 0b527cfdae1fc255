#include "ge/ge.hpp"

namespace bench::ge {

void serial(problem& pb) {
  run_tasks<serial_fj>(static_cast<problem_t&>(pb), [](auto&& body) { body(); }, [](const void*, std::size_t, bool) {});
}

std::unique_ptr<problem> prepare(shape s, const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 1, "N (an N x N matrix), e.g. 1024");
  check_fits(name, size, 3 * 8.0L * static_cast<long double>(v[0]) * static_cast<long double>(v[0]));
  auto p = std::make_unique<problem_t>(s, v[0]);
  p->reset();
  serial(*p);
  std::memcpy(p->ref.data(), p->a.data(), sizeof(double) * p->n * p->n);
  p->reset();
  return p;
}

}  // namespace bench::ge
