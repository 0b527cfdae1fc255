#include "quicksort/quicksort.hpp"

namespace bench::quicksort {
void serial(problem& pb) {
  run_tasks<serial_fj>(static_cast<problem_t&>(pb), [](auto&& body) { body(); }, [](const void*, std::size_t, bool) {});
}
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 1, "N doubles, e.g. 4000000");
  check_fits(name, size, 3 * 8.0L * static_cast<long double>(v[0]));
  auto p = std::make_unique<problem_t>(v[0]);
  std::memcpy(p->ref.data(), p->init.data(), sizeof(double) * p->n);
  std::sort(p->ref.data(), p->ref.data() + p->n);  // the reference is std::sort itself
  p->reset();
  return p;
}
}  // namespace bench::quicksort
