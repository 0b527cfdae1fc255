#include <utility>

#include "uts/uts.hpp"

namespace bench::uts {

problem_t::problem_t(long b0, long seed, long g)
    : root_children(b0), root(mix(static_cast<std::uint64_t>(seed))), grain(static_cast<int>(g)) {}

std::string problem_t::describe() const {
  return std::to_string(expected) + " nodes, " + std::to_string(depth) + " levels, root " +
         std::to_string(root_children) + " children, " + std::to_string(grain) + " rounds per child";
}

void serial(problem& p) { serial_of<problem_t>(p); }

std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 3, "B0xSEEDxGRAIN: root children, seed, SplitMix rounds per child, e.g. 2000x6x16");
  if (v[0] > 1000000) throw size_error("size '" + size + "' for " + name + ": at most 1000000 root children");
  if (v[2] > 1000000) throw size_error("size '" + size + "' for " + name + ": at most 1000000 rounds per child");
  auto p = std::make_unique<problem_t>(v[0], v[1], v[2]);
  // Reference: the same tree walked with an explicit stack, independent of the recursion.
  std::vector<std::pair<std::uint64_t, long>> stack;  // (state, depth)
  for (long i = 0; i < p->root_children; ++i) stack.emplace_back(child_state(p->root, i, p->grain), 1);
  long nodes = 1;
  while (!stack.empty()) {
    const auto [s, d] = stack.back();
    stack.pop_back();
    ++nodes;
    if (d > p->depth) p->depth = d;
    if (has_children(s))
      for (long i = 0; i < kChildren; ++i) stack.emplace_back(child_state(s, i, p->grain), d + 1);
  }
  p->expected = nodes;
  p->reset();
  return p;
}

}  // namespace bench::uts
