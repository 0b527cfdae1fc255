#include "engine/task_path.hpp"

#include <algorithm>

namespace roost::engine {

std::vector<std::uint32_t> spawn_path(const detail::task_id& id) {
  std::vector<std::uint32_t> p;
  for (const detail::task_id* t = &id; t; t = t->parent) p.push_back(t->index);
  std::reverse(p.begin(), p.end());
  return p;
}

std::string format_spawn_path(const std::vector<std::uint32_t>& path) {
  std::string s;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i) s += '.';
    s += std::to_string(path[i]);
  }
  return s;
}

}  // namespace roost::engine
