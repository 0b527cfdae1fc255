// Per-worker storage of distribution-tree nodes (seed 003 §4.2.4; digest §2.8), shared by adws and adws-ml:
// a LIFO free list over an arena whose addresses never move. Nodes are allocated top-down and freed
// bottom-up by the same worker and never given back to the allocator. Other workers keep pointers to nodes
// past their groups (a worker's current node, a node's parent): a node's generation tells them whether it
// is still the one they meant (node_links below). Also the one activation rule both schedulers apply at
// every task's end.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>

#include "roost/detail/task_frame.hpp"
#include "sched/adws_range.hpp"

namespace roost::sched::adws {

// What every distribution-tree node has (adws's node is this; adws-ml's adds its level and entries). Read
// by other workers, possibly after reuse: every field they read is atomic.
//
// Generations. A thief climbs from its current node through parents to the topmost active node and steals
// inside its range (Algorithm 4.3). Those pointers outlive their groups: a worker keeps its current node
// after the group ends, and a freed node keeps its parent. Once the owner reuses a node for another group,
// a climb through it read that group's range: adws-ml's leaf workers of one package stole from another
// package's cores, so leaves of two cache-sized pieces ran under one cache (AdwsMlCapacity failed in CI, 1
// run in 400 under load; the stale climb went from a freed piece node to its freed parent, reused as
// another package's piece node). So each node has a generation, `gen`: 0 mod 4 while the node is in use,
// 2 mod 4 while it is being written (take), 1 mod 4 while it is free. A pointer carries the generation it
// was made at (node_ref; a node its parent's, in `parent_gen`), and a climb trusts what it read from a
// node only while the generation is the same, or one more after an in-use one (freed since, not reused:
// its fields are still those of its last group, and it is inactive). A pointer made inside a write window
// never validates. Fields are written with release inside the window and read with acquire before the
// generation is checked, so a field of a later write implies a moved generation (a seqlock's reader,
// without the retry: a climb that finds a node rewritten under it ends there, and the thief starts again
// from its fallback: steal()). The one field written while a node stays in use is its parent (a splice):
// it is read twice around its generation, with a null in between at the writer (parent_of).
template <class Node>
struct node_links {
  std::atomic<double> lo{0}, hi{0};
  std::atomic<Node*> parent{nullptr};  // kept when freed, so a climb from a freed node still goes up
  std::atomic<std::uint32_t> parent_gen{0};
  std::atomic<std::uint32_t> gen{0};
  std::atomic<bool> active{false};
  Node* next_free = nullptr;
  // The pool whose arena holds it (node_pool::take writes it): a node given back elsewhere goes home.
  void* home = nullptr;
  // The task and the group that opened it; read by that task only (adws::splice_out_of_order).
  const detail::task_id* opener = nullptr;
  detail::group_state* group = nullptr;
  range get() const { return {lo.load(std::memory_order_relaxed), hi.load(std::memory_order_relaxed)}; }
};

// A pointer to a node and the generation it was taken at. Made from a node the maker knows to be in use
// (its own chain, a task's node, a node just seen active), or checked afterwards (an entry loaded again,
// a pointed node's range); made while the node was being written, it never validates; made after the node
// was freed, it is trusted only as it is (an odd `gen`: no "freed since" allowance).
template <class Node>
class node_ref {
 public:
  node_ref() = default;
  node_ref(Node* n) : node_(n), gen_(n ? n->gen.load(std::memory_order_acquire) : 0) {}  // NOLINT: a node now
  node_ref(Node* n, std::uint32_t gen) : node_(n), gen_(gen) {}
  Node* get() const { return node_; }
  Node* operator->() const { return node_; }
  explicit operator bool() const { return node_ != nullptr; }
  bool operator==(const node_ref& o) const { return node_ == o.node_; }
  // What was read from the node before this call is what it held at the generation taken, or after it was
  // freed and before it was reused.
  bool still_valid() const {
    const std::uint32_t now = node_->gen.load(std::memory_order_acquire);  // after the reads (acquire)
    return gen_ % 4 != 2 && (now == gen_ || (now == gen_ + 1 && gen_ % 4 == 0));
  }

 private:
  Node* node_ = nullptr;
  std::uint32_t gen_ = 0;
};

// Writes fields of node `n` that other workers may be reading (node_links): its generation goes to 2 mod 4
// before (from 1, free; or from 0, in use) and to the next 0 mod 4 after. Only the worker holding the node
// writes it (its pool's owner, or the task whose chain it is on).
template <class Node, class Write>
void rewrite_node(Node& n, Write&& write) {
  const std::uint32_t g = n.gen.load(std::memory_order_relaxed);
  const std::uint32_t window = g + (g % 4 == 1 ? 1 : 2);
  n.gen.store(window, std::memory_order_relaxed);
  write();  // stores with release
  n.gen.store(window + 2, std::memory_order_release);
}

// A node's parent and its generation, or false when they could not be read as one pair: a splice rewrites
// both of a node in use (set_parent), which a thief must not read half old, half new (a review: it paired
// the old parent, freed and reused since, with the new one's generation, which such small counters often
// equal). The writer nulls the parent first; the reader reads it before and after the generation.
template <class Node>
bool parent_of(const Node& n, Node*& parent, std::uint32_t& parent_gen) {
  parent = n.parent.load(std::memory_order_acquire);
  parent_gen = n.parent_gen.load(std::memory_order_acquire);
  return n.parent.load(std::memory_order_acquire) == parent;
}
template <class Node>
void set_parent(Node& n, Node* parent) {  // n in use: its generation stays (pointers to it stay good)
  n.parent.store(nullptr, std::memory_order_release);
  n.parent_gen.store(parent ? parent->gen.load(std::memory_order_relaxed) : 0, std::memory_order_release);
  n.parent.store(parent, std::memory_order_release);
}

// The topmost active node on the chain up from `from` while `stays(node)` holds (adws-ml: at one level),
// with the range it had then; false when there is none. The climb ends at a node rewritten since the
// pointer to it was made (the nodes above it belong to another group's chain), and then sets *cut: a
// thief whose own node's chain was cut climbs again from where a worker without a node starts (steal()),
// or it would find nothing there until the node was reused (a review).
template <class Node, class Stays>
bool topmost_active(node_ref<Node> from, Stays&& stays, node_ref<Node>& top, range& r, bool* cut = nullptr) {
  bool found = false;
  for (node_ref<Node> at = from; at;) {
    Node& n = *at.get();
    const bool in = stays(n);
    const bool active = n.active.load(std::memory_order_acquire);
    const range here{n.lo.load(std::memory_order_acquire), n.hi.load(std::memory_order_acquire)};
    Node* parent = nullptr;
    std::uint32_t parent_gen = 0;
    const bool paired = parent_of(n, parent, parent_gen);
    if (!at.still_valid()) {
      if (cut) *cut = true;
      break;
    }
    if (!in) break;
    if (active) {
      top = at;
      r = here;
      found = true;
    }
    if (!paired) break;  // a splice in progress: the climb ends here, this once
    at = node_ref<Node>(parent, parent_gen);
  }
  return found;
}

// A task's dealt groups joined out of the order it opened them (g0.run; g1.run; g0.wait; g1.wait). Each
// open saved the task's range and node and the join restores them: nested in order, the task returns to
// where the group found it. Out of order, g0's join would give back g1's node and restore what g0 saved,
// and g1's join would then give back the distribution tree's root (the next iteration hung with no node
// active; an outside-user campaign's fuzzer). Called at g's join: returns nullptr when g is the task's
// innermost open dealt group (its node is the task's: the common case); otherwise splices g out of the
// task's chain of open groups: the group opened right after g now saves what g saved (move_saved(to,
// from)) and its node hangs under g's parent, and returns g's node, which the caller gives back, leaving
// the task where it is. Node::group names the group that opened a node; every group on the chain is open,
// so alive.
template <class Node, class MoveSaved>
Node* splice_out_of_order(const detail::task_id& cur, detail::group_state& g, MoveSaved&& move_saved) {
  auto* later = static_cast<Node*>(cur.sched_node);
  if (!later || later->group == &g || later->opener != &cur) return nullptr;
  for (;;) {
    auto* x = static_cast<Node*>(later->group->dist.saved_node);
    if (!x || x->opener != &cur) return nullptr;  // not on this task's chain: nothing to splice
    if (x->group == &g) {
      move_saved(later->group->dist, g.dist);
      auto* up = static_cast<Node*>(g.dist.saved_node);  // on the task's chain: in use
      set_parent(*later, up);  // `later` stays in use, and pointers to it good (parent_of)
      return x;
    }
    later = x;
  }
}

template <class Node>
class node_pool {
 public:
  // A node for range r under parent, inactive; init(node) writes the caller's own fields first. Never one of
  // parent's ancestors (reserve_one, called first with the same parent, put a node that is none at the head).
  // init writes with release (node_links: inside rewrite_node's window). `parent` is in use (the opener's
  // chain), its generation the one a climb from here expects.
  template <class Init>
  Node* take(range r, Node* parent, Init&& init) {
    Node* n = free_;
    if (n) free_ = n->next_free;
    else n = &arena_.emplace_back();
    n->home = this;
    rewrite_node(*n, [&] {
      n->lo.store(r.lo, std::memory_order_release);
      n->hi.store(r.hi, std::memory_order_release);
      n->parent_gen.store(parent ? parent->gen.load(std::memory_order_relaxed) : 0, std::memory_order_release);
      n->parent.store(parent, std::memory_order_release);
      init(*n);
      n->active.store(false, std::memory_order_release);
    });
    return n;
  }
  Node* take(range r, Node* parent) {
    return take(r, parent, [](Node&) {});
  }
  // Makes sure that the next take(., parent) does not allocate: a caller that changes scheduling state before
  // it takes calls this first, so that std::bad_alloc leaves everything as it was. The node it will take is
  // not on parent's chain, so no chain ever becomes a cycle. A task once named a node that was given back (a
  // child of a plain group opened after an older dealt or descended group, which its parent then joined
  // first), and taking that node as the child's new one made it its own parent, a cycle that a thief's climb
  // (steal) followed for ever (an outside-user campaign: adws-ml stalled the simulated platform). adws-ml's
  // nodes now live while a task names them (adws_ml.hpp, holders); this stays as the guard of every chain.
  void reserve_one(const Node* parent) {
    take_returned();
    for (Node** link = &free_; *link; link = &(*link)->next_free) {
      Node* n = *link;
      if (on_chain(parent, n)) continue;
      *link = n->next_free;  // to the head
      n->next_free = free_;
      free_ = n;
      return;
    }
    Node* n = &arena_.emplace_back();
    n->gen.store(1, std::memory_order_relaxed);  // free (odd) until taken
    n->next_free = free_;
    free_ = n;
  }
  // Called by the pool of the worker the node is given back on, which need not be its home: a group joins
  // where its task resumes, and an adws-ml node's last holder may end anywhere. Kept where it was given
  // back, a node never went home: the worker that opens most groups allocated a node at nearly every open
  // while others piled up free ones, and the arenas grew with the number of runs (a review: 770 nodes
  // after 3,000 runs of one program on 8 simulated workers, none in use). So a node goes home: onto this
  // pool's free list when it is this pool's, else onto its home's return list, which the home's owner
  // takes at its next reservation. The list is a stack that others only push onto and the owner empties
  // whole (no pop of one node, so no ABA); the push's release publishes the freed node's fields.
  void give_back(Node* n) {
    n->active.store(false, std::memory_order_release);
    n->gen.fetch_add(1, std::memory_order_release);  // odd: free, its fields still its last group's
    auto* home = static_cast<node_pool*>(n->home);
    if (home == this || home == nullptr) {
      n->next_free = free_;  // parent kept
      free_ = n;
      return;
    }
    Node* head = home->returned_.load(std::memory_order_relaxed);
    do n->next_free = head;
    while (!home->returned_.compare_exchange_weak(head, n, std::memory_order_release, std::memory_order_relaxed));
  }
  // The nodes this pool's arena holds, in use or free (tests: memory stays flat).
  std::size_t allocated() const { return arena_.size(); }

 private:
  void take_returned() {
    if (returned_.load(std::memory_order_relaxed) == nullptr) return;
    Node* got = returned_.exchange(nullptr, std::memory_order_acquire);
    while (got) {
      Node* next = got->next_free;
      got->next_free = free_;
      free_ = got;
      got = next;
    }
  }
  static bool on_chain(const Node* from, const Node* n) {
    for (const Node* x = from; x; x = x->parent.load(std::memory_order_acquire))
      if (x == n) return true;
    return false;
  }
  Node* free_ = nullptr;
  std::atomic<Node*> returned_{nullptr};  // given back by other workers' pools (give_back)
  std::deque<Node> arena_;
};

// Pointing (digest §9.8): a searcher whose search ends points the workers of its node's range that have
// no node yet at that node (`pointed`: written by the searcher after it activated the node, taken by the
// worker at its next steal). Two things can make a pointer useless, and both once left a worker without a
// node for a whole iteration (AdwsPointing on a loaded machine: worker 1 idle for 60 s):
//  * A worker may be pointed before it has looked at the new iteration: a starved thread, woken for its
//    first task of the iteration after the searcher's leaf had ended. Its catch-up must not drop the
//    pointer, so catch-up keeps it.
//  * So a pointer may be left over from an earlier iteration: a search that ends as the iteration ends
//    points at its node, and a worker asleep then keeps it. Taking it made that inactive node the worker's,
//    and the worker ignored the real pointer that came later.
// Hence a pointer is taken only if its node is active now: a pointed node was active when pointed at, and
// stops being so only when its group ends (or, the root's, when the next iteration begins), after which it
// has nothing left to steal. A node reused since and active again passes only if its range still holds the
// worker (the last point below). The exchange's acquire pairs with the searcher's release.
//  * And a worker may take a pointer of an iteration it has not caught up with: it read the iteration
//    counter, lost its CPU, and meanwhile the searcher began the next iteration, dealt and pointed. Its
//    next pop caught up and dropped the node with the old iteration's state: worker 1 spun with no node
//    for the rest of the iteration (AdwsPointing, about 1% of runs under TSan on a loaded machine). So a taken
//    pointer is followed by catch_up() before the caller makes the node its own: the exchange's acquire
//    makes the searcher's iteration visible to it. And the node's activity is read after that: read
//    before, a worker that lost its CPU between the two could see its node active, then catch up with
//    the next iteration, the node's group having ended meanwhile, and keep a dead node in the new
//    iteration, which no pointer replaces (taken only without a node). An iteration begins after the
//    groups of the previous one ended, so a catch-up that saw it sees their nodes inactive.
//  * And a pointer may name a node reused since for another group, active again: the worker is pointed only
//    at nodes whose range holds it, so `holds(node)` (the caller's: its worker or group lies in the node's
//    range) turns away one reused elsewhere; it reads after `active` and before the generation is checked
//    (node_links), so a node being rewritten meanwhile is turned away too.
template <class Node, class CatchUp, class Holds>
node_ref<Node> take_pointed(std::atomic<Node*>& pointed, CatchUp&& catch_up, Holds&& holds) {
  Node* p = pointed.exchange(nullptr, std::memory_order_acq_rel);
  if (!p) return {};
  catch_up();
  const node_ref<Node> ref(p);
  const bool usable = p->active.load(std::memory_order_acquire) && holds(*p);
  return usable && ref.still_valid() ? ref : node_ref<Node>{};
}

// Rule 6 (digest §9.8): a search-root task that ends activates the node of the group it belongs to. A task
// whose range lies in one worker (adws-ml: one group) is not a search root. activated(node) runs after.
// Not an iteration's root (no parent), whose node is the whole line's: it ends after everything of its
// iteration has, so there is nothing left to steal, and activated() would only ask every worker to share,
// two stores to lines each of them is polling, on the path from the root's end to run()'s return.
template <class Node, class Activated>
inline void activate_when_search_root_ends(const detail::task_id& id, Activated&& activated) {
  if (id.sched_node && multi({id.range_lo, id.range_hi}) && id.parent != nullptr) [[unlikely]] {
    auto* n = static_cast<Node*>(id.sched_node);
    n->active.store(true, std::memory_order_release);
    activated(*n);
  }
}

}  // namespace roost::sched::adws
