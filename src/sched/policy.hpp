// The scheduler seam. A policy is a class plugged into engine<P> (engine/engine.hpp) at compile time and
// chosen by name at start-up (registry.cpp). It answers the questions of DESIGN §5:
//
//   on spawn     inline_help_first                every spawn is help-first onto the own deque: inline it
//                inline_join                      a two-way join may run inline (push one half, run the other)
//                inline_join_queue                the same, onto the queue the policy names now (name_join_queue)
//                order(w, frame)                  child_first (work-first) or parent_first (help-first)
//                plain_spawns,                    optional: order()'s plain child-first case, side-effect free
//                order_plain(w, g, f, opens)      where it says no, for the engine's plain spawn (engine.hpp)
//                place(w, frame)                  where a parent-first child goes (default: own deque)
//                publish_continuation(w, fiber)   where a work-first parent's continuation goes
//                ship(w, frame) -> bool           called for parent-first spawns first: deliver the child
//                                                 elsewhere (true) or let place() queue it (false)
//                uses_declarations                place() reads the child's data declaration, if any, in
//                                                 w.spawn_decl (roost/data.hpp; numa's Algorithm 1)
//   own work     pop_own(w)                       the next job of this worker's own (default: its deque)
//                put_back(w, job)                 a job pop_own gave that the engine runs later instead
//                has_visible_work(w)               anything for w outside the deques (checked before sleeping)
//                steals_from_any_deque            steal may take a shared task from any deque: a worker sleeps
//                                                 only when none holds one; false: has_visible_work alone says
//   find work    steal(w)                         one round of looking elsewhere: victims, order, limits
//   tasks        on_task_start(w, id), on_task_end(w, id)
//                on_child_start(w, id)            optional: called instead of on_task_start for a task that
//                                                 has a parent (every one but a root), where the policy has it
//                child_first_hooks_idle           a child-first child's start and its parent's resume after its
//                                                 local end need no hook: the engine skips both
//                adopt_unnamed(w, id)             a half an inline join pushed unnamed runs as a task on w:
//                                                 the engine named it (task_frame.hpp); the policy may
//                                                 give it scheduling state of its own
//                on_task_resume(w, id)            a task continues on w after something else ran there
//                                                 (its child ended, or a thief or a waker resumed it)
//                on_task_suspend(w, id)           a task leaves w (a join that must wait, a migration)
//                before_remote_end(w)             a task that ended on w is about to tell its group's owner,
//                                                 elsewhere, that it ended (join::complete_remote)
//                stamp_own_private(w, state)      before w's thread takes another task's floating-point state:
//                                                 every queue of w's own whose private part may hold frames
//                                                 (default: its deque and the join queue it names)
//   join         on_wait(w, group)                before a task joins a group
//                after_join(group, task)          after it: the worker the task must move to first (or null);
//                  -> worker*                     from the group and the task alone (no worker is given): the
//                                                 engine asks on whichever worker ends the group's last child
//                resumed_after_join(w, group)     then, on the worker it ended up on
//                join_hooks_idle(w, group)        whether the three will do nothing at the group's join
//                                                 (a policy that keeps policy_base's needs no answer)
//   iterations   iteration_begin(), iteration_end()   around each root run()
//                request_reprofile()              runtime::reprofile(): learn again from the next iteration
//   reporting    notes()                          one line for runtime::describe()
//
// policy_base gives the classic defaults; a policy overrides by hiding (no virtual calls: engine<P> calls
// P's members directly). Policies reach threads, time and sleep only through the engine (platform layer).
#pragma once
#include <cstdint>
#include <string>

#include "engine/engine_base.hpp"
#include "engine/observe.hpp"
#include "engine/worker.hpp"

// Forces a seam default inline: the calls on every spawn's and join's path must cost no call.
#define ROOST_SEAM __attribute__((always_inline))

namespace roost::sched {

enum class spawn_order : std::uint8_t { child_first, parent_first };

class policy_base {
 public:
  // True only for a policy whose every spawn is parent-first onto the spawner's own deque: then user code
  // does the common spawn and join inline (roost/detail/abi.hpp) and order()/place() see only the rest.
  static constexpr bool inline_help_first = false;
  // True for a policy that would schedule the two halves of parallel_invoke(f, g) (and of parallel_for's and
  // parallel_reduce's splits) exactly as the inline two-way join does (roost/detail/fork_join2.hpp): one
  // half pushed as a fresh task onto the spawner's own deque, where its thieves and its own pop find it, the
  // other run at once. For a work-first policy that is its own order: the first half is the child and runs
  // at once, the second is the rest of the parent up to the join, which a thief may take, and it is taken as
  // a closure instead of as a stack (no switch, no suspended fiber). Implied by inline_help_first.
  static constexpr bool inline_join = false;
  // The same for a policy that schedules a join so only in some states, and onto a queue that depends on its
  // state: it names that queue with detail::name_join_queue (nullptr while it must see the join; abi.hpp) at
  // every change of its state, and keeps run_first, whose filler shuts the worker's inline pops
  // (ws_deque::close_pop_floor). Its workers take ws's join path, whose windows its state opens and shuts.
  static constexpr bool inline_join_queue = false;
  // True for a policy that reads a spawn's data declaration (roost/data.hpp) in place(): the engine then
  // hands it over in worker::spawn_decl for the spawn's duration. Such a policy spawns parent-first only.
  static constexpr bool uses_declarations = false;
  // False for a policy that never reads a task's scheduling state (task_id's range, node and tier: ADWS's
  // and cats's): the engine's spawn then clears only the trace serial, not the rest (four stores a spawn).
  static constexpr bool reads_task_sched_state = true;
  // True for a policy whose order() writes every scheduling field of the child (range, node, tier,
  // one_leaf_group) on each of its paths, before anything in it can throw: the engine's spawn then clears
  // only the trace serial, and order() stores each field once (adws-ml: its leaf spawn overwrote the range
  // and tier the engine had just cleared, #25).
  static constexpr bool order_writes_sched_state = false;
  // True for a policy whose on_task_start (or on_child_start) does nothing for a child-first child, which starts
  // on the worker its parent was running on a moment before, and whose on_task_resume does nothing for that
  // parent when the child ended locally (the parent goes on where the child ended): the engine's work-first
  // path then skips the start hook, and the resume hook after a child called on a stack (a local end that
  // switches back, the TSan build's and off x86-64, resumes through resumed() as any switch does, which
  // calls it: harmless). cab: parent and child both name the worker's deque as their join queue (#25).
  static constexpr bool child_first_hooks_idle = false;
  // True for a policy with order_plain(w, g, f, opens) noexcept (g: the child's group, f.group; opens: this
  // spawn is the group's first since its join, g.spawned is 1): where a spawn is a child-first one that
  // order() would make without a call out of line or anything that throws, it does what order() would and
  // returns true; elsewhere it changes nothing and returns false. The engine's spawn then takes a path of its
  // own while no hook is installed and a free stack is at hand (engine.hpp, spawn_plain), and calls order()
  // only where order_plain said false. ws, hws, adws, adws-ml, cab, cats.
  static constexpr bool plain_spawns = false;
  // False for a policy whose steal may not take what some deques hold (numa: another node's tasks below its
  // threshold): a worker would never sleep while such a task waits, finding "work" it may not take, so its
  // has_visible_work alone says whether there is work for it (the deques it may take from included).
  static constexpr bool steals_from_any_deque = true;
  // The policy itself (`using runtime_text_spawn = ws_policy;`) where its spawn path is audited for
  // preemption by address: while the spawner's fiber runs in it, it calls nothing outside the runtime text
  // but what engine<P>::spawn_in_runtime_text lists (engine.hpp; tests/runtime_text/check.sh checks the
  // compiled code). Its engine unit then defines that entry point (ROOST_ENGINE_RUNTIME_TEXT_SPAWN), which
  // preemption uses instead of the counted one. A type, not a flag, so that a policy derived from an
  // audited one (whose hooks may call anything) is not audited by inheritance.
  using runtime_text_spawn = void;

  explicit policy_base(engine::engine_base& e) : eng_(e) {}

  ROOST_SEAM void place(engine::worker& w, detail::task_frame* f) {
    w.deque.push(f);  // the deque wakes a sleeper when it shares the task
  }
  ROOST_SEAM void publish_continuation(engine::worker& w, engine::fiber* parent) {
    w.deque.push(parent);
  }
  bool ship(engine::worker&, detail::task_frame*) { return false; }
  // The window first: open, it gives what pop() would (the private part's top job), with one test fewer.
  ROOST_SEAM detail::job* pop_own(engine::worker& w) { return w.deque.pop_window_first(); }
  ROOST_SEAM void put_back(engine::worker& w, detail::job* j) { w.deque.push(j); }
  bool has_visible_work(engine::worker&) const { return false; }
  // Where w must leave its scheduling loop (worker 0 once the root ended, every worker once the engine
  // stops: engine.hpp, find_work), after its own queues (pop_own) and its preempted tasks: a job it is to run
  // before it leaves from a queue of the policy that pop_own does not reach, or nullptr. Only children of a
  // group that escaped its creator are left anywhere then (docs/user-guide.md, "Ownership"): a runtime runs
  // those in worker 0's queues before run() returns, and those in its workers' queues before its
  // destruction returns; a queue that belongs to no worker (cab's socket pools, numa's node inboxes) is one
  // of them here, and so is a queue others fill of a worker that left (adws's and adws-ml's mailboxes and
  // migration queues).
  detail::job* take_left_behind(engine::worker&) { return nullptr; }
  void on_task_start(engine::worker&, detail::task_id&) {}
  void adopt_unnamed(engine::worker&, detail::task_id&) {}
  void on_task_end(engine::worker&, detail::task_id&) {}
  // A spawn that threw after order() spawned nothing (engine.hpp, spawn_body): the child never runs, and a
  // policy undoes what order() did for it alone (adws-ml: the child's hold on its node).
  void spawn_failed(engine::worker&, detail::task_frame&) {}
  void on_task_resume(engine::worker&, detail::task_id&) {}
  void on_task_suspend(engine::worker&, detail::task_id&) {}
  void before_remote_end(engine::worker&) {}
  // The frames still private in w's own queues get `state`, the one they were pushed under (engine.hpp,
  // apply_fp_state): its deque, and the queue its inline joins push onto now. A policy with another queue
  // whose private part outlives the naming of its join queue (adws's migration queue) stamps it too.
  void stamp_own_private(engine::worker& w, std::uint64_t state) {
    w.deque.stamp_private(state);
    detail::ws_deque<detail::job>* q = w.join_queue.load(std::memory_order_relaxed);
    if (q && q != &w.deque) q->stamp_private(state);
  }
  void on_wait(engine::worker&, detail::group_state&) {}
  engine::worker* after_join(detail::group_state&, const detail::task_id&) { return nullptr; }
  void resumed_after_join(engine::worker&, detail::group_state&) {}
  // For a policy with join hooks of its own, asked on w, where g's owner runs, as a child of g ends
  // locally: true if the three will do nothing at g's join, whatever the owner does until then (the engine
  // then joins children that ended so by the count alone, without the hooks).
  bool join_hooks_idle(engine::worker&, const detail::group_state&) const { return false; }
  // Only policies whose after_join() returns workers need to say how a moving task is delivered.
  void hand_over(engine::worker&, engine::worker&, engine::fiber*) {}
  void iteration_begin() {}
  void iteration_end() {}
  void request_reprofile() {}
  std::string notes() const { return {}; }

 protected:
  // One steal attempt from a uniformly random worker other than w among `count` candidates given by
  // candidate(i); returns nullptr on failure. None once w must leave its scheduling loop (worker 0 after the
  // root ended, engine find_work): it went on with its round of P-1 attempts first, and a short run of 1,024
  // simulated workers took 120 us of virtual time under ws, 4.7 under numa (an outside-user campaign).
  // None either once the engine stops (no run is left): every worker was in a round at shutdown, and
  // destroying a simulated runtime of 4,096 workers took the host 36-53 s for those P^2 attempts.
  template <class Candidate>
  detail::job* steal_one_of(engine::worker& w, unsigned count, Candidate&& candidate) {
    if (count == 0 || w.should_leave() || eng_.stopping()) [[unlikely]] return nullptr;
    engine::worker& v = eng_.worker_at(candidate(static_cast<unsigned>(w.next_random() % count)));
    if (&v == &w) return nullptr;
    detail::job* j = v.deque.steal();
    engine::observe_steal(w, v.id, j != nullptr);
    return j;
  }

  engine::engine_base& eng_;
};

// Random victim selection (seed 000's and 003's baselines): a round is up to P-1 attempts.
class random_victims : public policy_base {
 public:
  using policy_base::policy_base;
  detail::job* steal(engine::worker& w) {
    const unsigned n = eng_.num_workers();
    for (unsigned i = 1; i < n; ++i)
      if (detail::job* j = steal_one_of(w, n, [](unsigned k) { return k; })) return j;
    return nullptr;
  }
};

}  // namespace roost::sched
