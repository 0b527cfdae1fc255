#include <algorithm>
#include <string>

#include "engine/observe.hpp"

namespace roost {

std::string task_event::path_string() const {
  std::string s;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i) s += '.';
    s += std::to_string(path[i]);
  }
  return s;
}

task_observer* set_task_observer(task_observer* o) {
  return detail::g_task_observer.exchange(o, std::memory_order_acq_rel);
}

namespace detail {
std::atomic<task_observer*> g_task_observer{nullptr};
}  // namespace detail

namespace engine {

std::vector<std::uint32_t> path_of(const detail::task_id& id) {
  std::vector<std::uint32_t> p;
  for (const detail::task_id* t = &id; t; t = t->parent) p.push_back(t->index);
  std::reverse(p.begin(), p.end());
  return p;
}


void report_task_resume(task_observer* o, unsigned worker, const detail::task_id& id) {
  o->on_task_resume(task_event{static_cast<int>(worker), path_of(id), -1});
}

void report_task_end(task_observer* o, unsigned worker, const detail::task_id& id) {
  o->on_task_end(task_event{static_cast<int>(worker), path_of(id), -1});
}

}  // namespace engine

void detail::report_task_start(task_observer* o, unsigned worker, const task_id& id, double hint) {
  o->on_task_start(task_event{static_cast<int>(worker), engine::path_of(id), hint});
}

}  // namespace roost
