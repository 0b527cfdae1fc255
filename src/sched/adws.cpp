// The out-of-line part of adws: the search (dealing a group's children over its range), the own-work pop
// with the mailbox and the migration queue, stealing inside the distribution tree, node bookkeeping.
#include "sched/adws.hpp"

#include "sched/adws_own_work.hpp"

namespace roost::sched {

using adws::range;

namespace {
range range_of(const detail::task_id& id) { return {id.range_lo, id.range_hi}; }
void set_range(detail::task_id& id, range r) {
  id.range_lo = r.lo;
  id.range_hi = r.hi;
}
}  // namespace

adws_policy::adws_policy(engine::engine_base& e)
    : policy_base(e), ws_(e.num_workers()), steal_(e.config().adws_steal), workers_(e.num_workers()) {
  root_.lo = 0;
  root_.hi = workers_;
  for (unsigned i = 0; i < workers_; ++i) {
    ws_[i].migq.on_share(&engine::idle_state::notify_on_share, &e.idle());
    e.worker_at(i).policy_state = &ws_[i];
    e.worker_at(i).run_first = &ws_[i].mailbox;
    // The join's window on the migration queue's own end closes as the deque's does (abi.hpp, join_window):
    // for a search-root task in the mailbox (deliver) and for a path that is not inline (sync_inline_pops).
    ws_[i].migq.owner_end().watch_run_first(&ws_[i].mailbox);
    e.worker_at(i).other_join_window = &ws_[i].migq.owner_end();
    sync_join_queue(e.worker_at(i), ws_[i]);
  }
}

void adws_policy::iteration_begin() {
  steal_.iteration_begin();
  root_.active.store(false, std::memory_order_release);
  iteration_.fetch_add(1, std::memory_order_seq_cst);
  adws::shut_pops_of_new_iteration(eng_);
}

void adws_policy::iteration_end() { steal_.iteration_end(); }

// A worker forgets the previous iteration's search state the first time it looks in a new one.
void adws_policy::catch_up(engine::worker& w, per_worker& me) {
  std::uint64_t it = iteration_.load(std::memory_order_acquire);
  if (me.iteration != it) {
    me.iteration = it;
    me.current = nullptr;
    me.searching = false;
    me.use_mig = false;  // `pointed` is kept: it may already be this iteration's (adws::take_pointed)
    sync_join_queue(w, me);
  }
}

void adws_policy::end_search_slow(engine::worker& w, per_worker& me, bool activate) {
  me.searching = false;
  sync_join_queue(w, me);
  node* n = me.current.get();
  if (!n || !activate) return;
  n->active.store(true, std::memory_order_release);  // rule 4
  activated(*n, &w);
}

// A group opened during a search that is not dealt (no total work hint, or its task's range lies inside one
// worker) runs its children work-first here, and they deal nothing either (their range [0, 0) lies inside
// one worker). The search has nothing left to deal before its task's next join, which is where it would
// end (a child's end ends it, too): it ends here instead, so that its node is active while the group runs. Otherwise no other worker could take the rest
// of the task (its continuation, in this worker's queue) until the group's first child ended: an iteration
// whose root opened such a group ran on one worker, and hung when that child waited for its continuation's
// work (spun, or blocked). The reference implementation has no search outside a root group at all (digest
// §2.10, "Root task": ordinary random work stealing there).
void adws_policy::end_search_at_plain_group(engine::worker& w, per_worker& me, detail::group_state& g) {
  g.dist.mode = kPlain;
  end_search(w, me);
}

// A node just became active (rule 4 above, rule 6 at a search-root task's end). Thieves may take from the
// workers of its range now, but a deque's pushes stay private until someone asks (ws_deque.hpp), and a
// thief kept out by the inactive node never asked: a continuation pushed just before a long leaf stayed
// hidden for the whole leaf (worker 1 idle for a 5 s leaf of worker 0 in AdwsPointing). Ask on the
// thieves' behalf: each owner shares at its next push or pop. At a search's end, also point the other
// workers of the range at the node: those with no node yet (they received nothing, or only pieces
// migrated without a node) could never steal until an ancestor activates.
void adws_policy::activated(node& n, const engine::worker* searcher) {
  range r = n.get();
  for (unsigned v = adws::first(r), last = std::min(adws::last(r), workers_ - 1); v <= last; ++v) {
    eng_.worker_at(v).deque.ask_to_share();
    ws_[v].migq.ask_to_share();
    if (searcher && v != searcher->id) ws_[v].pointed.store(&n, std::memory_order_release);
  }
}

void adws_policy::start_root(engine::worker& w, detail::task_id& id) {  // the whole line, from worker 0
  per_worker& me = of(w);
  catch_up(w, me);
  set_range(id, {0, static_cast<double>(workers_)});
  id.sched_node = &root_;
  me.current = &root_;
  me.searching = workers_ > 1;
  sync_join_queue(w, me);
}

// Called during a search for a group with a total work hint. The group is dealt when its task owns a
// multi-worker range; it then gets a node, and its range and node are saved for the return at wait. A
// plain group never changes its task's range, so nothing is saved for it.
void adws_policy::open_group(engine::worker& w, detail::task_id& cur, detail::group_state& g) {
  range r = range_of(cur);
  if (!(adws::multi(r) && adws::first(r) == w.id)) {  // nothing to deal: the search ends here too
    end_search_at_plain_group(w, of(w), g);
    return;
  }
  per_worker& me = of(w);
  g.dist.mode = kPlain;  // until it is open: a reservation that throws leaves nothing to undo (spawn_failed)
  me.nodes.reserve_one(static_cast<node*>(cur.sched_node));  // may throw: before anything changes
  g.dist.saved_lo = cur.range_lo;
  g.dist.saved_hi = cur.range_hi;
  g.dist.saved_node = cur.sched_node;
  g.dist.mode = kSearchRoot;
  g.dist.remaining = g.total_work;
  node* n = me.nodes.take(r, static_cast<node*>(cur.sched_node), [&](node& fresh) {
    fresh.opener = &cur;
    fresh.group = &g;
  });
  cur.sched_node = n;
  me.current = n;
}

spawn_order adws_policy::deal(engine::worker& w, detail::task_frame& f, detail::task_id& cur,
                              detail::group_state& g) {
  adws::split_result s = adws::split(range_of(cur), g.dist.remaining, f.work_hint >= 0 ? f.work_hint : 1.0);
  g.dist.remaining = s.remaining;
  f.id.sched_node = cur.sched_node;
  set_range(f.id, s.child);
  set_range(cur, s.continuation);
  unsigned target = adws::first(s.child);
  if (target == w.id) return spawn_order::child_first;  // our own region: work-first, search goes on inside
  per_worker& me = of(w);
  me.ship_pending = true;
  me.ship_to = target;
  me.ship_search_root = adws::multi(s.child);
  return spawn_order::parent_first;
}

void adws_policy::deliver(engine::worker& target, detail::job* j, bool search_root) {
  per_worker& t = of(target);
  j->stamp_fp_state();  // the sender's floating-point state, which the receiver starts it with (fp_control.hpp)
  detail::job* expected = nullptr;
  // Theorem 2: the slot is free. Should that ever not hold, the migration queue is still correct.
  // Seq-cst, and then the target's inline pops shut until it takes the job: a two-way join's pop lets the
  // engine join, which runs the job first (ws_deque::close_pop_floor, against the owner's rearm).
  if (search_root && t.mailbox.compare_exchange_strong(expected, j, std::memory_order_seq_cst)) {
    target.deque.close_pop_floor();
    t.migq.owner_end().close_pop_floor();  // the join's window there too (abi.hpp, join_window)
  } else {
    t.migq.push_top(j);
  }
  eng_.idle().notify_all_new_work();  // the target may be asleep: wake it for sure
}

bool adws_policy::ship(engine::worker& w, detail::task_frame* f) {
  per_worker& me = of(w);
  if (!me.ship_pending) return false;
  me.ship_pending = false;
  deliver(eng_.worker_at(me.ship_to), f, me.ship_search_root);
  return true;
}

void adws_policy::hand_over(engine::worker&, engine::worker& target, engine::fiber* f) {
  deliver(target, f, true);
}

// Algorithm 4.3 (adws_own_work.hpp) on this worker's mailbox, migration queue and deque.
detail::job* adws_policy::pop_own_slow(engine::worker& w) {
  per_worker& me = of(w);
  catch_up(w, me);
  detail::job* j = adws::take_own_work(me.mailbox, me.migq, me.use_mig, [&] { return w.deque.pop(); },
                                       me.searching, me.current, [&] { catch_up(w, me); });
  sync_join_queue(w, me);
  // A job taken from the mailbox left the deque's pop window shut (deliver), which pop_own reads: open it
  // again unless a reason to keep it shut remains (ws_deque::rearm_pop_floor).
  if (w.deque.pop_window_shut()) w.deque.rearm_pop_floor();
  return j;
}

// Before a worker sleeps (after it announced itself): its own mailbox and migration queue, then, while it
// may steal, what it could take from the others' migration queues, whose owners it asks to share
// otherwise, as engine_base::any_work_visible does for the local queues.
bool adws_policy::has_visible_work(engine::worker& w) {
  per_worker& me = of(w);
  if (me.mailbox.load(std::memory_order_acquire) != nullptr || !me.migq.empty_hint()) return true;
  if (!steal_.stealing()) return false;
  for (per_worker& v : ws_)
    if (v.migq.stealable_hint()) return true;
  for (per_worker& v : ws_) v.migq.ask_to_share();
  return false;
}

detail::job* adws_policy::steal(engine::worker& w) {
  if (!steal_.stealing()) return nullptr;
  per_worker& me = of(w);
  catch_up(w, me);
  if (!me.current)  // no node of its own this iteration: a searcher may have pointed it at one
    if (adws::node_ref<node> p = adws::take_pointed(me.pointed, [&] { catch_up(w, me); }, [&](const node& n) {
          const range r{n.lo.load(std::memory_order_acquire), n.hi.load(std::memory_order_acquire)};
          return adws::first(r) <= w.id && w.id <= adws::last(r);
        }))
      me.current = p;
  // Climb to the topmost active node (lazy deactivation). Where a node of this worker's chain was reused
  // since (adws_nodes.hpp, node_links), the worker drops its node and climbs from the root, as one without
  // a node does.
  adws::node_ref<node> top;
  range r;
  const auto anywhere = [](const node&) { return true; };
  bool cut = false;
  if (!adws::topmost_active(me.current ? me.current : adws::node_ref<node>(&root_), anywhere, top, r, &cut)) {
    if (!cut || !me.current) return nullptr;
    me.current = {};
    if (!adws::topmost_active(adws::node_ref<node>(&root_), anywhere, top, r)) return nullptr;
  }
  if (!(top == me.current)) me.current = top;
  unsigned a = adws::first(r), b = std::min(adws::last(r), workers_ - 1);
  if (a >= b) return nullptr;
  // One attempt, at a worker of the range other than this one (seed 003 Algorithm 4.3, digest §2.6): the
  // scheduling loop looks at its own work between attempts. A round of a whole range of attempts made a
  // worker late for a task dealt to it meanwhile (a mailbox search root, a node a searcher pointed it at),
  // which others then stole: once failed attempts cost virtual time, adws on heat2d 2048 on 64 simulated
  // workers kept 33% of its L3 misses off ws's instead of 97%.
  const unsigned v = adws::random_other(w.next_random(), a, b, w.id);
  // The owner's migration queue holds work of an enclosing group, the last worker's local queue work of
  // groups further left (unless the range ends on its boundary): not ours to take (§4.2.4).
  detail::job* t = nullptr;
  if (v != a) t = ws_[v].migq.steal_top();
  if (!t && (v != b || adws::ends_on_boundary(r))) t = eng_.worker_at(v).deque.steal();
  engine::observe_steal(w, v, t != nullptr);
  // A task of an iteration begun since the look above: run it in that one's state. And the join queue named
  // again: a catch-up before iteration_begin shut this deque's pops left them shut (shut_pops_while_behind),
  // and the stolen task's joins would all take the slow way until the worker's next own pop.
  if (t) {
    catch_up(w, me);
    sync_join_queue(w, me);
  }
  return t;
}

// Only at a stop: worker 0 leaving at a run's end has looked at its own mailbox and queues (pop_own), and
// no task of the run is left anywhere else. Another worker's mailbox is taken as its owner would take it (a
// search root's search ends at its first group, which open_group opens only on its range's first worker:
// that group runs plain here); its migration queue is stolen from, the thieves' end, since its owner
// may still be leaving. Whoever deals a task at a stop comes here after it: none is left behind.
detail::job* adws_policy::take_left_behind(engine::worker& w) {
  if (!eng_.stopping()) return nullptr;
  per_worker& me = of(w);
  for (per_worker& v : ws_) {
    if (detail::job* t = adws::take_mailbox(v.mailbox, me.use_mig, me.searching, me.current, [&] { catch_up(w, me); })) {
      sync_join_queue(w, me);
      return t;
    }
    if (detail::job* t = v.migq.steal_top()) return t;
  }
  return nullptr;
}

void adws_policy::finish_dealt_group(engine::worker& w, detail::group_state& g) {
  detail::task_id& cur = *w.current_task;
  per_worker& me = of(w);
  catch_up(w, me);
  if (node* spliced = adws::splice_out_of_order<node>(cur, g, [](auto& to, const auto& from) {
        to.saved_lo = from.saved_lo;
        to.saved_hi = from.saved_hi;
        to.saved_node = from.saved_node;
      })) {
    me.nodes.give_back(spliced);  // a later group of the task is still open: the task stays where it is
    return;
  }
  if (cur.sched_node) me.nodes.give_back(static_cast<node*>(cur.sched_node));
  me.current = static_cast<node*>(g.dist.saved_node);  // back to the parent, which stays inactive
  range saved{g.dist.saved_lo, g.dist.saved_hi};
  me.searching = adws::multi(saved) && adws::first(saved) == w.id;  // the next group maps the same way
  sync_join_queue(w, me);
  cur.range_lo = g.dist.saved_lo;  // restored bit-exactly
  cur.range_hi = g.dist.saved_hi;
  cur.sched_node = g.dist.saved_node;
}

std::string adws_policy::notes() const {
  return "work hints deal groups over the workers; " + steal_.describe();
}

}  // namespace roost::sched
