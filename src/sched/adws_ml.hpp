// adws-ml — multi-level Almost Deterministic Work Stealing (seed 003 chapter 5; digest §3, Algorithm 5.3).
//
// ADWS (adws.hpp) deals task groups over the workers in proportion to their work hints. adws-ml does the
// same one memory level at a time, over the memory groups of topo::memory_tree (DRAM > shared caches >
// per-worker caches), so that what runs under one cache at any moment is one task whose data fits it:
//
//  * A range counts groups of one memory level (task_id::range_lo/hi at level task_id::tier). A group of
//    workers acts through its head, its lowest-ranked worker; each worker represents one group at a time,
//    the one at its current level (`level` below), and takes work only from that group's mailbox and
//    queues, or steals from the groups of that level inside the topmost active distribution node (and,
//    where nobody else would, the work of the other groups it heads: take_own below).
//  * Level descent (§5.3.3, formal version): when a task opens a task group, if its range lies in one
//    group and the group's data-size hint fits that group's capacity, the task moves down to the group's
//    children, taking all of them as its range; while its range covers whole groups whose summed capacity
//    the data fits, it moves down again (memory-group aggregation): the heads of the groups it crosses are
//    pulled down to the new level with it until the group joins. The worker's level follows. A group
//    without a data-size hint fits everywhere: adws-ml is then adws.
//  * At the new level the group is dealt as in ADWS: search, mailboxes and migration queues, a node per
//    dealt group, localized stealing, return of the continuation to the group's owner, which restores the
//    range, the node and its level bit-exactly at the join.
//  * One root per cache: a head that moved down represents the lower level until the task that moved it
//    joins, so it takes no other work of the upper level meanwhile (unless that task waits behind an older
//    group: free_above); a group's other workers see upper-level work only through it.
//
// Groups without a total work hint are not dealt (children run work-first where their parent runs and are
// stolen inside the group's level). Hints change the mapping only; results never change.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "queues/locked_deque.hpp"
#include "queues/migration_queue.hpp"
#include "sched/adws_nodes.hpp"
#include "sched/adws_own_work.hpp"
#include "sched/adws_range.hpp"
#include "sched/policy.hpp"
#include "sched/steal_tuner.hpp"
#include "topology/memory_tree.hpp"

namespace roost::sched {

class adws_ml_policy : public policy_base {
 public:
  static constexpr const char* name = "adws-ml";
  // A join is a plain local work-first spawn while the worker represents its own leaf group and is not
  // searching (order() below): the inline two-way join does it onto the queue the worker works from
  // (sync_join_queue). Elsewhere the engine's join opens the group, which may descend and deal.
  static constexpr bool inline_join_queue = true;
  explicit adws_ml_policy(engine::engine_base& e);

  // group_state::dist.mode
  enum : std::uint8_t { kSearchRoot = 1, kPlain = 2, kDescended = 3 };

  // Writes the child's whole scheduling state on each path (order_writes_sched_state), the cleared state
  // before anything that may throw (spawn_failed reads the child's node).
  static constexpr bool order_writes_sched_state = true;
  spawn_order order(engine::worker& w, detail::task_frame& f) {
    detail::task_id& cur = *w.current_task;
    detail::group_state& g = *f.group;
    const per_worker& me = of(w);
    // A task its spawn marked (one_leaf_group) stays on the leaf level inside one group: its groups open
    // plain unless it searches, and its children are marked as it is. Its mark alone says so, without the
    // tier's compare with the leaf level (most spawns of a deep tree: fib's).
    if (cur.one_leaf_group && !me.searching) [[likely]] {
      if (g.spawned == 1) open_plain(g, cur);
      if (g.dist.mode != kSearchRoot) [[likely]] {
        set_plain_leaf_child(f.id, cur, me.leaf_lo, me.leaf_hi);
        return spawn_order::child_first;
      }
    }
    // Read once: the group's one-byte stores below may alias it for the compiler.
    std::uint8_t tier = cur.tier;
    if (g.spawned == 1) {  // the group's first spawn since its last join opens it
      // A task on a worker's own level that is not searching has no level below to descend to and
      // nothing to deal: plain, without the out-of-line open (most groups of a deep tree, e.g. fib's).
      if (!me.searching && is_leaf(tier)) [[likely]] {
        open_plain(g, cur);
      } else {
        f.id.clear_sched();
        open_group(w, cur, g);
        tier = cur.tier;  // the open may have moved the task to another level
      }
    }
    if (g.dist.mode != kSearchRoot) {  // not dealt: a local work-first spawn inside the spawner's group
      // A child on the leaf level with a one-group range opens no node of its own (open_group: nothing
      // below to descend to, nothing to deal) and activates none at its end: it keeps no node, as adws's
      // plain children do. Above the leaf level its groups may descend, and their nodes hang under this one.
      if (is_leaf(tier)) [[likely]] {
        set_plain_leaf_child(f.id, cur, me.leaf_lo, me.leaf_hi);
      } else {
        const double mine = group_of(w, tier);
        f.id.tier = tier;
        f.id.range_lo = mine;
        f.id.range_hi = mine + 0.5;
        f.id.sched_node = hold(cur.sched_node);
        f.id.one_leaf_group = 0;
      }
      return spawn_order::child_first;
    }
    f.id.clear_sched();
    return deal(w, f, cur, g);
  }
  // order()'s first case (policy.hpp, plain_spawns): a task marked one_leaf_group, not searching, whose group
  // is not dealt; false, having changed nothing, elsewhere.
  static constexpr bool plain_spawns = true;
  bool order_plain(engine::worker& w, detail::group_state& g, detail::task_frame& f, bool opens) noexcept {
    detail::task_id& cur = *w.current_task;
    const per_worker& me = of(w);
    if (!cur.one_leaf_group || me.searching) [[unlikely]] return false;
    if (opens) open_plain(g, cur);
    else if (g.dist.mode == kSearchRoot) [[unlikely]] return false;
    set_plain_leaf_child(f.id, cur, me.leaf_lo, me.leaf_hi);
    return true;
  }
  bool ship(engine::worker& w, detail::task_frame* f);
 private:
  // Opens g plain, without the out-of-line open: nothing dealt, nothing descended.
  static void open_plain(detail::group_state& g, const detail::task_id& cur) {
    g.dist.mode = kPlain;
    g.dist.saved_node = cur.sched_node;  // the task's innermost node at the open (mark_waiting_behind)
  }
  // A plain child of a task on the leaf level: its range a part of the worker's leaf group (the doubles
  // made once: an unsigned's conversion cost 6 instructions a spawn), no node, and the mark.
  static void set_plain_leaf_child(detail::task_id& child, const detail::task_id& cur, double lo, double hi) {
    child.tier = cur.tier;
    child.range_lo = lo;
    child.range_hi = hi;
    child.sched_node = nullptr;
    child.one_leaf_group = 1;
  }
 public:
  // The per-spawn paths while a worker represents its own (leaf) group, onto the queue it works from, as in
  // adws: the queue the inline join pushes onto (sync_join_queue: the deque, or the migration queue's own
  // end while it runs migrated work), which is named exactly while the worker is on its leaf level, not
  // searching and has nothing kept; everything else out of line, where the same queue is taken while the
  // worker represents the leaf level. One load and test (it was 8 instructions a spawn). Both leaf queues
  // wake sleepers when they share.
  void publish_continuation(engine::worker& w, engine::fiber* parent) {
    if (detail::ws_deque<detail::job>* q = w.join_queue.load(std::memory_order_relaxed)) [[likely]] q->push(parent);
    else publish_continuation_slow(w, parent);
  }
  detail::job* pop_own(engine::worker& w) {
    // Look before taking, as adws does: a new iteration or a mailbox task go the slow way, and so does a
    // worker the join queue is not named for (sync_join_queue: not on its leaf level, searching, or with
    // kept work). A migration queue's own end found empty leaves for the slow way too, which takes what its
    // inbox received. The deque's pop window stands for most of it: open only while the join queue is the
    // worker's deque, its leaf group's mailbox is empty (deliver shuts every one of the group's windows)
    // and the worker is caught up with the iteration (as adws's), for the private part with no request
    // waiting; the slow way gives what the window does not.
    return w.deque.pop_window_or([&]() __attribute__((always_inline)) -> detail::job* {
      per_worker& me = of(w);
      if (me.iteration == iteration_.load(std::memory_order_relaxed))
        if (detail::ws_deque<detail::job>* q = w.join_queue.load(std::memory_order_relaxed);
            q && q != &w.deque && me.leaf->mailbox.load(std::memory_order_relaxed) == nullptr)
          if (detail::job* t = q->pop()) return t;
      return pop_own_slow(w);
    });
  }
  // A job the engine gave back (it resumes a waiter first) may be a task returning to this group's head to
  // restore its level: it must not be stolen, or another worker would restore the owner's level.
  // Only the group's head takes from `kept`: a worker that is not the head (it represents the group too,
  // pulled there, or was lent to it) wakes every sleeper, since the engine's notify after this call wakes
  // one, which need not be the head. The head asleep was never woken, and the run hung with every worker
  // asleep (AdwsMl.OutOfOrderJoinsOnSharedL2sComplete natively, about 1 run in 10-100).
  //
  // A child another task spawned into a group (engine.hpp, spawn_foreign), adopted as a plain child of this
  // worker's leaf group (adopt_unnamed), goes where such a child's spawn would: onto the queue the inline
  // join pushes its half onto (sync_join_queue), where the group's workers and thieves take it. In `kept`
  // only the group's head ran it: one task spawning 32 children of 10 ms into its creator's group ran them
  // one after another on 4 workers (325 ms against ~101 under every other scheduler; a review). Where the
  // worker names no such queue (it represents another level, searches, or has kept work), `kept` as before.
  void put_back(engine::worker& w, detail::job* j) {
    detail::ws_deque<detail::job>* q = w.join_queue.load(std::memory_order_relaxed);
    if (j->k() == detail::job::kind::fresh_foreign && q) {
      q->push(j);
      return;
    }
    const unsigned level = level_now(of(w));
    queues_of(level, group_of(w, level)).kept.push_bottom(j);
    sync_join_queue(w, of(w));
    if (!heads(w, level)) eng_.idle().notify_all_new_work();
  }
  bool has_visible_work(engine::worker& w);
  // As adws's: the leaf group's migration queue keeps its private frames when the worker turns elsewhere.
  // Its other queues are locked deques, whose pushes stamp (queues/locked_deque.hpp).
  void stamp_own_private(engine::worker& w, std::uint64_t state) {
    w.deque.stamp_private(state);
    of(w).leaf->migq.split().owner_end().stamp_private(state);
  }
  detail::job* steal(engine::worker& w);
  // A stopping runtime's leaving worker (policy.hpp): a job a group's queues still hold, dealt, returned or
  // pushed there after the workers that serve the group left, by a child of a group that escaped its creator.
  detail::job* take_left_behind(engine::worker& w);
  void on_task_start(engine::worker& w, detail::task_id& id) {
    if (id.parent == nullptr) start_root(w, id);
  }
  // Only a root starts anything: a child's start (the engine knows it has a parent) tests nothing (#25).
  void on_child_start(engine::worker&, detail::task_id&) {}
  // A half that an inline join pushed, now run as a task by a thief or by the engine's join (named a child
  // of an unrecorded parent, scheduling state cleared): it was pushed as a plain child of the leaf level
  // (sync_join_queue), and it is one there, in the group of the worker that runs it. With tier 0 its
  // groups would descend from DRAM and be dealt.
  void adopt_unnamed(engine::worker& w, detail::task_id& id) {
    id.tier = static_cast<std::uint8_t>(leaf_level_);
    id.range_lo = of(w).leaf_lo;
    id.range_hi = of(w).leaf_hi;
    id.one_leaf_group = 1;
  }
  // The child of a spawn that threw never runs: its hold (order(), deal()) ends here. A child whose order()
  // threw (open_group's reservation) was given no node: its own is still the cleared one. A group's first
  // spawn that threw leaves the group unopened (its count back at 0: wait() never reaches the engine), so
  // what its open did is undone here as its join would (a review: the task kept the group's node and level
  // for the rest of its life, and one node leaked a run). A dealt child not shipped leaves no ship pending.
  void spawn_failed(engine::worker& w, detail::task_frame& f) {
    per_worker& me = of(w);
    me.ship_pending = false;
    if (f.id.sched_node) release(me, static_cast<node*>(f.id.sched_node));
    detail::group_state& g = *f.group;
    if (g.spawned == 1 && (g.dist.mode == kSearchRoot || g.dist.mode == kDescended)) finish_group(w, g);
  }
  // A task with a node (the iteration's root, a search root, a child named at a dealt or descended group's
  // spawn, a plain child above the leaf level) activates and releases it out of line: most tasks have none
  // (order(): a plain leaf child), and with both inline every child-first child's end took longer than its
  // instructions say (fib at one worker 1.17-1.30x ws's time; 1.07-1.15x with this alone, 1.03x with
  // join_hooks_idle's mark marked likely too; issue #25, src/engine/README.md).
  void on_task_end(engine::worker& w, detail::task_id& id) {
    end_search(w, of(w));
    if (id.sched_node) [[unlikely]] end_with_node(w, id);
  }
  __attribute__((noinline)) void end_with_node(engine::worker& w, detail::task_id& id) {
    adws::activate_when_search_root_ends<node>(id, [&](node& n) { activated(n, nullptr); });
    release(of(w), static_cast<node*>(id.sched_node));  // named at its spawn (hold)
  }
  void on_wait(engine::worker& w, detail::group_state& g) {
    end_search(w, of(w));
    if (waits_behind(w, g)) [[unlikely]] mark_waiting_behind(w, g, true);
  }
  engine::worker* after_join(detail::group_state& g, const detail::task_id& task);
  void resumed_after_join(engine::worker& w, detail::group_state& g) {
    if (waits_behind(w, g)) [[unlikely]] mark_waiting_behind(w, g, false);
    if (g.dist.mode == kSearchRoot || g.dist.mode == kDescended) finish_group(w, g);
  }
  // The three act on a dealt or descended group, or end a search. A task on the leaf level whose range lies
  // inside one group opens neither (open_group: no level below, nothing to deal), and its range never
  // changes (only its own dealing or finish_group would change it), so its groups are plain; and no search
  // runs at their joins: the child's end ended any (on_task_end), and a running task starts one again only
  // by finishing a group it dealt or descended with (finish_group), which such a task never has.
  // A task its spawn marked (one_leaf_group: order()) is such a task without the range's floor (20
  // instructions a join in fib, 4 with the mark: callgrind, the lines of this function).
  bool join_hooks_idle(engine::worker& w, const detail::group_state& g) const {
    const detail::task_id& t = *w.current_task;
    if (g.dist.mode != kPlain) return false;
    if (t.one_leaf_group) [[likely]] return true;
    return is_leaf(t.tier) && !adws::multi({t.range_lo, t.range_hi});
  }
  void hand_over(engine::worker& from, engine::worker& target, engine::fiber* f);
  void iteration_begin();
  void iteration_end();
  std::string notes() const;

  const topo::memory_tree& tree() const { return tree_; }
  // Distribution nodes the workers' pools hold, in use or free (tests: memory stays flat over runs).
  std::size_t nodes_allocated() const {
    std::size_t n = 0;
    for (const per_worker& me : ws_) n += me.nodes.allocated();
    return n;
  }

  // Distribution-tree node: a range of groups at one level (adws_nodes.hpp: shared fields, generations).
  struct node : adws::node_links<node> {
    std::atomic<unsigned> level{0};  // written with release (node_links)
    // Set while the task that opened this node waits for one of its groups opened before it (a join out of
    // the order of the opens; mark_waiting_behind): the heads it moved down may serve the levels above.
    std::atomic<bool> opener_waits_behind{false};
    // The entry of the group this node's task moved down from, before it (group_queues::entry): a task that
    // moved the same head down from there earlier and has not joined (it waits behind an older group
    // meanwhile, mark_waiting_behind). Put back at the join. The opener's only.
    // Atomic: a join out of order unlinks another task's node from the chain (unlink_entry).
    std::atomic<node*> entry_before{nullptr};
    // Where that entry is: the level the task moved down from (kNoEntry: it did not move) and the worker that
    // opened the node, whose group's entry it is. The opener's only.
    static constexpr unsigned kNoEntry = ~0u;
    unsigned entry_level = kNoEntry;
    unsigned opener_worker = 0;
    // Its group, and every task that names it as its node from its spawn: a child dealt from it, and a plain
    // child of a task whose innermost node it was (order(): its groups' nodes hang under it). A task may join
    // an older group before a plain one opened after it, whose children named the older group's node: given
    // back at the join, it was reused while they ran, and a chain walk of theirs (splice_out_of_order,
    // mark_waiting_behind) read another task's node, whose stale group led back to it: a cycle that the
    // walk followed for ever (an outside-user campaign: the simulated platform's watchdog named the task).
    // Given back by the last of them (release). Not the root's (root_ is never given back).
    std::atomic<std::uint32_t> holders{0};
  };

 private:
  // A group's migration queue. A leaf group has one worker, and no other ever represents it: there it is
  // adws's, whose owner end is a split deque (queues/migration_queue.hpp), where continuations of migrated
  // work and the inline join's halves go without a lock. An inner group may be represented by several of
  // its workers at once (pull_heads moves every worker of the groups it aggregates): a locked deque.
  class group_migq {
   public:
    explicit group_migq(bool leaf) : leaf_(leaf) {}
    void push_top(detail::job* j) { leaf_ ? split_.push_top(j) : locked_.push_top(j); }
    void push_bottom(detail::job* j) { leaf_ ? split_.push_bottom(j) : locked_.push_bottom(j); }
    detail::job* pop_bottom() { return leaf_ ? split_.pop_bottom() : locked_.pop_bottom(); }
    detail::job* steal_top() { return leaf_ ? split_.steal_top() : locked_.steal_top(); }
    bool empty_hint() const { return leaf_ ? split_.empty_hint() : locked_.empty_hint(); }
    bool stealable_hint() const { return leaf_ ? split_.stealable_hint() : !locked_.empty_hint(); }
    void ask_to_share() {
      if (leaf_) split_.ask_to_share();
    }
    queues::migration_queue<detail::job>& split() { return split_; }  // a leaf group's, its worker's only

   private:
    bool leaf_;
    queues::migration_queue<detail::job> split_;
    queues::locked_deque<detail::job> locked_;
  };
  // A memory group's queues (digest §3.4: everything a worker had in single-level ADWS). The local queue
  // of a leaf group is its worker's own deque; inner groups have few tasks and use a locked one.
  // As in adws (adws.hpp, per_worker): what a head reads at every pop and spawn shares the first line of
  // each struct (mailbox, use_mig and kept's size for a group; leaf, levels, iteration for a worker), the
  // queues thieves lock lie on lines of their own.
  struct alignas(64) group_queues {
    explicit group_queues(bool leaf) : migq(leaf) {}
    std::atomic<detail::job*> mailbox{nullptr};
    // The node of the task that moved down from this group, if any: the top of a chain through
    // node::entry_before of the tasks that moved its head down from here and have not joined.
    std::atomic<node*> entry{nullptr};
    bool use_mig = false;               // the head's, while it represents this group
    queues::locked_deque<detail::job> kept;  // given back by the engine: the head's alone, never stolen
    alignas(64) group_migq migq;
    alignas(64) queues::locked_deque<detail::job> localq;
  };
  struct alignas(64) per_worker {
    group_queues* leaf = nullptr;  // the queues of the worker's own (leaf-level) group
    unsigned leaf_group = 0;       // that group's index on the leaf level (group_of(w, leaf_level_))
    double leaf_lo = 0;            // ... as a range's coordinate
    double leaf_hi = 0.5;          // the end of a plain child's range there (order(), adopt_unnamed)
    std::uint64_t iteration = 0;
    adws::node_ref<node> current;  // with its generation: a climb from a node reused since ends there
    unsigned level = 0;       // the memory level this worker's own tasks moved it to (see level_now)
    unsigned home_level = 0;  // the topmost level whose group it heads
    // Set by another worker whose task aggregated this worker's groups into a deeper level: while it is
    // there, this worker represents that level (0: not pulled).
    std::atomic<unsigned> pulled{0};
    bool searching = false;
    bool ship_pending = false;  // order() decides, ship() delivers
    bool ship_search_root = false;
    unsigned ship_group = 0;
    // As in adws: set by a searcher whose node's range holds a group this worker heads while the worker
    // has no node yet (digest §9.8); taken at its next steal if still active (adws::take_pointed).
    std::atomic<node*> pointed{nullptr};
    adws::node_pool<node> nodes;
  };
  // The level a worker represents now: its own, or the deeper one a task aggregating its groups pulled it to.
  static unsigned level_now(const per_worker& me) {
    const unsigned p = me.pulled.load(std::memory_order_acquire);
    return p > me.level ? p : me.level;
  }
  // A task spawned with node n as its own (nullptr: none; the root's node is not counted).
  void* hold(void* n) {
    if (n && n != &root_) static_cast<node*>(n)->holders.fetch_add(1, std::memory_order_relaxed);
    return n;
  }
  // One holder of n is done with it (its group ended, or a task that named it from its spawn ended): the last
  // gives it back, to the pool of the worker it ends on (the acquire orders every holder's use before).
  // A held node is in use (generation 0 mod 4): one given back while a task names it is this policy's own
  // error, said at once rather than left to walk another group's chain.
  void release(per_worker& me, node* n) {
    if (n == &root_) return;
    if (n->gen.load(std::memory_order_relaxed) % 4 != 0) [[unlikely]] released_free_node(*n);
    if (n->holders.fetch_sub(1, std::memory_order_acq_rel) == 1) me.nodes.give_back(n);
  }
  [[noreturn]] static void released_free_node(const node& n);
  // A group's end: nothing of it is left to steal, so its node is inactive even while tasks still name it.
  void end_node(per_worker& me, node* n) {
    n->active.store(false, std::memory_order_release);
    release(me, n);
  }
  void pull_heads(unsigned level, unsigned first, unsigned last, unsigned from, unsigned to, unsigned opener);
  void unlink_entry(node* n);
  void activated(node& n, const engine::worker* searcher);

  per_worker& of(engine::worker& w) { return *static_cast<per_worker*>(w.policy_state); }  // set at construction
  const per_worker& of(const engine::worker& w) const { return *static_cast<const per_worker*>(w.policy_state); }
  unsigned owner_group(const detail::task_id& t) const;
  unsigned group_of(const engine::worker& w, unsigned level) const { return tree_.levels[level].group_of_worker[w.id]; }
  group_queues& queues_of(unsigned level, unsigned group) { return *q_[level][group]; }
  // A compare with a member: through tree_.depth() (a vector's size) it took 10 instructions a work-first
  // spawn in fib, with group_of's two indexings 6 more (the leaf's group is kept per worker instead).
  bool is_leaf(unsigned level) const { return level == leaf_level_; }
  void catch_up(engine::worker& w, per_worker& me);
  // The inline join's queue (abi.hpp, worker_abi::join_queue): the worker's deque while a join there is
  // what order() would make of it, a plain local spawn: the worker represents its own leaf group (where
  // its level is the leaf level, a pull cannot take it deeper), is not searching and has no job kept for
  // it, which its pops take first. Else none. Called wherever one of them changes. As in adws, the
  // migration queue's own end while it runs migrated work (use_mig, seed 003 Algorithm 4.3).
  void sync_join_queue(engine::worker& w, per_worker& me) {
    group_queues& q = *me.leaf;
    const bool plain = is_leaf(me.level) && !me.searching && q.kept.empty_hint();
    detail::name_join_queue(w, !plain ? nullptr : q.use_mig ? &q.migq.split().owner_end() : &w.deque);
    adws::shut_pops_while_behind(w, me.iteration, iteration_);  // as adws's
  }
  void start_root(engine::worker& w, detail::task_id& id);
  void open_group(engine::worker& w, detail::task_id& cur, detail::group_state& g);
  spawn_order deal(engine::worker& w, detail::task_frame& f, detail::task_id& cur, detail::group_state& g);
  void finish_group(engine::worker& w, detail::group_state& g);
  void end_search(engine::worker& w, per_worker& me) {
    if (me.searching) [[unlikely]] end_search_slow(w, me);
  }
  void end_search_slow(engine::worker& w, per_worker& me);
  void deliver(unsigned level, unsigned group, detail::job* j, bool search_root);
  void publish_continuation_slow(engine::worker& w, engine::fiber* parent);
  detail::job* pop_own_slow(engine::worker& w);
  // Own work of the other levels whose groups this worker heads (pop_own_slow, has_visible_work), taken
  // when the level it represents has nothing. A task's groups joined out of the order they opened leave
  // work where no worker looks (two outside-user campaigns; adws-ml hung in both):
  //  * below: a task that joins the group it descended with goes back up while a group it opened down there
  //    afterwards is still open (d(hint).run; p.run; d.wait; p.wait): that group's children and
  //    continuations lie in the lower level's queues, which no worker of the upper level looks at, and no
  //    thief reaches once the node is given back;
  //  * above: a task with groups opened at an upper level and a later one that descended (p; d(hint, huge).run
  //    x 2; p.run; d.wait; p.wait; or two plain groups a, b joined a first, then a third): the head
  //    represents the lower level until that group joins, while a task returned to it at the upper level
  //    waits in that level's mailbox.
  // Both are work of groups this worker heads, which no other worker serves meanwhile. Below, it takes any
  // of it when the level it represents has nothing. Above, only what was returned to the group (take_returned:
  // kept jobs, and a suspended task in the mailbox, handed back to its range's owner at a join); what stalled
  // there was such a task, whose join would restore this worker's level. Fresh work above waits for that,
  // so that what runs under one cache is still one task whose data fits it (taking it too broke
  // AdwsMl.DescentDealsEachCacheSizedPieceOverItsPackage and the capacity tests). A task may run on a worker
  // representing another level than its own: that changes where it runs, never what it computes.
  // Two exceptions take all of it above (free_above), each a stall of the group-order fuzzer
  // (tests/group_order_fuzz.cpp) before:
  //  * a task that joins, out of order, a group opened before the one it descended with: it waits at the
  //    upper level's join while the head it moved down still represents the lower level, and the older
  //    group's work may need that head at the upper level (a child dealt to its mailbox there; seed 1105:
  //    p; d(hint, huge); d.run x 2, the second dealing parallel_invokes; p.run; d.wait; p.wait). While it
  //    waits so, the head is free of it: mark_waiting_behind flags the nodes the task opened after the group
  //    it waits for, and up to the first level held by a task that is not waiting so, the head takes all
  //    of its own work there;
  //  * a worker that another task's aggregation pulled down: the levels from its own down to the pulled one
  //    are its own still (a continuation it pushed there between two pulls stalled; seed 2151).
  void mark_waiting_behind(engine::worker& w, detail::group_state& g, bool waiting);
  // Whether the join may be one out of order (mark_waiting_behind tells): the task has a node open other
  // than g's (a dealt or descended g), or than the one it had when g opened (a plain g).
  bool waits_behind(const engine::worker& w, const detail::group_state& g) const {
    const void* innermost = w.current_task->sched_node;
    if (g.dist.mode == kPlain) return innermost != g.dist.saved_node;
    if (g.dist.mode == kSearchRoot || g.dist.mode == kDescended)
      return innermost && static_cast<const node*>(innermost)->group != &g;
    return false;
  }
  unsigned free_above(engine::worker& w, unsigned level);
  detail::job* take_own(engine::worker& w, per_worker& me, unsigned level);
  detail::job* take_returned(group_queues& q);
  bool heads(const engine::worker& w, unsigned level) const {
    return tree_.levels[level].head[group_of(w, level)] == w.id;
  }
  void push_local(engine::worker& w, unsigned level, detail::job* j);
  detail::job* pop_local(engine::worker& w, unsigned level);
  detail::job* steal_local(unsigned level, unsigned group);
  adws::node_ref<node> steal_start(engine::worker& w, per_worker& me, unsigned level);

  topo::memory_tree tree_;
  unsigned leaf_level_;  // tree_.depth() - 1: the levels of single workers' groups
  std::vector<std::vector<std::unique_ptr<group_queues>>> q_;  // [level][group]
  std::vector<per_worker> ws_;
  node root_;  // DRAM's one group, one per runtime
  std::atomic<std::uint64_t> iteration_{0};
  steal_tuner steal_;
};

}  // namespace roost::sched
