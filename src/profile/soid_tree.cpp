#include "profile/soid_tree.hpp"

#include <algorithm>
#include <atomic>

namespace roost::profile {

void soid_tree::clear() {
  std::lock_guard<std::mutex> lk(m_);
  next_fresh_ = 0;  // the chunks stay for the next profile
  free_ = nullptr;
  live_ = peak_ = profiled_ = 0;
  top_to_depth_.assign(bounds_.max_depth + 1, 0);
  depth_limit_.store(bounds_.max_depth, std::memory_order_relaxed);
  intra_.store(0, std::memory_order_relaxed);
  root_ = nullptr;
  kids_.clear();
  kids_.shrink_to_fit();
}

soid_tree::node* soid_tree::allocate(unsigned depth) {
  if (live_ == bounds_.max_nodes) return nullptr;
  node* n = free_;
  if (n) {
    free_ = n->next_sibling;
  } else {
    if (next_fresh_ == chunks_.size() * kChunk) chunks_.push_back(std::make_unique<node[]>(kChunk));
    n = &chunks_[next_fresh_ / kChunk][next_fresh_ % kChunk];
    ++next_fresh_;
  }
  *n = node{};
  n->depth = depth;
  n->first_kid = kNoKids;
  ++profiled_;
  peak_ = std::max(peak_, ++live_);
  // The top of the tree down to the first depth that brings it to top_tasks tasks is profiled, no deeper:
  // the new task counts at its depth and below, down to the limit (deeper counts are never read again).
  const unsigned limit = depth_limit_.load(std::memory_order_relaxed);
  for (unsigned d = depth; d < limit; ++d) {
    if (++top_to_depth_[d] >= bounds_.top_tasks) {
      depth_limit_.store(d, std::memory_order_relaxed);
      break;
    }
  }
  return n;
}

soid_tree::node* soid_tree::make_root() {
  std::lock_guard<std::mutex> lk(m_);
  root_ = allocate(0);
  return root_;
}

soid_tree::node* soid_tree::add_child(node& parent, std::uint32_t index) {
  if (parent.depth >= depth_limit_.load(std::memory_order_relaxed)) {
    parent.cut_by_depth = true;
    return nullptr;
  }
  node* c;
  {
    std::lock_guard<std::mutex> lk(m_);
    c = allocate(parent.depth + 1);
  }
  if (!c) {
    parent.cut_by_budget = true;
    return nullptr;
  }
  c->parent = &parent;
  c->index = index;
  (parent.last_child ? parent.last_child->next_sibling : parent.first_child) = c;
  parent.last_child = c;
  return c;
}

void soid_tree::credit(node& n, std::uint64_t bytes) {
  if (bytes) std::atomic_ref<std::uint64_t>(n.own_bytes).fetch_add(bytes, std::memory_order_relaxed);
}

void soid_tree::end(node& n, std::uint32_t spawned, std::uint64_t cache) {
  n.spawned = spawned;
  // Eq. 1: its own footprint (with what its unprofiled descendants were credited) + its children's SOIDs.
  // The children's adds happened before their ends, which the join made visible here.
  n.soid = std::atomic_ref<std::uint64_t>(n.own_bytes).load(std::memory_order_relaxed) +
           std::atomic_ref<std::uint64_t>(n.children_soid).load(std::memory_order_acquire);
  if (n.parent)
    std::atomic_ref<std::uint64_t>(n.parent->children_soid).fetch_add(n.soid, std::memory_order_acq_rel);
  if (n.soid > cache) return;
  // It fits: its children are intra-socket whatever their paths (§3.2.2, Fig. 6(c)), and each of them
  // freed its own children already (they fit too).
  if (spawned) intra_.fetch_add(spawned, std::memory_order_relaxed);
  if (!n.first_child) return;
  std::lock_guard<std::mutex> lk(m_);
  for (node* c = n.first_child; c;) {
    node* next = c->next_sibling;
    c->next_sibling = free_;
    free_ = c;
    --live_;
    c = next;
  }
  n.first_child = n.last_child = nullptr;
}

soid_tree::summary soid_tree::finish(std::uint64_t cache) {
  summary s;
  s.profiled = profiled_;
  s.peak_nodes = peak_;
  s.intra = intra_.load(std::memory_order_relaxed);
  s.depth = depth_limit_.load(std::memory_order_relaxed);
  if (!root_) return s;
  s.root_soid = root_->soid;
  // What is left is the root, the inter-socket tasks and their children: classify them top-down.
  std::vector<node*> todo{root_};
  while (!todo.empty()) {
    node* n = todo.back();
    todo.pop_back();
    n->t = classify(n->soid, n->parent ? std::optional<std::uint64_t>(n->parent->soid) : std::nullopt, cache);
    if (n->t == tier::leaf) ++s.leaves;
    if (n->t != tier::inter) continue;
    s.cut_by_depth += n->cut_by_depth;
    s.cut_by_budget += n->cut_by_budget;
    for (node* c = n->first_child; c; c = c->next_sibling) todo.push_back(c);
  }
  if (!s.complete()) return s;
  // Every inter-socket task has a node for each of its children: index them for the next iterations.
  todo.push_back(root_);
  while (!todo.empty()) {
    node* n = todo.back();
    todo.pop_back();
    if (n->t != tier::inter) continue;
    n->first_kid = static_cast<std::uint32_t>(kids_.size());
    kids_.resize(kids_.size() + n->spawned, nullptr);
    for (node* c = n->first_child; c; c = c->next_sibling) {
      kids_[n->first_kid + c->index] = c;
      todo.push_back(c);
    }
  }
  return s;
}

}  // namespace roost::profile
