#include "nest/nest.hpp"

namespace bench::nest {

std::string problem_t::describe() const {
  return std::to_string(depth) + " nested groups, " + std::to_string(runs) + " runs";
}

void serial(problem& p) { serial_of<problem_t>(p); }

std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 2, "DEPTHxRUNS: levels of nested groups, runs of the chain, e.g. 2000x50");
  // Every level holds a stack at once under the child-first schedulers: two kernel mappings each, and the
  // kernel's limit (vm.max_map_count, 65,530 by default) is the process's.
  if (v[0] > 10000) throw size_error("size '" + size + "' for " + name + ": at most 10000 levels");
  if (v[1] > 1000000) throw size_error("size '" + size + "' for " + name + ": at most 1000000 runs");
  auto p = std::make_unique<problem_t>(v[0], v[1]);
  p->reset();
  return p;
}

}  // namespace bench::nest
