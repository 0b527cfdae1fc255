// The out-of-line part of adws-ml: level descent at group open, dealing over the groups of a level, the
// own-work pop of the group a worker represents, stealing inside a level's distribution nodes, and the
// return to the owner that restores the level (digest §3.5, Algorithm 5.3).
#include "sched/adws_ml.hpp"

#include "platform/platform.hpp"
#include "platform/say_once.hpp"
#include "sched/adws_own_work.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace roost::sched {

using adws::range;

namespace {
range range_of(const detail::task_id& id) { return {id.range_lo, id.range_hi}; }
void set_range(detail::task_id& id, range r, unsigned level) {
  id.range_lo = r.lo;
  id.range_hi = r.hi;
  id.tier = static_cast<std::uint8_t>(level);
}
bool whole_groups(range r) { return adws::floor_coord(r.lo) == r.lo && adws::floor_coord(r.hi) == r.hi; }
}  // namespace

adws_ml_policy::adws_ml_policy(engine::engine_base& e)
    : policy_base(e),
      tree_(topo::build_memory_tree(e.topology(), e.placement(), e.num_workers())),
      leaf_level_(tree_.depth() - 1),
      ws_(e.num_workers()),
      steal_(e.config().adws_steal) {
  q_.resize(tree_.depth());
  for (unsigned l = 0; l < tree_.depth(); ++l)
    for (unsigned g = 0; g < tree_.levels[l].groups; ++g) {
      q_[l].push_back(std::make_unique<group_queues>(is_leaf(l)));
      if (is_leaf(l)) q_[l].back()->migq.split().on_share(&engine::idle_state::notify_on_share, &e.idle());
    }
  // Each worker starts at the topmost level whose group it heads (digest §3.4: W0 at DRAM).
  for (unsigned w = 0; w < e.num_workers(); ++w) {
    unsigned l = 0;
    while (tree_.levels[l].head[tree_.levels[l].group_of_worker[w]] != w) ++l;
    ws_[w].home_level = ws_[w].level = l;
    ws_[w].leaf_group = tree_.levels[leaf_level_].group_of_worker[w];
    ws_[w].leaf_lo = ws_[w].leaf_group;
    ws_[w].leaf_hi = ws_[w].leaf_lo + 0.5;
    ws_[w].leaf = &queues_of(leaf_level_, ws_[w].leaf_group);
    e.worker_at(w).policy_state = &ws_[w];
    e.worker_at(w).run_first = &ws_[w].leaf->mailbox;
    // The join's window on the leaf group's migration queue (its own end) closes as the deque's does, as in
    // adws (abi.hpp, join_window).
    ws_[w].leaf->migq.split().owner_end().watch_run_first(&ws_[w].leaf->mailbox);
    e.worker_at(w).other_join_window = &ws_[w].leaf->migq.split().owner_end();
    sync_join_queue(e.worker_at(w), ws_[w]);
  }
  root_.lo = 0;
  root_.hi = 1;
  root_.level = 0;
  // A topology whose caches it cannot use makes adws-ml adws over the workers: said on stderr, once per
  // reason (it was said only under ROOST_VERBOSE, and a run of 6 workers on 8 PUs lost every cache level
  // without a word: an outside-user campaign).
  if (!tree_.note.empty())
    platform::say_each_once({"adws-ml: " + tree_.note + "; it deals over the workers alone, as adws does. Give it "
                             "a worker count that fills the caches evenly (ROOST_WORKERS), or a topology whose "
                             "caches of one level hold equal shares of the workers"});
}

void adws_ml_policy::iteration_begin() {
  steal_.iteration_begin();
  // No task of the last run is left: nothing may hold a worker down or name a node as an entry any more
  // (each is undone at its join; this keeps a miss from outliving the run it happened in).
  for (per_worker& me : ws_) me.pulled.store(0, std::memory_order_relaxed);
  for (auto& level : q_)
    for (auto& q : level) q->entry.store(nullptr, std::memory_order_relaxed);
  root_.active.store(false, std::memory_order_release);
  iteration_.fetch_add(1, std::memory_order_seq_cst);
  adws::shut_pops_of_new_iteration(eng_);
}

void adws_ml_policy::iteration_end() { steal_.iteration_end(); }

// A worker forgets the previous iteration's search state the first time it looks in a new one.
void adws_ml_policy::catch_up(engine::worker& w, per_worker& me) {
  std::uint64_t it = iteration_.load(std::memory_order_acquire);
  if (me.iteration == it) return;
  me.iteration = it;
  me.current = nullptr;
  me.searching = false;  // `pointed` is kept: it may already be this iteration's (adws::take_pointed)
  me.level = me.home_level;
  for (unsigned l = me.home_level; l < tree_.depth(); ++l) queues_of(l, group_of(w, l)).use_mig = false;
  sync_join_queue(w, me);
}

void adws_ml_policy::end_search_slow(engine::worker& w, per_worker& me) {
  me.searching = false;
  sync_join_queue(w, me);
  node* n = me.current.get();
  if (!n) return;
  n->active.store(true, std::memory_order_release);  // rule 4
  activated(*n, &w);
}

// As adws's activated(), over the heads of the node's groups at the node's level: ask them to share their
// deques' private pushes, which thieves the inactive node kept out never asked for, and at a search's end
// point them at the node.
void adws_ml_policy::activated(node& n, const engine::worker* searcher) {
  const auto& lv = tree_.levels[n.level.load(std::memory_order_relaxed)];
  const range r = n.get();
  for (unsigned g = adws::first(r), last = std::min(adws::last(r), lv.groups - 1); g <= last; ++g) {
    eng_.worker_at(lv.head[g]).deque.ask_to_share();
    if (searcher && lv.head[g] != searcher->id) ws_[lv.head[g]].pointed.store(&n, std::memory_order_release);
  }
}

void adws_ml_policy::start_root(engine::worker& w, detail::task_id& id) {  // DRAM's one group, on worker 0
  per_worker& me = of(w);
  catch_up(w, me);
  set_range(id, {0, 1}, 0);
  id.sched_node = &root_;
  me.current = &root_;
  me.level = 0;
  me.searching = false;
  sync_join_queue(w, me);
}

void adws_ml_policy::open_group(engine::worker& w, detail::task_id& cur, detail::group_state& g) {
  per_worker& me = of(w);
  g.dist.mode = kPlain;  // until it is open: a reservation that throws leaves nothing to undo (spawn_failed)
  const unsigned level = cur.tier;
  const range r = range_of(cur);
  // Level descent (digest §3.3): a task alone in its group moves to the children of the group this
  // worker represents (Algorithm 5.3's myMG: a stolen task moves into its thief's group) when its data fits
  // that group; a range of whole groups that starts with this worker's moves down while the data fits their
  // summed capacity. Only while this worker heads the first group of the new range: the task returns to
  // that group's head at the join, which restores its own level from before the open (a thief that was not
  // its group's head descended, and the head it returned to took the thief's level: a stall, fuzzer seed
  // 2103). A task on another worker is dealt or run where it is, at its level. (A join out of order may
  // still return the task to another head: finish_group undoes the open through its opener then.)
  const double size = g.data_bytes >= 0 ? g.data_bytes : 0.0;  // no hint: fits everywhere
  unsigned to = level;
  range nr = r;
  unsigned agg_level = 0;  // the level where aggregation began (its groups' heads are pulled down)
  range agg_range{};
  while (to + 1 < tree_.depth()) {
    const topo::memory_level& lv = tree_.levels[to];
    const double k = lv.fanout;
    const double mine = group_of(w, to);
    range next;
    bool aggregates = false;
    if (!adws::multi(nr)) {
      if (!(size <= lv.group_capacity)) break;
      next = {mine * k, (mine + 1) * k};
    } else if (whole_groups(nr) && nr.lo == mine) {
      if (!(size <= (nr.hi - nr.lo) * lv.group_capacity)) break;
      aggregates = agg_level == 0;
      next = {nr.lo * k, nr.hi * k};
    } else {
      break;  // in the middle of a search: dealt at this level, its pieces descend on their own
    }
    if (tree_.levels[to + 1].head[adws::first(next)] != w.id) break;
    if (aggregates) {
      // Only over heads nobody else pulled (nested aggregation is not supported: stop here instead).
      bool free = true;
      for (unsigned v = 0; v < ws_.size() && free; ++v)
        if (v != w.id && tree_.levels[to].group_of_worker[v] >= adws::first(nr) &&
            tree_.levels[to].group_of_worker[v] <= adws::last(nr))
          free = ws_[v].pulled.load(std::memory_order_acquire) == 0;
      if (!free) break;
      agg_level = to;
      agg_range = nr;
    }
    nr = next;
    ++to;
  }
  const bool moved = to != level;
  // Dealt by the head of the range's first group only, for the same reason.
  const bool dealt = g.total_work > 0 && adws::multi(nr) && (moved || me.searching) &&
                     tree_.levels[to].head[std::min(adws::first(nr), tree_.levels[to].groups - 1)] == w.id;
  if (!moved && !dealt) {
    g.dist.mode = kPlain;
    g.dist.saved_node = cur.sched_node;  // the task's innermost node at the open (mark_waiting_behind)
    // A group that is not dealt ends a search, as in adws (adws.cpp, end_search_at_plain_group): its children
    // deal nothing, and the node must be active while they run, or no idle worker could take this task's
    // continuation until the first of them ended (it hung when that child waited for it).
    end_search(w, me);
    return;
  }
  me.nodes.reserve_one(static_cast<node*>(cur.sched_node));  // may throw: before anything changes
  g.dist.saved_lo = cur.range_lo;
  g.dist.saved_hi = cur.range_hi;
  g.dist.saved_level = static_cast<std::uint8_t>(level);
  g.dist.saved_worker_level = static_cast<std::uint8_t>(me.level);
  g.dist.saved_node = cur.sched_node;
  g.dist.opener_worker = w.id;
  node* n = me.nodes.take(nr, static_cast<node*>(cur.sched_node),
                          [to, &cur, &g, &w](node& fresh) {
                            fresh.level.store(to, std::memory_order_release);
                            fresh.opener_waits_behind.store(false, std::memory_order_relaxed);
                            fresh.entry_before.store(nullptr, std::memory_order_relaxed);
                            fresh.entry_level = node::kNoEntry;
                            fresh.opener_worker = w.id;
                            fresh.opener = &cur;
                            fresh.group = &g;
                            fresh.holders.store(1, std::memory_order_relaxed);  // the group's
                          });
  g.dist.pulled_level = 0;
  if (agg_level != 0) {  // level 0 has one group: aggregation never starts there
    g.dist.pulled_level = static_cast<std::uint8_t>(agg_level);
    g.dist.pulled_first = adws::first(agg_range);
    g.dist.pulled_last = adws::last(agg_range);
    pull_heads(agg_level, g.dist.pulled_first, g.dist.pulled_last, 0, to, w.id);
  }
  cur.sched_node = n;
  set_range(cur, nr, to);
  me.current = n;
  me.level = to;
  if (moved) {  // where the idle workers of this group find the new level's first node; put back at the join
    n->entry_level = level;
    n->entry_before.store(queues_of(level, group_of(w, level)).entry.exchange(n, std::memory_order_acq_rel),
                          std::memory_order_release);
  }
  if (dealt) {
    g.dist.mode = kSearchRoot;
    g.dist.remaining = g.total_work;
    me.searching = true;
  } else {  // moved down but not dealt: open for stealing inside the new level at once
    g.dist.mode = kDescended;
    me.searching = false;
    n->active.store(true, std::memory_order_release);
  }
  sync_join_queue(w, me);
}

spawn_order adws_ml_policy::deal(engine::worker& w, detail::task_frame& f, detail::task_id& cur,
                                 detail::group_state& g) {
  adws::split_result s = adws::split(range_of(cur), g.dist.remaining, f.work_hint >= 0 ? f.work_hint : 1.0);
  g.dist.remaining = s.remaining;
  f.id.sched_node = hold(cur.sched_node);
  set_range(f.id, s.child, cur.tier);
  set_range(cur, s.continuation, cur.tier);
  const unsigned target = std::min(adws::first(s.child), tree_.levels[cur.tier].groups - 1);
  if (target == group_of(w, cur.tier)) return spawn_order::child_first;
  per_worker& me = of(w);
  me.ship_pending = true;
  me.ship_group = target;
  me.ship_search_root = adws::multi(s.child);
  return spawn_order::parent_first;
}

void adws_ml_policy::deliver(unsigned level, unsigned group, detail::job* j, bool search_root) {
  group_queues& t = queues_of(level, group);
  j->stamp_fp_state();  // the sender's floating-point state, which the receiver starts it with (fp_control.hpp)
  detail::job* expected = nullptr;
  // Theorem 2 (per group): the slot is free. Should that ever not hold, the migration queue is correct too.
  // A leaf group's mailbox is its workers' run-first slot: seq-cst, and then their inline pops shut until one
  // takes the job, as in adws (ws_deque::close_pop_floor).
  // A suspended task goes in marked (adws_own_work.hpp, mark_returned): its kind is read here, by its owner.
  detail::job* const in_slot = j->is_fresh() ? j : adws::mark_returned(j);
  if (search_root && t.mailbox.compare_exchange_strong(expected, in_slot, std::memory_order_seq_cst)) {
    if (level == leaf_level_) {
      for (unsigned w = 0; w < eng_.num_workers(); ++w)
        if (ws_[w].leaf == &t) eng_.worker_at(w).deque.close_pop_floor();
      t.migq.split().owner_end().close_pop_floor();  // the join's window there too (abi.hpp, join_window)
    }
  } else {
    t.migq.push_top(j);
  }
  eng_.idle().notify_all_new_work();  // the group's head may be asleep
}

bool adws_ml_policy::ship(engine::worker& w, detail::task_frame* f) {
  per_worker& me = of(w);
  if (!me.ship_pending) return false;
  me.ship_pending = false;
  deliver(f->id.tier, me.ship_group, f, me.ship_search_root);
  return true;
}

// The group a task of a dealt or moved group returns to at the join: the first group of its range, at its
// level (a continuation keeps the lower part), headed by the worker that opened the group, which
// represents that level until the task restores it (or, joined out of order, by the opener of the task's
// innermost group still open).
unsigned adws_ml_policy::owner_group(const detail::task_id& t) const {
  return std::min(adws::first(range_of(t)), tree_.levels[t.tier].groups - 1);
}

engine::worker* adws_ml_policy::after_join(detail::group_state& g, const detail::task_id& task) {
  if (g.dist.mode != kSearchRoot && g.dist.mode != kDescended) return nullptr;
  return &eng_.worker_at(tree_.levels[task.tier].head[owner_group(task)]);
}

void adws_ml_policy::hand_over(engine::worker&, engine::worker&, engine::fiber* f) {
  deliver(f->task->tier, owner_group(*f->task), f, true);
}

void adws_ml_policy::finish_group(engine::worker& w, detail::group_state& g) {
  detail::task_id& cur = *w.current_task;
  per_worker& me = of(w);
  catch_up(w, me);
  // What the group's open did to others is undone at its join whatever the order, through its opener, which
  // the task may have left since (a join out of order returns it to the head of a later group's range): the
  // entry of the opener's group on the level it descended from, the heads it pulled down to its node's level
  // (the opener never among them).
  const auto undo_open = [&](node* n) {
    unlink_entry(n);
    if (g.dist.pulled_level != 0)
      pull_heads(g.dist.pulled_level, g.dist.pulled_first, g.dist.pulled_last, n->level.load(std::memory_order_relaxed), 0,
                 g.dist.opener_worker);
    end_node(me, n);
  };
  if (node* spliced = adws::splice_out_of_order<node>(cur, g, [](auto& to, const auto& from) {
        to.saved_lo = from.saved_lo;
        to.saved_hi = from.saved_hi;
        to.saved_node = from.saved_node;
        to.saved_level = from.saved_level;
        // The level a worker goes back to at the later group's join: its own from before that group when
        // another worker opened this one (that worker's level is its own: free_above frees it).
        if (to.opener_worker == from.opener_worker) to.saved_worker_level = from.saved_worker_level;
      })) {
    undo_open(spliced);  // a later group of the task is still open: the task stays where it is
    return;
  }
  if (g.dist.pulled_level != 0)
    pull_heads(g.dist.pulled_level, g.dist.pulled_first, g.dist.pulled_last, cur.tier, 0, g.dist.opener_worker);
  if (auto* n = static_cast<node*>(cur.sched_node)) {
    unlink_entry(n);
    end_node(me, n);
  }
  me.current = static_cast<node*>(g.dist.saved_node);  // back to the parent, which stays inactive
  const range saved{g.dist.saved_lo, g.dist.saved_hi};
  me.level = g.dist.saved_worker_level;
  me.searching = adws::multi(saved) && tree_.levels[g.dist.saved_level].head[adws::first(saved)] == w.id;
  cur.range_lo = g.dist.saved_lo;  // restored bit-exactly, with its level
  cur.range_hi = g.dist.saved_hi;
  cur.tier = g.dist.saved_level;
  cur.sched_node = g.dist.saved_node;
  sync_join_queue(w, me);
}

// The workers of groups first..last at `level`, other than the opener of the aggregating group, from pulled
// level `from` to `to` (0: not pulled). A pulled worker may be asleep: wake everyone, it must look at its new
// level.
void adws_ml_policy::pull_heads(unsigned level, unsigned first, unsigned last, unsigned from, unsigned to,
                                unsigned opener) {
  for (unsigned v = 0; v < ws_.size(); ++v) {
    const unsigned grp = tree_.levels[level].group_of_worker[v];
    if (grp < first || grp > last || v == opener) continue;
    unsigned expected = from;
    ws_[v].pulled.compare_exchange_strong(expected, to, std::memory_order_acq_rel);
  }
  eng_.idle().notify_all_new_work();
}

// Takes node n out of the chain of entries of its opener's group on the level its task moved down from: the
// top (the common case, a join in order) or, where a later task moved the same head down from there and has
// not joined, from under that task's node. Nothing for a node whose task did not move.
void adws_ml_policy::unlink_entry(node* n) {
  if (n->entry_level == node::kNoEntry) return;
  const unsigned level = n->entry_level;
  std::atomic<node*>& top = queues_of(level, tree_.levels[level].group_of_worker[n->opener_worker]).entry;
  node* expected = n;
  node* below = n->entry_before.load(std::memory_order_acquire);
  // The levels the entry held down are their head's own again (free_above), and what waits there its own
  // to take: a head asleep must look again (every worker asleep with a continuation left in such a level's
  // local queue, AdwsMl.OutOfOrderJoinsOnSharedL2sComplete natively about 1 run in 10-100).
  if (top.compare_exchange_strong(expected, below, std::memory_order_acq_rel) || !expected) {
    eng_.idle().notify_all_new_work();
    return;
  }
  // A bounded walk: a chain is as long as the descents open at once through one head.
  for (node* x = expected; x; x = x->entry_before.load(std::memory_order_acquire)) {
    node* under = n;
    if (x->entry_before.compare_exchange_strong(under, below, std::memory_order_acq_rel)) {
      eng_.idle().notify_all_new_work();
      return;
    }
  }
}

void adws_ml_policy::push_local(engine::worker& w, unsigned level, detail::job* j) {
  if (is_leaf(level)) w.deque.push(j);
  else queues_of(level, group_of(w, level)).localq.push_bottom(j);
}

detail::job* adws_ml_policy::pop_local(engine::worker& w, unsigned level) {
  return is_leaf(level) ? w.deque.pop() : queues_of(level, group_of(w, level)).localq.pop_bottom();
}

detail::job* adws_ml_policy::steal_local(unsigned level, unsigned group) {
  if (is_leaf(level)) return eng_.worker_at(tree_.levels[level].head[group]).deque.steal();
  return queues_of(level, group).localq.steal_top();
}

// The continuation lies in the group of the level this worker represents, or of the task's own level where
// that is deeper. A worker held down by a task's descent may run an older task returned to it, whose own
// descent moves the worker up a level meanwhile; the held task, resumed there, then runs a level below the
// worker's. Its continuation pushed at the worker's level stayed there when the older task's join took the
// worker back down, where the levels above are held by the descent of that very task (an outside-user
// campaign: adws-ml without stealing hung). A worker heads its group at every level below its own topmost
// one (a group's head is its lowest-ranked worker), and takes the work of the levels below the one it
// represents (pop_own_slow).
void adws_ml_policy::publish_continuation_slow(engine::worker& w, engine::fiber* parent) {
  const unsigned level = std::max<unsigned>(level_now(of(w)), parent->task->tier);
  group_queues& q = queues_of(level, group_of(w, level));
  if (is_leaf(level)) {  // the inline path takes the deque only while the worker represents its leaf group
    if (q.use_mig) q.migq.split().push_bottom(parent);  // migrated work: a split queue, which wakes
    else w.deque.push(parent);                          // sleepers when it shares, as the deque does
    return;
  }
  if (q.use_mig) q.migq.push_bottom(parent);
  else push_local(w, level, parent);
  // Every sleeper, not one: the one woken may be a worker that cannot take it (neither the group's head
  // nor a thief of this level), which sleeps again while the head sleeps on; every worker asleep, the run
  // hung (AdwsMl.OutOfOrderJoinsOnSharedL2sComplete natively, a continuation left in a level's localq).
  eng_.idle().notify_all_new_work();
}

// Algorithm 4.3 (adws_own_work.hpp) on the queues of the group this worker represents, then on those of
// the groups it heads below, then what was returned to those it heads above, or all of their own work
// down from free_above (adws_ml.hpp, take_own).
detail::job* adws_ml_policy::pop_own_slow(engine::worker& w) {
  per_worker& me = of(w);
  catch_up(w, me);
  const unsigned level = level_now(me);
  detail::job* t = take_own(w, me, level);
  for (unsigned l = level + 1; !t && l < tree_.depth(); ++l)
    if (heads(w, l)) t = take_own(w, me, l);
  const unsigned free_from = free_above(w, level);
  for (unsigned l = level; !t && l-- > 0;)
    if (heads(w, l)) t = l >= free_from ? take_own(w, me, l) : take_returned(queues_of(l, group_of(w, l)));
  sync_join_queue(w, me);
  // A job taken from the leaf group's mailbox left the deque's pop window shut (deliver), which pop_own
  // reads: open it again unless a reason to keep it shut remains (ws_deque::rearm_pop_floor).
  if (w.deque.pop_window_shut()) w.deque.rearm_pop_floor();
  return t;
}

// The nodes `task` opened after g (its chain of open nodes, innermost first, down to g's): flagged while it
// waits for g. A dealt or descended g has its node on the chain, and the flags are set only when it is
// found; a plain g's walk ends at the node the task had when g opened (waits_behind). Waking: a head asleep
// at the lower level must look above now.
void adws_ml_policy::mark_waiting_behind(engine::worker& w, detail::group_state& g, bool waiting) {
  const detail::task_id& cur = *w.current_task;
  // A plain group has no node: the task's innermost node when it opened (open_group, order) ends the walk.
  const bool plain = g.dist.mode == kPlain;
  const node* stop = plain ? static_cast<const node*>(g.dist.saved_node) : nullptr;
  const auto newer = [&](node* n) { return n && n != stop && n->opener == &cur && n->group != &g; };
  auto* innermost = static_cast<node*>(cur.sched_node);
  if (!newer(innermost)) return;  // g is the task's innermost open node, or opened after it: in order
  node* n = innermost;
  while (newer(n)) n = static_cast<node*>(n->group->dist.saved_node);
  if (!plain && (!n || n->group != &g || n->opener != &cur)) return;
  for (n = innermost; newer(n); n = static_cast<node*>(n->group->dist.saved_node))
    n->opener_waits_behind.store(waiting, std::memory_order_release);
  eng_.idle().notify_all_new_work();  // either way a head asleep below must look above again (free_above)
}

// The topmost level above `level` down to which this worker may take all of its own work (free_above <=
// l < level), and not only what was returned: the levels whose tasks that moved it down (the entries of
// the groups it heads there, innermost first) all wait behind an older group. `level` when none.
unsigned adws_ml_policy::free_above(engine::worker& w, unsigned level) {
  const per_worker& me = of(w);
  unsigned from = level;
  // Pulled down by a task aggregating its groups: the work of its own levels is still its alone, a task
  // may have pushed a continuation there between two pulls (fuzzer seed 2151: stranded while the task
  // that pulled it waited for that continuation's group).
  if (me.pulled.load(std::memory_order_acquire) == level && level > me.level) from = me.level;
  unsigned l = from;
  while (l > 0 && heads(w, l - 1)) {
    --l;
    const node* e = queues_of(l, group_of(w, l)).entry.load(std::memory_order_acquire);
    if (!e) continue;  // crossed by a descent from further up (aggregation): decided there
    if (!e->opener_waits_behind.load(std::memory_order_acquire)) {
      // Held down from l, at the level e's task moved to. A worker deeper than that was left there by a task
      // that joined elsewhere out of order, whose entry is gone: the levels from the held one down are its
      // own again. (A stolen continuation opened a plain group on the thief, which descended there, then
      // joined the older dealt group: its join returned it to the thief, and the opener's level stayed where
      // the dealt group had moved it; the task's parent's continuation, pushed at the level in between,
      // waited there for ever, an outside-user campaign.)
      const unsigned held = e->level.load(std::memory_order_relaxed);
      return held < from ? held : from;
    }
    from = l;
  }
  // No task holds it below the levels it heads: all of them are its own again. A worker is below its
  // topmost level without an entry above only when the task that moved it left it (a join out of order
  // returned the task to another head, which undid the descent): its level stays until the next iteration.
  return l;
}

detail::job* adws_ml_policy::take_returned(group_queues& q) {
  if (detail::job* t = q.kept.empty_hint() ? nullptr : q.kept.pop_bottom()) return t;
  detail::job* m = q.mailbox.load(std::memory_order_acquire);
  if (adws::is_marked_returned(m) && q.mailbox.compare_exchange_strong(m, nullptr, std::memory_order_acq_rel))
    return adws::unmarked(m);
  return nullptr;
}

detail::job* adws_ml_policy::take_own(engine::worker& w, per_worker& me, unsigned level) {
  group_queues& q = queues_of(level, group_of(w, level));
  if (detail::job* t = q.kept.empty_hint() ? nullptr : q.kept.pop_bottom()) return t;
  return adws::take_own_work(q.mailbox, q.migq, q.use_mig, [&] { return pop_local(w, level); }, me.searching,
                             me.current, [&] { catch_up(w, me); });
}

bool adws_ml_policy::has_visible_work(engine::worker& w) {
  const unsigned l = level_now(of(w));
  // What pop_own_slow would take: its level's own work, the work of the groups it heads below, and what was
  // returned to the groups it heads above (all of it down from free_above).
  const unsigned free_from = free_above(w, l);
  for (unsigned other = 0; other < tree_.depth(); ++other) {
    if (other != l && !heads(w, other)) continue;
    const group_queues& mine = *q_[other][group_of(w, other)];
    const detail::job* m = mine.mailbox.load(std::memory_order_acquire);  // tested, never read (mark_returned)
    if (!mine.kept.empty_hint()) return true;
    if (other < free_from) {
      if (adws::is_marked_returned(m)) return true;
    } else if (m || !mine.migq.empty_hint() || (other != l && !mine.localq.empty_hint())) {
      return true;
    }
  }
  for (const auto& q : q_[l])  // what a thief of this level could take (leaf deques: the engine looks)
    if (q->migq.stealable_hint() || !q->localq.empty_hint()) return true;
  // Nothing stealable: ask the owners of the leaf groups' split migration queues to share, as the engine
  // asks the deques' owners (engine_base::any_work_visible); the one that serves it wakes this worker.
  for (const auto& q : q_[l]) q->migq.ask_to_share();
  return false;
}

// Where a worker's climb starts: its own node, else the node of the innermost task that moved down into
// this worker's level from one of its groups.
adws::node_ref<adws_ml_policy::node> adws_ml_policy::steal_start(engine::worker& w, per_worker& me, unsigned level) {
  if (me.current) {
    const bool here = me.current->level.load(std::memory_order_acquire) == level;
    if (!me.current.still_valid()) me.current = {};  // reused since (adws_nodes.hpp, node_links)
    else if (here) return me.current;
  }
  for (unsigned a = level; a-- > 0;)
    if (node* e = queues_of(a, group_of(w, a)).entry.load(std::memory_order_acquire)) {
      // Still the entry after its generation was read: not unlinked, freed and reused in between.
      const adws::node_ref<node> ref(e);
      if (queues_of(a, group_of(w, a)).entry.load(std::memory_order_acquire) == e &&
          e->level.load(std::memory_order_acquire) == level && ref.still_valid())
        return ref;
    }
  return level == 0 ? adws::node_ref<node>(&root_) : adws::node_ref<node>{};
}

// Only at a stop: worker 0 leaving at a run's end has looked at its own work (pop_own), and no task of the run
// is left anywhere else. Every group's queues, at every level, from the ends that any worker may take from:
// a mailbox's job (a search root runs plain here: which worker serves which level no longer matters, only
// that it runs), `kept`, and the thieves' ends of the migration and local queues, whose owners may still be
// leaving. Whoever deals or returns a task at a stop comes here after it: none is left behind.
detail::job* adws_ml_policy::take_left_behind(engine::worker&) {
  if (!eng_.stopping()) return nullptr;
  for (auto& level : q_)
    for (auto& group : level) {
      group_queues& q = *group;
      if (q.mailbox.load(std::memory_order_relaxed) != nullptr)
        if (detail::job* t = adws::unmarked(q.mailbox.exchange(nullptr, std::memory_order_acq_rel))) return t;
      if (detail::job* t = q.kept.empty_hint() ? nullptr : q.kept.pop_bottom()) return t;
      if (detail::job* t = q.migq.steal_top()) return t;
      if (detail::job* t = q.localq.steal_top()) return t;
    }
  return nullptr;
}

detail::job* adws_ml_policy::steal(engine::worker& w) {
  if (!steal_.stealing()) return nullptr;
  per_worker& me = of(w);
  catch_up(w, me);
  if (!me.current)  // no node of its own this iteration: a searcher may have pointed it at one
    if (adws::node_ref<node> p = adws::take_pointed(me.pointed, [&] { catch_up(w, me); }, [&](const node& n) {
          const unsigned l = n.level.load(std::memory_order_acquire);
          const range r{n.lo.load(std::memory_order_acquire), n.hi.load(std::memory_order_acquire)};
          return l < tree_.depth() && adws::first(r) <= group_of(w, l) && group_of(w, l) <= adws::last(r);
        }))
      me.current = p;
  const unsigned level = level_now(me);  // after any catch-up that taking the pointer made
  // The topmost active node of this level above the start, each hop checked (a node reused since ends
  // the climb: above it lies another group's chain, another package's cores at a leaf level).
  // A chain cut by a reuse from this worker's own node: it drops the node and starts where one without a
  // node does (steal_start's entries).
  adws::node_ref<node> top;
  range r;
  const auto at_level = [level](const node& n) { return n.level.load(std::memory_order_acquire) == level; };
  const adws::node_ref<node> start = steal_start(w, me, level);
  bool cut = false;
  if (!adws::topmost_active(start, at_level, top, r, &cut)) {
    if (!cut || !me.current || !(start == me.current)) return nullptr;
    me.current = {};
    if (!adws::topmost_active(steal_start(w, me, level), at_level, top, r)) return nullptr;
  }
  if (!(top == me.current)) me.current = top;
  const unsigned groups = tree_.levels[level].groups;
  const unsigned a = adws::first(r), b = std::min(adws::last(r), groups - 1), mine = group_of(w, level);
  if (a >= b) return nullptr;
  // One attempt, at a group of the range other than this worker's (as adws::steal, Algorithm 4.3).
  const unsigned v = adws::random_other(w.next_random(), a, b, mine);
  // As in adws (§4.2.4): not the range owner's migration queue, not the last group's local queue.
  detail::job* t = nullptr;
  if (v != a) t = queues_of(level, v).migq.steal_top();
  if (!t && (v != b || adws::ends_on_boundary(r))) t = steal_local(level, v);
  engine::observe_steal(w, tree_.levels[level].head[v], t != nullptr);
  // A task of an iteration begun since the look above: run it in that one's state, or a group it opens
  // would descend from the old iteration's level, which the next catch-up resets under it. The join queue
  // named again, as adws's steal does (a catch-up before iteration_begin shut the pops left them shut).
  if (t) {
    catch_up(w, me);
    sync_join_queue(w, me);
  }
  return t;
}

void adws_ml_policy::released_free_node(const node& n) {
  char why[160];
  std::snprintf(why, sizeof why, "a task or group released a distribution node already given back (level %u, generation %u)",
                n.level.load(std::memory_order_relaxed), n.gen.load(std::memory_order_relaxed));
  platform::os::fatal("roost: adws-ml: internal error", why);
}

std::string adws_ml_policy::notes() const {
  return "memory groups: " + tree_.summary() + "; " + steal_.describe();
}

}  // namespace roost::sched
