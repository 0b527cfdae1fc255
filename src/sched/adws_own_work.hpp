// Algorithm 4.3 of seed 003 (digest §2.6), shared by adws and adws-ml: where a worker (adws) or the
// memory group it represents (adws-ml) takes its own next job. The one-slot mailbox first: a search-root
// task, run before anything else and searched from its sender's node. Then the queue the worker is working
// from: the migration queue while it runs migrated work (use_mig), else its local queue, switching to the
// other when one runs dry, so that descendants of migrated work stay in the migration queue.
#pragma once
#include <atomic>
#include <cstdint>

#include "roost/detail/task_frame.hpp"
#include "sched/adws_nodes.hpp"

namespace roost::sched::adws {

// A suspended task handed back to its range's owner (adws-ml's hand_over) waits in a group's mailbox with the
// pointer's bit 0 set (every job is at least 8-aligned): a head that looks for such work only (adws-ml's
// take_returned and has_visible_work) tells it from a dealt search root by the pointer, never by reading a
// job it does not own yet. Another worker that represents the group may take it meanwhile (a fiber resumed
// off its opener: finish_group), and run and free it; a kind read then raced with its reuse, and a fresh
// frame delivered again at the same address passed for a returned task (a review).
inline detail::job* mark_returned(detail::job* j) {
  return reinterpret_cast<detail::job*>(reinterpret_cast<std::uintptr_t>(j) | 1u);
}
inline bool is_marked_returned(const detail::job* m) { return (reinterpret_cast<std::uintptr_t>(m) & 1u) != 0; }
inline detail::job* unmarked(detail::job* m) {
  return reinterpret_cast<detail::job*>(reinterpret_cast<std::uintptr_t>(m) & ~std::uintptr_t{1});
}

// A worker behind the iteration (its catch_up has not seen the new one yet) must not take its deque's top job
// through the pop window: its pop_own's slow path catches up first, so that the job runs in the new
// iteration's state, not in the old one's search state, node and level. Instead of a test of the iteration at
// every pop (5 instructions of a work-first spawn in fib), the window is shut while a worker is behind:
//  * iteration_begin shuts every worker's deque's pops after the new iteration's number is stored, and
//  * the owner's sync_join_queue, which opens them again (name_join_queue; nothing else clears the bit, and a
//    re-arm, which stores the floor and then reads the bits, closes it again), then reads the number and
//    shuts them where it is behind.
// Both the number's store and load and the pops' bits are seq-cst: either the owner's read sees the new
// number, or iteration_begin's shut comes after the owner's open. Another thread's shut keeps the owner's own
// bits (ws_deque::shut_pops_until_named). A worker that caught up just before the shut landed keeps its pops
// shut until its next sync_join_queue: its next own pop's slow path, or the steal that gives it a job, each
// of which names the join queue again.
template <class Engine>
void shut_pops_of_new_iteration(Engine& eng) {
  for (unsigned i = 0; i < eng.num_workers(); ++i) eng.worker_at(i).deque.shut_pops_until_named();
}
template <class Worker>
void shut_pops_while_behind(Worker& w, std::uint64_t caught_up_with, const std::atomic<std::uint64_t>& iteration) {
  if (caught_up_with != iteration.load(std::memory_order_seq_cst)) [[unlikely]] w.deque.shut_pops_until_named();
}

// take_mailbox(): the mailbox's job, if any. A search-root task taken from the mailbox is searched from its
// sender's node: `searching` and `current` (the taker's node) are set to it. The mailbox need not be the
// caller's own (a worker leaving a stopping runtime takes what was dealt to one that left: the policies'
// take_left_behind).
//
// catch_up(): the caller's "forget the previous iteration's state", which it ran before this, too. Work
// dealt to this worker may belong to an iteration that began after that look (the worker lost its CPU in
// between): catching up again after taking it, whose acquire makes the dealer's iteration visible, keeps
// the state set here from being dropped as the old iteration's at the next pop (adws::take_pointed).
template <class Node, class CatchUp>
detail::job* take_mailbox(std::atomic<detail::job*>& mailbox, bool& use_mig, bool& searching,
                          node_ref<Node>& current, CatchUp&& catch_up) {
  if (mailbox.load(std::memory_order_relaxed) == nullptr) return nullptr;
  detail::job* t = unmarked(mailbox.exchange(nullptr, std::memory_order_acq_rel));
  if (!t) return nullptr;
  catch_up();
  use_mig = false;
  if (t->is_fresh()) {
    searching = true;
    current = static_cast<Node*>(static_cast<detail::task_frame*>(t)->id.sched_node);
  }
  return t;
}

// take_own_work(): seed 003 Algorithm 4.3 on the worker's own mailbox, migration queue and local queue; pop_local()
// is the local queue's owner pop.
template <class Node, class MigrationQueue, class PopLocal, class CatchUp>
detail::job* take_own_work(std::atomic<detail::job*>& mailbox, MigrationQueue& migq, bool& use_mig,
                           PopLocal&& pop_local, bool& searching, node_ref<Node>& current, CatchUp&& catch_up) {
  if (detail::job* t = take_mailbox(mailbox, use_mig, searching, current, catch_up)) return t;
  // Work from a queue sets no node and no search, only which queue the worker works from (use_mig), so a
  // stale catch-up there misplaces continuations at worst; the migration queue's is still caught up after.
  detail::job* t = nullptr;
  if (use_mig) {
    t = migq.pop_bottom();
    if (!t) {
      t = pop_local();
      use_mig = false;
    }
  } else {
    t = pop_local();
    if (!t && (t = migq.pop_bottom())) use_mig = true;
  }
  if (t && use_mig) {
    catch_up();
    use_mig = true;
  }
  return t;
}

}  // namespace roost::sched::adws
