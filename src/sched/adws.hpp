// adws — Almost Deterministic Work Stealing (seed 003 chapter 4; ../shared/notes/adws-thesis-digest.md §2).
//
// Task groups are dealt over the worker line in proportion to their work hints, so that the same data lands
// on the same worker every iteration; imbalance is repaired by stealing only inside the distribution tree.
//
//  * The root of every iteration runs on worker 0 with range [0, P) and starts a *search*: at each spawn of
//    a group with a total work hint it splits its range (adws_range.hpp); a child whose range starts in
//    another worker's region is shipped there — to its one-slot mailbox if the range spans several workers
//    (a search-root task: never stolen, run first), else to its migration queue — and the searcher goes on
//    with the continuation (help-first). A child that starts in its own region runs work-first, and the
//    search goes on inside it. A search ends at the first join or at task end (Algorithm 4.2), or where it
//    opens a group it cannot deal (no total work hint, or a range inside one worker: end_search_at_plain_group).
//  * Continuations go to the local queue, or to the migration queue while running migrated work (use_mig,
//    Algorithm 4.3); own work is taken mailbox first, then as use_mig says.
//  * Each group opened during a search gets a distribution-tree node (range, parent, active). A worker
//    steals only inside the topmost active node above its current one, skipping the range owner's
//    migration queue and the last worker's local queue (§4.2.4). Nodes start inactive, become active when
//    their search ends or a search-root child completes, and are dropped at group end without activating
//    the parent — so thieves stay out of the next search.
//  * After every group opened during a search, the task migrates back to its range's owner and restores
//    range and node bit-exactly (return migration): consecutive groups and iterations map the same way.
//
// Groups without a total work hint are not dealt (their children run work-first in place); a child without
// a hint weighs 1. Wrong hints change only the mapping; stealing and joins keep results exact.
// ROOST_ADWS_STEAL=false turns stealing off (the thesis's "ADWS (no steal)"); auto measures which is faster
// (steal_tuner.hpp).
#pragma once
#include <atomic>
#include <string>
#include <vector>

#include "queues/migration_queue.hpp"
#include "sched/adws_nodes.hpp"
#include "sched/adws_own_work.hpp"
#include "sched/adws_range.hpp"
#include "sched/policy.hpp"
#include "sched/steal_tuner.hpp"

namespace roost::sched {

class adws_policy : public policy_base {
 public:
  static constexpr const char* name = "adws";
  // A join outside a search is a plain work-first spawn (order() below): the inline two-way join does it
  // onto the queue a continuation would go to, the migration queue's owner end while use_mig (sync below).
  static constexpr bool inline_join_queue = true;
  explicit adws_policy(engine::engine_base& e);

  enum : std::uint8_t { kSearchRoot = 1, kPlain = 2 };  // group_state::dist.mode

  // The per-spawn paths are inline and short for what is not being dealt (most tasks); the search itself,
  // which runs a few times per group level, is out of line.
  spawn_order order(engine::worker& w, detail::task_frame& f) {
    detail::group_state& g = *f.group;
    if (g.spawned == 1) {  // the group's first spawn since its last join opens it
      per_worker& me = of(w);
      if (me.searching) [[unlikely]] {
        if (g.total_work > 0) open_group(w, *w.current_task, g);
        else end_search_at_plain_group(w, me, g);
      } else {
        g.dist.mode = kPlain;
      }
    }
    // Not dealt: an ordinary local work-first spawn. The child keeps the cleared scheduling state of the
    // engine's spawn (range [0, 0), no node): a range inside one worker's region, which deals nothing
    // (open_group), and no node, which no search starts from and no task end activates. Nothing written.
    if (g.dist.mode != kSearchRoot) return spawn_order::child_first;
    return deal(w, f, *w.current_task, g);
  }
  // order()'s plain case (policy.hpp, plain_spawns): a group opened plain, not dealt; false, having changed
  // nothing, while the worker searches (the open may be the out-of-line one) or the group was dealt.
  static constexpr bool plain_spawns = true;
  bool order_plain(engine::worker& w, detail::group_state& g, detail::task_frame&, bool opens) noexcept {
    if (opens) {
      if (of(w).searching) [[unlikely]] return false;
      g.dist.mode = kPlain;
      return true;
    }
    return g.dist.mode != kSearchRoot;
  }
  // A spawn that threw spawned nothing: a dealt child not shipped leaves no ship pending, and a group's first
  // spawn leaves the group unopened (its count back at 0: wait() never reaches the engine), so what its open
  // did (a node, the task's range) is undone here as its join would (a review: one node leaked a run).
  void spawn_failed(engine::worker& w, detail::task_frame& f) {
    of(w).ship_pending = false;
    detail::group_state& g = *f.group;
    if (g.spawned == 1 && g.dist.mode == kSearchRoot) finish_dealt_group(w, g);
  }
  // Distribution nodes the workers' pools hold, in use or free (tests: memory stays flat over runs).
  std::size_t nodes_allocated() const {
    std::size_t n = 0;
    for (const per_worker& me : ws_) n += me.nodes.allocated();
    return n;
  }
  bool ship(engine::worker& w, detail::task_frame* f);
  ROOST_SEAM void publish_continuation(engine::worker& w, engine::fiber* parent) {
    per_worker& me = of(w);
    // Either deque wakes a sleeper when it shares the task.
    if (me.use_mig) me.migq.push_bottom(parent);
    else w.deque.push(parent);
  }
  ROOST_SEAM detail::job* pop_own(engine::worker& w) {
    // The deque's pop window is open only where Algorithm 4.3 takes the deque's top job: no job in the
    // mailbox (deliver shuts the window, which stays shut while that run-first slot is full), the deque the
    // queue the worker works from (sync_join_queue shuts it while use_mig or searching) and a worker caught
    // up with the iteration (iteration_begin shuts it, and sync_join_queue again where it finds the worker
    // behind), and only for the private part with no request waiting. Else the migration queue while the
    // worker works from it, and anything else takes the slow path, which gives the same job (#25: fib's
    // spawn 329 -> 321 instructions against testing the mailbox and use_mig before the deque's pop, and
    // 280 -> 275 against testing the iteration before it and the job after it; adws-ml 286 -> 280).
    return w.deque.pop_window_or([&]() __attribute__((always_inline)) -> detail::job* {
      per_worker& me = of(w);
      if (me.iteration == iteration_.load(std::memory_order_relaxed) && me.use_mig &&
          me.mailbox.load(std::memory_order_relaxed) == nullptr)
        if (detail::job* t = me.migq.pop_bottom()) return t;
      return pop_own_slow(w);
    });
  }
  bool has_visible_work(engine::worker& w);
  // The migration queue's own end keeps the frames it holds private (inline joins' halves, pushed while the
  // worker worked from it) when the worker turns to its mailbox (take_own_work), and its join queue no
  // longer names it: those frames are stamped too (policy.hpp), not only the join queue's.
  void stamp_own_private(engine::worker& w, std::uint64_t state) {
    w.deque.stamp_private(state);
    of(w).migq.owner_end().stamp_private(state);
  }
  detail::job* steal(engine::worker& w);
  // A stopping runtime's leaving worker (policy.hpp): a job another worker's mailbox or migration queue
  // still holds, dealt there after that worker left by a child of a group that escaped its creator.
  detail::job* take_left_behind(engine::worker& w);
  void on_task_start(engine::worker& w, detail::task_id& id) {
    if (id.parent == nullptr) start_root(w, id);
  }
  // Only a root starts anything: a child's start (the engine knows it has a parent) tests nothing (#25).
  void on_child_start(engine::worker&, detail::task_id&) {}
  void on_task_end(engine::worker& w, detail::task_id& id) {
    // An iteration's root (no parent) is searching again after its last dealt group (finish_dealt_group)
    // and ends after everything of its iteration: its search ends with nothing left to steal, so its node
    // is not activated and nobody is asked to share or pointed at it (rule 4 here, rule 6 in
    // activate_when_search_root_ends).
    end_search(w, of(w), id.parent != nullptr);
    adws::activate_when_search_root_ends<node>(id, [&](node& n) { activated(n, nullptr); });
  }
  void on_wait(engine::worker& w, detail::group_state&) { end_search(w, of(w)); }
  engine::worker* after_join(detail::group_state& g, const detail::task_id&) {
    if (g.dist.mode != kSearchRoot) return nullptr;
    return &eng_.worker_at(adws::first({g.dist.saved_lo, g.dist.saved_hi}));  // return migration
  }
  void resumed_after_join(engine::worker& w, detail::group_state& g) {
    if (g.dist.mode == kSearchRoot) finish_dealt_group(w, g);
  }
  // The three act on a dealt group, or end a search. A task without a node deals nothing (its range lies
  // inside one worker: open_group), so its groups are plain; and no search runs at their joins: the
  // child's end ended any (on_task_end), and a running task starts one again only by finishing a dealt
  // group (finish_dealt_group), which such a task never opened.
  bool join_hooks_idle(engine::worker& w, const detail::group_state& g) const {
    return g.dist.mode != kSearchRoot && w.current_task->sched_node == nullptr;
  }
  void hand_over(engine::worker& from, engine::worker& target, engine::fiber* f);
  void iteration_begin();
  void iteration_end();
  std::string notes() const;

  // Distribution-tree node (digest §2.4, §2.8; adws_nodes.hpp: shared fields, generations).
  struct node : adws::node_links<node> {};

 private:

  // What the owner reads at every spawn, pop and task end shares its first line: a task of a memory-bound
  // leaf finds the runtime's lines evicted (engine/README.md, "A task in a cold cache"), so each line
  // costs a miss per task. Others write mailbox and pointed only when they deal or point (rare), and
  // the migration queue, which thieves take from, lies on lines of its own.
  struct alignas(64) per_worker {
    std::atomic<detail::job*> mailbox{nullptr};  // one slot: at most one pending search-root task (Thm 2)
    std::uint64_t iteration = 0;
    adws::node_ref<node> current;  // with its generation: a climb from a node reused since ends there
    // Set by a searcher whose search ended with this worker in its node's range while this worker had no
    // node of its own (digest §9.8, "point workers that got nothing at the active node"); taken at the
    // next steal if its node is still active and holds this worker (adws::take_pointed). Any worker writes
    // it; nodes are never given back to the allocator, so a stale value is safe to read.
    std::atomic<node*> pointed{nullptr};
    bool use_mig = false;
    bool searching = false;
    // order() decides, ship() delivers.
    bool ship_pending = false;
    bool ship_search_root = false;
    unsigned ship_to = 0;
    alignas(64) queues::migration_queue<detail::job> migq;
    adws::node_pool<node> nodes;
  };

  per_worker& of(engine::worker& w) { return *static_cast<per_worker*>(w.policy_state); }  // set at construction
  // The inline join's queue (abi.hpp, worker_abi::join_queue): none while searching, whose joins deal their
  // halves, else where publish_continuation would push. Called wherever `searching` or `use_mig` changes.
  // A worker behind the iteration keeps its deque's pops shut (adws::shut_pops_while_behind).
  void sync_join_queue(engine::worker& w, per_worker& me) {
    detail::name_join_queue(w, me.searching ? nullptr : me.use_mig ? &me.migq.owner_end() : &w.deque);
    adws::shut_pops_while_behind(w, me.iteration, iteration_);
  }
  void catch_up(engine::worker& w, per_worker& me);
  void open_group(engine::worker& w, detail::task_id& cur, detail::group_state& g);
  spawn_order deal(engine::worker& w, detail::task_frame& f, detail::task_id& cur, detail::group_state& g);
  detail::job* pop_own_slow(engine::worker& w);
  void start_root(engine::worker& w, detail::task_id& id);
  void finish_dealt_group(engine::worker& w, detail::group_state& g);
  void end_search(engine::worker& w, per_worker& me, bool activate = true) {
    if (me.searching) [[unlikely]] end_search_slow(w, me, activate);
  }
  void end_search_slow(engine::worker& w, per_worker& me, bool activate);
  void end_search_at_plain_group(engine::worker& w, per_worker& me, detail::group_state& g);
  void activated(node& n, const engine::worker* searcher);
  void deliver(engine::worker& target, detail::job* j, bool search_root);

  std::vector<per_worker> ws_;
  node root_;  // the whole line, one per runtime; deactivated at every iteration start
  std::atomic<std::uint64_t> iteration_{0};
  steal_tuner steal_;
  const unsigned workers_;
};

}  // namespace roost::sched
