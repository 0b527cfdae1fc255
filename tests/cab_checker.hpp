// cab's tier rules (seed 000 §3.3) as an observer, and the binary tree its tests run: shared by test_cab
// (native threads) and test_sim (seeded simulated interleavings). cats, once profiled, schedules by the same
// rules with the boundary it found (seed 000 §3.2): test_cats and test_sim check it with this observer too.
#pragma once
#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "roost/roost.hpp"

namespace roost_test::cab {

inline long tree(int depth, long id) {
  if (depth == 0) {
    volatile unsigned long x = static_cast<unsigned long>(id);
    for (unsigned i = 0; i < 200; ++i) x = x * 31u + i;
    return id % 7;
  }
  long a = 0, b = 0;
  roost::task_group tg(2);
  tg.run([&] { a = tree(depth - 1, 2 * id); }, 1);
  tg.run([&] { b = tree(depth - 1, 2 * id + 1); }, 1);
  tg.wait();
  return a + b;
}

inline long tree_serial(int depth, long id) {
  return depth == 0 ? id % 7 : tree_serial(depth - 1, 2 * id) + tree_serial(depth - 1, 2 * id + 1);
}

struct checker : roost::task_observer {
  unsigned level, cores_per_socket;
  std::mutex m;
  std::map<std::string, unsigned> subtree_socket;  // leaf inter-socket task -> its socket
  std::map<unsigned, int> active;                   // socket -> running subtrees
  int max_active = 0;
  std::vector<std::string> errors;
  long leaf_inter_starts = 0;

  checker(unsigned l, unsigned c) : level(l), cores_per_socket(c) {}
  unsigned socket_of(int w) const { return static_cast<unsigned>(w) / cores_per_socket; }
  bool head(int w) const { return static_cast<unsigned>(w) % cores_per_socket == 0; }
  static std::string prefix(const roost::task_event& e, unsigned depth) {
    std::string s;
    for (unsigned i = 0; i <= depth; ++i) {
      if (i) s += '.';
      s += std::to_string(e.path[i]);  // not ("." + ...): GCC 12 warned of a false -Wstringop-overflow there
    }
    return s;
  }
  void seen(const roost::task_event& e, bool start) {
    unsigned depth = static_cast<unsigned>(e.path.size()) - 1;
    std::lock_guard<std::mutex> lk(m);
    if (depth == level && start) {
      ++leaf_inter_starts;
      subtree_socket[e.path_string()] = socket_of(e.worker);
      int now = ++active[socket_of(e.worker)];
      max_active = std::max(max_active, now);
    }
    if (depth <= level && start && !head(e.worker))
      errors.push_back("inter-socket task " + e.path_string() + " started on non-head worker " + std::to_string(e.worker));
    if (depth > level) {
      auto it = subtree_socket.find(prefix(e, level));
      if (it == subtree_socket.end()) errors.push_back("task " + e.path_string() + " ran before its subtree root");
      else if (it->second != socket_of(e.worker))
        errors.push_back("task " + e.path_string() + " of a subtree of socket " + std::to_string(it->second) +
                         " ran on worker " + std::to_string(e.worker));
    }
  }
  void on_task_start(const roost::task_event& e) override { seen(e, true); }
  void on_task_resume(const roost::task_event& e) override { seen(e, false); }
  void on_task_end(const roost::task_event& e) override {
    if (e.path.size() - 1 != level) return;
    std::lock_guard<std::mutex> lk(m);
    --active[subtree_socket[e.path_string()]];
  }
};

}  // namespace roost_test::cab
