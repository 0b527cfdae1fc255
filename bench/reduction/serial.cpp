#include "reduction/reduction.hpp"

namespace bench::reduction {
void serial(problem& p) { serial_of<problem_t>(p); }
std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 2, "NxDEPTH with N a multiple of 2^DEPTH, e.g. 4194304x10");
  check_fits(name, size, 4 * 8.0L * static_cast<long double>(v[0]));
  if (v[1] > 30 || v[0] % (1L << v[1]) != 0)
    throw size_error("size '" + size + "' for " + name + ": N must be a multiple of 2^DEPTH (DEPTH <= 30)");
  auto p = std::make_unique<problem_t>(v[0], v[1]);
  std::memcpy(p->ref.data(), p->init.data(), sizeof(double) * p->n);
  std::sort(p->ref.data(), p->ref.data() + p->n);  // the reference is std::sort of the input
  p->reset();
  return p;
}
}  // namespace bench::reduction
