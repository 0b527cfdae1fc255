// Per-worker storage of distribution-tree nodes (seed 003 §4.2.4; digest §2.8), shared by adws and adws-ml:
// a LIFO free list over an arena whose addresses never move. Nodes are allocated top-down and freed
// bottom-up by the same worker and never given back to the allocator; a freed node keeps its parent, so a
// worker that climbs from a stale node still reaches the root (a stale read picks a wrong range, nothing
// worse). Also the one activation rule both schedulers apply at every task's end.
#pragma once
#include <atomic>
#include <deque>

#include "roost/detail/task_frame.hpp"
#include "sched/adws_range.hpp"

namespace roost::sched::adws {

template <class Node>
class node_pool {
 public:
  // A node for range r under parent, inactive; init(node) writes the caller's own fields first.
  template <class Init>
  Node* take(range r, Node* parent, Init&& init) {
    Node* n = free_;
    if (n) free_ = n->next_free;
    else n = &arena_.emplace_back();
    n->lo.store(r.lo, std::memory_order_relaxed);
    n->hi.store(r.hi, std::memory_order_relaxed);
    n->parent.store(parent, std::memory_order_relaxed);
    init(*n);
    n->active.store(false, std::memory_order_release);
    return n;
  }
  Node* take(range r, Node* parent) {
    return take(r, parent, [](Node&) {});
  }
  void give_back(Node* n) {
    n->active.store(false, std::memory_order_release);
    n->next_free = free_;  // parent kept
    free_ = n;
  }

 private:
  Node* free_ = nullptr;
  std::deque<Node> arena_;
};

// Rule 6 (digest §9.8): a search-root task that ends activates the node of the group it belongs to. A task
// whose range lies in one worker (adws-ml: one group) is not a search root. activated(node) runs after.
template <class Node, class Activated>
inline void activate_when_search_root_ends(const detail::task_id& id, Activated&& activated) {
  if (id.sched_node && multi({id.range_lo, id.range_hi})) [[unlikely]] {
    auto* n = static_cast<Node*>(id.sched_node);
    n->active.store(true, std::memory_order_release);
    activated(*n);
  }
}

}  // namespace roost::sched::adws
