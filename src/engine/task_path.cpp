#include "engine/task_path.hpp"

#include <algorithm>
#include <atomic>

namespace roost::engine {

std::vector<std::uint32_t> spawn_path(const detail::task_id& id) {
  std::vector<std::uint32_t> p;
  for (const detail::task_id* t = &id; t; t = t->parent) p.push_back(t->index);
  std::reverse(p.begin(), p.end());
  return p;
}

namespace {
// Observed ends, and the events after which an end may have gone unobserved (task_path.hpp).
std::atomic<std::uint64_t> g_path_epoch{0};
}  // namespace

std::vector<std::uint32_t> observed_paths::path_of(const detail::task_id& id) {
  const std::uint64_t epoch = g_path_epoch.load(std::memory_order_relaxed);
  if (epoch_ != epoch) {
    ids_.clear();
    path_.clear();
    epoch_ = epoch;
  }
  try {
    return path_from_held(id);
  } catch (...) {
    epoch_ = ~std::uint64_t{0};  // ids_ and path_ may differ now
    ids_.clear();
    path_.clear();
    throw;
  }
}

std::vector<std::uint32_t> observed_paths::path_from_held(const detail::task_id& id) {
  // Up to the deepest task the cache holds. A task's depth is where the cache would hold it, a hint only: a
  // foreign child named under the unrecorded parent keeps its spawner's depth + 1 (engine.hpp, name_foreign),
  // so a task is taken as held only where that slot holds its very address, which the cache put at the
  // task's real position (the chain's addresses are distinct: its tasks are all alive).
  walked_.clear();
  std::size_t held = 0;
  for (const detail::task_id* t = &id; t; t = t->parent) {
    const std::size_t at = t->depth;
    if (at < ids_.size() && ids_[at] == t) {
      held = at + 1;
      break;
    }
    walked_.push_back(t);
  }
  ids_.resize(held);
  path_.resize(held);
  for (auto t = walked_.rbegin(); t != walked_.rend(); ++t) {
    ids_.push_back(*t);
    path_.push_back((*t)->index);
  }
  return path_;
}

void observed_paths::ended(const detail::task_id& id) noexcept {
  // relaxed: the engine publishes the end after this (release), and whoever reuses the ended task's memory,
  // or reports a task placed there, comes after that publication.
  const std::uint64_t before = g_path_epoch.fetch_add(1, std::memory_order_relaxed);
  if (before != epoch_ || ids_.empty() || ids_.back() != &id || ids_.size() != path_.size()) {  // start over
    epoch_ = ~std::uint64_t{0};
    return;
  }
  epoch_ = before + 1;  // this end alone: the path above the ended task still holds
  ids_.pop_back();
  path_.pop_back();
}

void observed_paths_stale() { g_path_epoch.fetch_add(1, std::memory_order_relaxed); }

std::string format_spawn_path(const std::vector<std::uint32_t>& path) {
  std::string s;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i) s += '.';
    s += std::to_string(path[i]);
  }
  return s;
}

}  // namespace roost::engine
