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
  at_depth_.assign(bounds_.max_depth + 1, 0);
  keep_depth_.store(min_leaves_ > 1 ? bounds_.max_depth : 0, std::memory_order_relaxed);
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
  n->home = kNoHome;
  n->write_lo = n->read_lo = kNoAddress;
  if (++at_depth_[depth] >= kKeepPerSocket * min_leaves_ && depth < keep_depth_.load(std::memory_order_relaxed))
    keep_depth_.store(depth, std::memory_order_relaxed);
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
  struct mark_ended {
    node& n;
    ~mark_ended() { std::atomic_ref<std::uint8_t>(n.ended).store(1, std::memory_order_release); }
  } at_exit{n};
  n.spawned = spawned;
  // Eq. 1: its own footprint (with what its unprofiled descendants were credited) + its children's SOIDs.
  // The children's adds happened before their ends, which the join made visible here.
  n.soid = std::atomic_ref<std::uint64_t>(n.own_bytes).load(std::memory_order_relaxed) +
           std::atomic_ref<std::uint64_t>(n.children_soid).load(std::memory_order_acquire);
  if (n.parent) {
    std::atomic_ref<std::uint64_t>(n.parent->children_soid).fetch_add(n.soid, std::memory_order_acq_rel);
    // Its anchor is its parent's too: a subtree touched what its children did.
    const std::uintptr_t w = std::atomic_ref<std::uintptr_t>(n.write_lo).load(std::memory_order_relaxed);
    const std::uintptr_t r = std::atomic_ref<std::uintptr_t>(n.read_lo).load(std::memory_order_relaxed);
    if (w != kNoAddress) note_touch(*n.parent, w, true);
    if (r != kNoAddress) note_touch(*n.parent, r, false);
  }
  if (n.soid > cache) return;
  // It fits: its children are intra-socket whatever their paths (§3.2.2, Fig. 6(c)), and each of them
  // freed its own children already (they fit too).
  if (spawned) intra_.fetch_add(spawned, std::memory_order_relaxed);
  if (!n.first_child || n.depth < keep_depth_.load(std::memory_order_relaxed)) return;
  // Children still running (spawned into another task's group, which joins them) keep their nodes, and so
  // do their siblings: the list is freed whole or not at all. Kept nodes count against max_nodes until the
  // profile is dropped.
  for (node* c = n.first_child; c; c = c->next_sibling)
    if (!std::atomic_ref<std::uint8_t>(c->ended).load(std::memory_order_acquire)) return;
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
  split_until_every_socket_has_a_leaf(s);
  deal_homes(s);
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

namespace {
// A leaf's anchor: the lowest address written, else read (kNoAddress: never touched, or a counter source).
std::uintptr_t anchor(const soid_tree::node& n) {
  return n.write_lo != soid_tree::kNoAddress ? n.write_lo : n.read_lo;
}
bool anchored(const std::vector<soid_tree::node*>& leaves) {
  for (const auto* n : leaves)
    if (anchor(*n) == soid_tree::kNoAddress) return false;
  return !leaves.empty();
}
}  // namespace

void soid_tree::note_touch(node& n, std::uintptr_t addr, bool write) {
  std::atomic_ref<std::uintptr_t> lo(write ? n.write_lo : n.read_lo);
  std::uintptr_t cur = lo.load(std::memory_order_relaxed);
  while (addr < cur && !lo.compare_exchange_weak(cur, addr, std::memory_order_relaxed)) {
  }
}

std::vector<soid_tree::node*> soid_tree::leaves_in_spawn_order() const {
  std::vector<node*> leaves;
  std::vector<node*> todo{root_};
  while (!todo.empty()) {
    node* n = todo.back();
    todo.pop_back();
    if (n->t == tier::leaf) leaves.push_back(n);
    if (n->t != tier::inter) continue;
    const std::size_t at = todo.size();
    for (node* c = n->first_child; c; c = c->next_sibling) todo.push_back(c);
    std::reverse(todo.begin() + static_cast<std::ptrdiff_t>(at), todo.end());  // first child on top
  }
  return leaves;
}

std::size_t soid_tree::data_classes(const std::vector<node*>& leaves) {
  if (!anchored(leaves)) return leaves.size();
  std::vector<std::uintptr_t> a;
  for (const auto* n : leaves) a.push_back(anchor(*n));
  std::sort(a.begin(), a.end());
  return static_cast<std::size_t>(std::unique(a.begin(), a.end()) - a.begin());
}

void soid_tree::split_until_every_socket_has_a_leaf(summary& s) {
  std::vector<node*> leaves = leaves_in_spawn_order();
  auto splittable = [](const node* n) {
    if (n->spawned == 0 || n->cut_by_depth || n->cut_by_budget) return false;
    std::uint32_t with_nodes = 0;
    for (const node* c = n->first_child; c; c = c->next_sibling) ++with_nodes;
    return with_nodes == n->spawned;  // kept above keep_depth_, none refused
  };
  while (data_classes(leaves) < min_leaves_) {
    std::uint64_t largest = 0;
    for (const node* n : leaves)
      if (splittable(n)) largest = std::max(largest, n->soid);
    if (largest == 0) return;  // the tree has no finer split: fewer classes than sockets
    std::vector<node*> next;
    for (node* n : leaves) {
      if (!splittable(n) || n->soid * 3 < largest * 2) {  // below largest / 1.5: kept whole this round
        next.push_back(n);
        continue;
      }
      n->t = tier::inter;
      ++s.split;
      for (node* c = n->first_child; c; c = c->next_sibling) {
        c->t = tier::leaf;
        next.push_back(c);
      }
      s.leaves += n->spawned - 1;
      s.intra -= std::min<std::size_t>(s.intra, n->spawned);
    }
    leaves = std::move(next);
  }
}

void soid_tree::deal_homes(summary& s) {
  std::vector<node*> leaves = leaves_in_spawn_order();
  s.classes = data_classes(leaves);
  if (leaves.empty()) return;
  // Classes in address order (leaves in spawn order without anchors), each with its leaves' SOIDs.
  const bool by_anchor = anchored(leaves);
  if (by_anchor)
    std::stable_sort(leaves.begin(), leaves.end(), [](const node* a, const node* b) { return anchor(*a) < anchor(*b); });
  long double total = 0;
  for (const node* n : leaves) total += static_cast<long double>(n->soid);
  long double before = 0;
  for (std::size_t i = 0; i < leaves.size();) {
    std::size_t j = i + 1;  // [i, j): one class
    while (by_anchor && j < leaves.size() && anchor(*leaves[j]) == anchor(*leaves[i])) ++j;
    long double soid = 0;
    for (std::size_t k = i; k < j; ++k) soid += static_cast<long double>(leaves[k]->soid);
    // The class's home is the socket its SOID's midpoint falls in (by position when nothing was measured).
    const long double mid = total > 0 ? (before + soid / 2) / total
                                      : (static_cast<long double>(i + j) / 2) / static_cast<long double>(leaves.size());
    before += soid;
    const unsigned home = std::min(static_cast<unsigned>(mid * static_cast<long double>(min_leaves_)), min_leaves_ - 1);
    for (std::size_t k = i; k < j; ++k) leaves[k]->home = static_cast<std::uint16_t>(home);
    i = j;
  }
}

}  // namespace roost::profile
