// The engine, specialised per scheduling policy: spawn, join and the scheduling loop. Every policy call is a
// direct (inlinable) call on `P`; the only indirect call per spawn is the one from user code into
// engine<P>::spawn through the worker's entry point (detail::worker_abi::engine_spawn).
//
// Execution model (cheetah's and Rayon's ideas, in a library): every task runs on a fiber (ult/).
//  * child-first spawn (work-first, "Cilk-a"): the parent switches to a pooled fiber that runs the child;
//    the child's first act is to push the parent's continuation on the deque, where thieves can take it.
//    When the child ends it pops: if the parent is still there nobody stole it, and the child switches back
//    (a "local" completion). Otherwise the child completes remotely (join.hpp) and goes looking for work.
//  * parent-first spawn (help-first): the child's frame is copied into the worker's frame pool and pushed;
//    the parent goes on. At wait the parent pops its own children back and runs them inline.
//  * a wait that must block switches to a pooled fiber that runs the scheduling loop; the last remote child
//    switches straight back to the waiter.
// Fiber switches carry a switch_msg; the resumed side completes the switch (switch_msg.hpp).
#pragma once
#include <algorithm>
#include <exception>
#include <string>
#include <type_traits>

#include "engine/critical_windows.hpp"
#include "engine/engine_base.hpp"
#include "engine/join.hpp"
#include "engine/observe.hpp"
#include "engine/switch_msg.hpp"
#include "ult/call_on_stack.hpp"
#include "sched/policy.hpp"

namespace roost::engine {

template <class P>
class engine final : public engine_base {
  using job = detail::job;
  using frame = detail::task_frame;
  using group = detail::group_state;
  // Whether P keeps policy_base's join hooks, which do nothing (ws, hws, cab, numa; not adws, adws-ml or
  // cats): then a join of children that all ended locally is the count's alone (spawn_child_first).
  static constexpr bool kJoinHooksDoNothing =
      std::is_same_v<decltype(&P::on_wait), decltype(&sched::policy_base::on_wait)> &&
      std::is_same_v<decltype(&P::after_join), decltype(&sched::policy_base::after_join)> &&
      std::is_same_v<decltype(&P::resumed_after_join), decltype(&sched::policy_base::resumed_after_join)>;
  // The same, or hooks that the policy says will do nothing at g's join (join_hooks_idle: cats outside its
  // profiled iteration, adws for a task that deals nothing, adws-ml for a leaf task inside one group),
  // asked on `now`, the worker g's owner runs on now.
  __attribute__((always_inline)) static bool joins_by_count(worker& now, group& g) {
    if constexpr (kJoinHooksDoNothing) {
      (void)now;
      (void)g;
      return true;
    } else {
      return of(now).policy_.join_hooks_idle(now, g);
    }
  }

 public:
  engine(const resolved_options& cfg, std::shared_ptr<const topo::topology> tp, topo::placement pl)
      : engine_base(cfg, std::move(tp), std::move(pl)), policy_(*this) {
    // A declaration is handed over for the spawn's duration on the spawner's worker (worker::spawn_decl):
    // such a policy spawns parent-first, so the spawner is still on that worker when the spawn returns.
    uses_declarations_ = P::uses_declarations;
  }

  P& policy() { return policy_; }

  // Parent-first into a pooled frame of its own (f lies on the spawner's stack), named as the spawner's
  // child, where the policy's own pops take a job back (put_back: the spawner's deque, where thieves reach
  // it too; adws-ml's group's `kept` queue, which its head alone takes); its debt is on g's balance before
  // anyone can run it. g's counters are its owner's alone, and the policy's spawn order is not asked: it
  // would open g, which is the owner's to open (adws's dealing, which never sees the child's hint: only an
  // observer does). Nor its help-first placement: cab's inter-socket pool, which only a head core with no
  // subtree running takes from, left the child of a waiting owner in a subtree there for ever.
  void spawn_foreign(worker& w, group& g, frame& f) override {
    detail::no_preempt_scope np(w.current_fiber);
    const std::size_t bytes = f.ops->size, align = f.ops->align;
    void* mem = w.frames.alloc(bytes, align);
    frame* h;
    try {
      h = f.ops->relocate(&f, mem);
    } catch (...) {  // the closure's move threw: it is still in f, which its spawner discards
      w.frames.free(mem, bytes, align);
      throw;
    }
    f.ops = nullptr;  // consumed (task_frame.hpp, discard)
    h->set_kind(job::kind::fresh_foreign);
    h->group = &g;
    h->work_hint = f.work_hint;
    name_foreign(w, g, *h);
    // The scheduling state of a task the policy never placed, as for an inline join's half: cats and cab
    // keep it and its children intra-socket (cats's tier 0 made them inter-socket, spawned into the socket's
    // pool, which no head core took from while the subtree that waits for them ran: a review's hang),
    // adws-ml at the leaf level of this worker's group.
    policy_.adopt_unnamed(w, h->id);
    detail::mark_foreign_children(g);
    join::owe_foreign_child(g);
    try {
      policy_.put_back(w, h);
      idle().notify_new_work();
    } catch (...) {  // no queue took it: nothing was spawned
      (void)join::complete_remote(g);
      h->ops->destroy(h);
      w.frames.free(h, bytes, align);
      throw;
    }
  }
  void iteration_begin() override { policy_.iteration_begin(); }
  void iteration_end() override { policy_.iteration_end(); }
  void request_reprofile() override { policy_.request_reprofile(); }
  std::string policy_notes() const override { return policy_.notes(); }

 protected:
  ult::entry_fn fiber_entry() const override { return &fiber_entry_fn; }
  void set_entry_points(worker& w) const override {
    // The inline two-way join (fork_join2.hpp) joins a half it popped back without the engine, so a policy
    // that allows it everywhere must have nothing to do at a join.
    static_assert(!P::inline_join || kJoinHooksDoNothing, "a policy with inline_join keeps policy_base's join hooks");
    w.engine_spawn = &spawn;
    w.engine_wait = &wait;
    // The path itself is set by engine_base::start (and again whenever hooks come or go).
    // A policy that names its join's queue takes ws's join path; its state of the moment is in its deque's
    // windows, which it keeps shut while that queue is not its own deque (abi.hpp, name_join_queue).
    w.inline_path = P::inline_help_first                      ? detail::spawn_path::inline_help_first
                    : P::inline_join || P::inline_join_queue ? detail::spawn_path::inline_join
                                                              : detail::spawn_path::engine;
    w.names_join_queue = P::inline_join_queue;
    // Preemptible tasks reach the engine only through entry points that mark the runtime's code as such:
    // by a count (the *_marked ones) or, for a spawn path audited for it, by its address (the runtime text).
    // The inline paths need nothing: their deque operations are critical windows (abi.hpp), which read a
    // policy's state of the moment (its shut joins) inside themselves; their slow paths run under the
    // task's no_preempt_scope (abi.hpp). Off, nothing here costs anything.
    if (config().preempt) {
      w.engine_spawn = &spawn_marked;
#ifdef ROOST_RUNTIME_TEXT
      if constexpr (std::is_same_v<typename P::runtime_text_spawn, P>) w.engine_spawn = &spawn_in_runtime_text;
#endif
      w.engine_wait = &wait_marked;
      w.preempt = config().preempt_klt ? &preempt_klt : &preempt_signal;
      w.preempt_by[0] = &preempt_signal;
      w.preempt_by[1] = &preempt_klt;
    }
  }

 private:
  __attribute__((always_inline)) static engine& of(worker& w) { return static_cast<engine&>(*w.eng); }

  // ---------------------------------------------------------------- spawn
  // The spawn path's functions are always inline: spawn_in_runtime_text's code must hold all of it, in every
  // build (a sanitizer build left spawn_child_first out of line, outside the runtime text).
  static void spawn(detail::worker_abi& wa, group& g, frame& f) {
    worker& w = static_cast<worker&>(wa);
#ifdef ROOST_CALL_ON_STACK
    if constexpr (P::plain_spawns) {
      fiber* const child = w.fibers.peek_free_stack();
      if (!(g.spawned & group::kJoining) && !detail::hook_bits() && child) [[likely]] return spawn_plain(w, g, f, child);
      return spawn_general(w, g, f);  // out of line: inlined, its registers were saved on the plain path too
    }
#endif
    spawn_body<true>(w, g, f);
  }
  __attribute__((noinline)) static void spawn_general(worker& w, group& g, frame& f) { spawn_body<true>(w, g, f); }
  // spawn_body from its order() on: spawn_plain counted and named the child, and order_plain changed nothing.
  __attribute__((noinline)) static void spawn_ordered(worker& w, group& g, frame& f) {
    try {
      order_and_spawn<true>(w, g, f);
    } catch (...) {
      undo_spawn(w, g, f);
      throw;
    }
  }
  template <bool kEndOnStack>
  __attribute__((always_inline)) static void order_and_spawn(worker& w, group& g, frame& f) {
    if (of(w).policy_.order(w, f) == sched::spawn_order::child_first) spawn_child_first<kEndOnStack>(w, g, f);
    else spawn_parent_first(w, g, f);
  }
  // A spawn that threw spawned nothing: the policy undoes what its order() did, and the count goes back.
  __attribute__((always_inline)) static void undo_spawn(worker& w, group& g, frame& f) {
    of(w).policy_.spawn_failed(w, f);
    --g.spawned;
  }
  // kEndOnStack: a child-first child called on a free stack that ends locally does the local end's work there
  // (child_on_stack), and the spawn holds nothing across the call; not in the runtime text, whose spawn must
  // do it in the text itself (its task's fiber is not counted in the runtime: spawn_in_runtime_text).
  template <bool kEndOnStack>
  __attribute__((always_inline)) static void spawn_body(worker& w, group& g, frame& f) {
    // A child the owner's join runs on the owner's stack spawns into the group: a foreign child, out of line
    // (src/api/task_group.cpp; it reaches spawn_foreign below through the engine's table) before this spawn
    // changed anything.
    if (g.spawned & group::kJoining) [[unlikely]] return detail::spawn_foreign(w, g, f);
    count_spawn(g);
    // A spawn that throws (no stack left for a child-first child, no memory for a frame) spawned nothing:
    // counted, the child would be waited for at the join for ever (adws, hws and ws hung that way when a
    // chain of 100,000 nested tasks ran out of stacks). Nothing is published before the throwing calls.
    try {
      name_child(w, f, const_cast<detail::task_id*>(g.owner_task),
                 [&w]() __attribute__((always_inline)) -> detail::fiber_abi* { return w.current_fiber; });
      clear_child_sched(f);
      order_and_spawn<kEndOnStack>(w, g, f);
    } catch (...) {
      undo_spawn(w, g, f);
      throw;
    }
  }

  // The child counted in its group; the first spawn since the join has no base on a deque yet (task_frame.hpp).
  __attribute__((always_inline)) static bool count_spawn(group& g) {
    const bool opens = ++g.spawned == 1;
    if (opens) g.base_epoch = group::kNoBase;
    return opens;
  }
  // The child's scheduling state as the policy expects it before order(): cleared where it reads it and order()
  // does not write it all, else only the tracer's serial, whatever the policy (task_frame.hpp).
  __attribute__((always_inline)) static void clear_child_sched(frame& f) {
    if constexpr (P::reads_task_sched_state && !P::order_writes_sched_state) f.id.clear_sched();
    else f.id.serial = 0;
  }

  __attribute__((always_inline)) static void spawn_parent_first(worker& w, group& g, frame& f) {
    frame* h = &f;
    if (static_cast<void*>(&f) != g.inline_frame) {  // on the spawner's stack: move it to the pool
      const std::size_t bytes = f.ops->size, align = f.ops->align;
      void* mem = w.frames.alloc(bytes, align);
      try {
        h = f.ops->relocate(&f, mem);
      } catch (...) {  // the closure's move threw: it is still in the spawner's frame, which discards it
        w.frames.free(mem, bytes, align);
        throw;
      }
      h->group = &g;
      h->work_hint = f.work_hint;
      h->id = f.id;
    }
    try {
      if (of(w).policy_.ship(w, h)) return;  // delivered to another worker
      fiber* self = w.current_fiber;
      // The group pops back only what it pushed since the owner last ran on this worker uninterrupted.
      if (g.base_epoch != self->epoch) {
        g.base_epoch = self->epoch;
        g.queue_base = w.deque.bottom_index();
      }
      of(w).policy_.place(w, h);
    } catch (...) {
      // No queue took it (one that had to grow found no memory). A closure moved to the pool is destroyed
      // there and its frame freed, and the spawner's frame, whose closure relocate destroyed, is marked
      // consumed, so that the spawner's discard (task_group::submit) destroys nothing: destroyed once, not
      // left in a frame nobody runs. (Moving it back would call the closure's move constructor, which may
      // throw.) One in the group's inline slot is still there, for the spawner to discard.
      if (h != &f) {
        const std::size_t bytes = h->ops->size, align = h->ops->align;
        h->ops->destroy(h);
        w.frames.free(h, bytes, align);
        f.ops = nullptr;
      }
      throw;
    }
  }

  template <bool kEndOnStack>
  __attribute__((always_inline)) static void spawn_child_first(worker& w, group& g, frame& f) {
#ifdef ROOST_CALL_ON_STACK
    // get_free_stack may throw: nothing is published or changed before it.
    worker* const local = call_child_on_stack<kEndOnStack>(w, g, f, w.fibers.get_free_stack());
#else
    worker* const local = switch_to_child(w, f);
#endif
    if (local) count_local_end(*local, g);
  }
  // Under a policy whose join hooks do nothing (joins_by_count), a child that ended here without an
  // exception leaves nothing for the join: it is taken off the count instead of counted as done, so that a
  // group whose children all ended so is joined by task_group::wait's test of the count alone, without the
  // engine (21 instructions a work-first spawn, and about 17 more in the caller), and its next spawn has the
  // inline slot. The count is the owner's, whose spawn this is: the thread that runs it now.
  __attribute__((always_inline)) static void count_local_end(worker& now, group& g) {
    if (joins_by_count(now, g) && g.error.load(std::memory_order_relaxed) == nullptr) [[likely]]
      --g.spawned;
    else
      ++g.local_done;
  }

  // The parent's fiber leaves its worker for the child's, as at any suspension: it keeps its task, its epoch
  // moves on (its groups' pushes are no longer the top of the deque). Returns the parent's fiber.
  __attribute__((always_inline)) static fiber* leave_for_child(worker& w, fiber* child) {
    fiber* self = w.current_fiber;
    self->task = w.current_task;
    ++self->epoch;
    w.become(child);
    return self;
  }

  // The child on a pooled fiber that the parent switches to (on_arrival, after::publish); the child switches
  // back when it ends locally. Returns the worker the parent continues on if it did, else null. Where there
  // is no call on another stack (not x86-64, the sanitizer builds).
  __attribute__((always_inline)) static worker* switch_to_child(worker& w, frame& f) {
    fiber* child = w.fibers.get_for_child();  // may throw: nothing is published or changed before it
    fiber* self = leave_for_child(w, child);
    switch_msg m;
    m.w = &w;
    m.from = self;
    m.action = after::publish;
    m.frame = &f;
    ult::transfer t;
    const switch_msg& in = switch_with(child->ctx, m, t);
    worker& now = *in.w;  // read before resumed(), which completes the switch
    const bool local = resumed(in, t);
    if (local && &now != &w) observe_moved(now, now.current_task, now.current_fiber);
    return local ? &now : nullptr;
  }

#ifdef ROOST_CALL_ON_STACK
  // The same child called on a free stack (ult/call_on_stack.hpp): the parent's context is saved where a
  // thief resumes it, as if it had switched; a child that ends locally returns to it, and nothing switches.
  // Every policy: what a policy does with the parent (publish_continuation: its deque, ADWS's queues) and
  // where the child goes (a migration suspends it, which gives its fiber a context) are the same either way.
  // With preemption on as well: from become(child) to the call, and after the child's body until
  // become(parent), the running fiber is the child's with its preempt_off at 1 (a fiber is in the runtime
  // except inside a body); from become(parent) on, the parent's, raised by spawn_marked's scope or running
  // the runtime text (spawn_in_runtime_text). The parent becomes current on the child's stack where the
  // spawn is `spawn`'s (no tick: preemption is off) or spawn_marked's (kEndOnStack,
  // resume_parent_after_call), whose raised count defers a tick there;
  // not in the runtime text, whose parent's count is 0: a tick after become(parent) on the child's stack,
  // already back on the free list, would suspend the parent there, and the next work-first spawn would take
  // that stack. A tick that lands in the child's body suspends the child's fiber as any other (its context
  // saved then), and the worker then runs the parent's continuation, so that child ends remotely.
  // On the parent's stack, which a local end finds as the call left it (nobody took the parent).
  struct on_stack_call {
    worker* w;
    fiber* parent;
    frame* f;
    group* g;
    ult::eh_state eh;  // the parent's exception state, for a thief's thread, which switch_to would have carried it to
  };
  // Returns the worker the parent continues on where the spawn must still count the child's local end
  // (count_local_end): without kEndOnStack, a local end. Else null: a remote end, or, with kEndOnStack, a
  // local end that child_on_stack counted. (A thief's resumption that resumed() calls a local end comes only
  // from the switch path's end_locally, switch_to_child's; counted all the same, should that change.)
  // `child`: the free stack's fiber, taken off the list by the caller.
  template <bool kEndOnStack>
  __attribute__((always_inline)) static worker* call_child_on_stack(worker& w, group& g, frame& f, fiber* child) {
    fiber* self = leave_for_child(w, child);
    on_stack_call c{&w, self, &f, &g, *w.eh};
    ult::call_fake_stack fake;
    ult::announce_call(fake, child->ctx);
    const ult::transfer t = ult::call_on_stack(&c, &child_on_stack<kEndOnStack>, child, &self->ctx.fctx);
    ult::call_came_back(fake);  // either way: a thief's switch_to announced its switch to this stack
    if (t.fctx) [[unlikely]] {  // a thief resumed the continuation, perhaps on another thread (switch_with's protocol)
      if constexpr (kEndOnStack) {
        after_steal(c, t);
        return nullptr;
      } else {  // the runtime text: all inline, since after resumed() the parent's count is 0 again
        const switch_msg& in = *static_cast<const switch_msg*>(t.data);
        worker& now = *in.w;  // read before resumed(), which completes the switch
        *now.eh = c.eh;
        return resumed(in, t) ? &now : nullptr;
      }
    }
    if constexpr (kEndOnStack) {
      return nullptr;  // child_on_stack did the local end's work
    } else {
      return &resume_parent_after_call(worker_of(*child), w, self, child);
    }
  }
  // A child called on a free stack ended locally (run_child_first): its parent's continuation still lay on
  // top of the deque, or was never published. Its call returns on the thread that ran the child's end, which
  // is the child's worker's now (`now`): the child's stack is free again, and the parent runs on there, as
  // resume_fiber would have resumed it. That thread's exception state is the parent's already: the child
  // began with it, its handlers are balanced, and a switch of the child's carried it along (switch_to).
  // `spawner`: the worker the spawn began on. Done on the child's stack (child_on_stack, whose stack goes
  // back on the list before it returns: only this thread takes from that list, and it takes nothing before
  // the call returns) or on the parent's after the call.
  __attribute__((always_inline)) static worker& resume_parent_after_call(worker& now, worker& spawner,
                                                                        fiber* parent, fiber* child) {
    ++child->epoch;
    now.fibers.put_free_stack(child);
    now.become(parent);
    now.current_task = parent->task;
    if (&now != &spawner) {
      now.fibers.came_from_elsewhere();  // the spawner's pool counted the stack (fiber_pool::trim_free_stacks)
      observe_moved(now, now.current_task, parent);
    }
    if constexpr (!P::child_first_hooks_idle)
      if (now.current_task) of(now).policy_.on_task_resume(now, *now.current_task);
    return now;
  }
  template <bool kEndOnStack>
  static void child_on_stack(void* p) noexcept {
    ult::entered_call();
    // On the parent's stack: read first, since a thief that takes the parent unwinds it. A local end finds
    // it again (nobody took the parent), and reads the rest then.
    const on_stack_call& c = *static_cast<const on_stack_call*>(p);
    fiber* parent = c.parent;
    const ult::transfer t = run_child_first<true>(*c.w, parent, *c.f);
    // Only a local end returns here, with the worker it ended on (end_locally), back to the parent's call.
    if constexpr (kEndOnStack) {
      worker& now = *static_cast<worker*>(t.data);
      count_local_end(resume_parent_after_call(now, *c.w, parent, now.current_fiber), *c.g);
    }
    ult::leaving_call(parent->ctx);
  }

  // spawn_body's path for the owner's spawn under a policy with plain spawns (P::plain_spawns: its
  // order_plain), with no hook installed and a free stack on the list (issue #25). Nothing in it can throw, so
  // it needs no handler, and it calls nothing but the child's stack, whose record holds what a thief's
  // resumption needs (after_steal, out of line): nothing of it is kept in a register across the call, and the
  // spawn saves no callee-saved register. A spawn order_plain does not take goes on out of line
  // (spawn_ordered), from where spawn_body calls order().
  // `child`: the free stack's fiber at the list's head (fiber_pool::peek_free_stack).
  __attribute__((always_inline)) static void spawn_plain(worker& w, group& g, frame& f, fiber* child) {
    const bool opens = count_spawn(g);
    name_child_unobserved(f, const_cast<detail::task_id*>(g.owner_task));  // no hook to tell
    clear_child_sched(f);
    // `opens` comes from the count: a policy that read g.spawned itself after the child's name, whose stores
    // GCC may take to alias it, loaded it anew (a load a spawn under adws and adws-ml).
    if (!of(w).policy_.order_plain(w, g, f, opens)) [[unlikely]] return spawn_ordered(w, g, f);
    w.fibers.take_free_stack(child);
    call_child_on_stack<true>(w, g, f, child);  // a local end counted on the child's stack: nothing to do here
  }
  __attribute__((noinline)) static void after_steal(const on_stack_call& c, ult::transfer t) {
    const switch_msg& in = *static_cast<const switch_msg*>(t.data);
    worker& now = *in.w;  // read before resumed(), which completes the switch
    *now.eh = c.eh;
    if (resumed(in, t)) count_local_end(now, *c.g);
  }
#endif

  // A task's fiber continues after a suspension. Finishes the switch for whoever resumed it (always a
  // "park" of the fiber it came from) and says whether that was the task's own child ending locally.
  // The resumer raised this fiber's count (resume_fiber); it is lowered last, once the switch is complete.
  // `in_tick`: the resumed task was preempted, and this runs in the tick's handler on its stack: the fiber
  // that resumed it is parked without spilling to the shared pool (a lock and an allocation, which a
  // handler must not make: the task it interrupted may be in an allocator linked into the program).
  __attribute__((always_inline)) static bool resumed(const switch_msg& in, ult::transfer t, bool in_tick = false) {
    worker& w = *in.w;
    fiber* from = in.from;
    const bool child_done_locally = in.child_done_locally;
    from->ctx.fctx = t.fctx;
    if (in_tick) w.fibers.put_in_handler(from);
    else w.fibers.put(from);
    if (!child_done_locally) observe_resume(w, w.current_task);
    if (w.current_task) of(w).policy_.on_task_resume(w, *w.current_task);
    detail::preempt_lower(*w.current_fiber);
    return child_done_locally;
  }

  // The entry points while preemption is on: the spawn or wait is runtime code from start to end. The
  // scope's fiber is the caller's, the group's owner (user code checked that it runs on it before the call;
  // a task's fiber never changes), whose stack the scope lives on, wherever the task runs at the end.
  // A tick switches to an idle pooled fiber, which it cannot make in a handler: the fiber pool keeps one
  // wherever a body may run (fiber_pool::has_idle).
  // The worker is the caller's, as in spawn_in_runtime_text (a preempted task resumes on its worker). A
  // spawn is no scheduling point here: a spawn moves the deque's bottom, which progress_signature reads
  // anyway (worker.hpp); a join may not.
  static void spawn_marked(detail::worker_abi& wa, group& g, frame& f) {
    detail::runtime_code_scope np(*g.owner_fiber);
    spawn_body<true>(static_cast<worker&>(wa), g, f);
  }
  static void wait_marked(detail::worker_abi& wa, group& g) {
    detail::runtime_code_scope np(*g.owner_fiber);
    worker& w = static_cast<worker&>(wa);
    w.passed_scheduling_point();
    join(w, g);
  }

 public:
  // The spawn entry point while preemption is on, for a policy whose spawn path is audited for it
  // (P::runtime_text_spawn names P; engine/README.md, "Preemption", 2): spawn_marked without the count.
  // Its code lies in the runtime text, a critical window as a whole (critical_windows.hpp), so a tick that
  // lands in it is deferred by its address and the spawn costs the task nothing for preemption. Everything
  // it calls out of that text while the spawning task's fiber runs is either
  //  * before the spawn changes anything (throw_not_owner), in a system library (the unwinder), or the end of
  //    the process (the sanitizer builds' check below), or
  //  * a slow path called under a raise made inline before the call (fiber_pool::get_slow,
  //    get_free_stack_slow, spill: fiber.hpp; name_child's hook), or
  //  * run on the child's fiber, whose count is 1 outside its body (roost_call_on_stack, the child's start
  //    and end), or
  //  * after a thief resumed the parent: resume_fiber raises the resumed fiber's count before it switches and
  //    resumed() lowers it last, so the switch (Boost.Context's jump_fcontext, another library's text) and the
  //    parent's resumption (its hooks, the pool's put) are counted, or
  //  * a local end on another worker than the spawn's: observe_moved raises the parent fiber's count around its
  //    hook (hook_task_moved).
  // What it calls inline is always_inline, down to the accessors: a compiler that inlines less (clang at -O1,
  // the ASan build) called engine::of and worker::become out of the text.
  // tests/runtime_text/check.sh checks the list against the calls in the compiled function. Declared here,
  // defined as a non-template function in the policy's engine unit (ROOST_ENGINE_RUNTIME_TEXT_SPAWN): a
  // template's code lies in a COMDAT section, where a section attribute is ignored.
  // The worker is the caller's: it read it in user code, where a tick may have preempted the task before the
  // call, but a preempted task resumes only on the worker that preempted it (its FIFO, or its kernel thread
  // under KLT-switching; preempted_fifo), so the worker is still the task's. Read again from the fiber
  // instead (two dependent loads before everything else), it cost fib 1.5-2% with preemption on.
  static void spawn_in_runtime_text(detail::worker_abi& wa, group& g, frame& f);
  __attribute__((always_inline)) static void spawn_in_runtime_text_body(detail::worker_abi& wa, group& g,
                                                                       frame& f) {
#if defined(ROOST_TSAN) || defined(ROOST_ASAN)
    if (&wa != g.owner_fiber->worker) [[unlikely]]
      platform::os::fatal("roost: a spawn in the runtime text found its task on another worker than its caller "
                          "read", "a preempted task resumed elsewhere");
#endif
    spawn_body<false>(static_cast<worker&>(wa), g, f);
  }

 private:
  // Called by the timer signal's handler (preemption.cpp) on `w`'s thread, with the running task in its own
  // code and its fiber's preempt_off raised to 1 by the handler. Both return when the task is resumed, on
  // this worker (a preempted task is resumed only from its worker's FIFO), or false at once if they cannot
  // suspend it now (the tick is deferred). A final region's worker state goes with the task, as a real
  // wait's does (src/api/final.cpp).
  //
  // Signal-yield (digest §4.2): suspends the task to a pooled fiber that queues it on this worker and
  // schedules (after::preempted); the task resumes on the thread that serves this worker then: this one,
  // unless a KLT-switching task of the worker holds it (preemption.cpp restores errno and the signal stack
  // for the thread it resumed on).
  static bool preempt_signal(worker& w) {
    if (!w.fibers.has_idle()) return false;  // a fiber would have to be made here: not in a handler
    // The kernel blocked the signal for the handler's duration; other tasks of this thread run before the
    // handler returns, and must be preemptible too (digest §4.2).
    platform::preempt::unblock_for_other_tasks();
    const unsigned final_depth = leave_final_for_switch(w);
    switch_msg m;
    m.action = after::preempted;
    worker& now = suspend_to_scheduler(w, m, true);
    reenter_final_after_switch(now, final_depth);
    return true;
  }

  // KLT-switching (digest §4.3; engine/klt.hpp): the task stays on this kernel thread, which queues it,
  // hands the worker to a spare and sleeps here until the worker's scheduler comes to the task again
  // (schedule, go_home; engine_base::serve). Nothing on the way is more than atomics, the worker's own
  // lists, a timer_settime and futex calls: async-signal-safe. The signal stays blocked while this thread
  // sleeps (the handler's mask): its own timer is disarmed, and a tick the chain sends it waits.
  static bool preempt_klt(worker& w) {
    engine& e = of(w);
    // The spare schedules on a pooled fiber, which it should not have to make either (fiber_pool::has_idle).
    if (!w.fibers.has_idle()) return false;
    klt* spare = w.klts.take();
    if (!spare) {
      e.klt_threads()->request(w);  // the next tick finds one
      return false;
    }
    if (!w.klts.has_spare()) e.klt_threads()->request(w);  // for the next preemption
    klt& self = *w.klts.active;
    const unsigned final_depth = leave_final_for_switch(w);
    fiber* f = w.current_fiber;
    if (w.current_task) e.policy_.on_task_suspend(w, *w.current_task);
    f->task = w.current_task;
    ++f->epoch;  // the worker's deque moves on without it, as after any suspension
    f->klt_holder = &self;
    w.current_fiber = nullptr;
    w.current_task = nullptr;
    w.preempted.push(f);
    self.home = w.thread_ctx;  // where this thread goes when it next leaves the worker
    e.stop_serving(w, self);
    w.klts.active = spare;
    w.fp_at_handover = detail::fp_control::capture();  // the task's (the tick's handler gave it the task's)
    spare->post(klt::command::take_over);
    while (self.wait() != klt::command::resume) {
    }
    // The thread that woke us gave the worker back as it found it for us (engine_base::serve): our home,
    // exception state, this fiber and task current. A resumption is a scheduling point: the next tick looks
    // at a full interval.
    // The mask is not noted again: inside the tick's handler, or after on_sleep_exit's block, SIGURG is
    // blocked here, and noted so it would be the mask that a later signal-yield preemption on this thread
    // gives the tasks that run meanwhile under TSan (unblock_for_other_tasks), which no tick could then
    // preempt (found in review, from the code). The mask noted when the thread began serving still holds.
    e.start_serving(w, self, false);
    w.become(f);
    w.passed_scheduling_point();
    observe_resume(w, w.current_task);
    if (w.current_task) e.policy_.on_task_resume(w, *w.current_task);
    reenter_final_after_switch(w, final_depth);
    return true;
  }

  // ---------------------------------------------------------------- wait
  static void wait(detail::worker_abi& wa, group& g) { join(static_cast<worker&>(wa), g); }
  // The body of wait, inlined into both entry points (wait_marked's own call cost a join 10 instructions).
  __attribute__((always_inline)) static void join(worker& w, group& g) {
    if (g.spawned & group::kJoining) [[unlikely]] detail::throw_not_owner("roost::task_group::wait", w.current_fiber, g);
    of(w).policy_.on_wait(w, g);
    worker* now = &w;
    // A balance not at 0 here: children other tasks spawned into the group (join.hpp), done or not.
    // Acquire: a balance back at 0 is the foreign children's ends, whose writes the owner reads after this.
    if (g.spawned != g.local_done || g.remote_balance.load(std::memory_order_acquire) != 0) {
      g.spawned |= group::kJoining;  // until finish_join: children run inline below may not join it
      now = &pop_own_children(w, g);  // a child run inline may have suspended: we may be elsewhere now
      std::uint32_t remote = (g.spawned & ~group::kJoining) - g.local_done;
      if (!join::all_remote_done(g, remote)) {
        now = &suspend_for_join(g, remote);
        join::after_waiting(g);
      }
    }
    // A waiter that suspended came back on its target already (resume_waiter); this moves a task that
    // joined without suspending, or that a child run inline took elsewhere.
    if (worker* target = of(*now).policy_.after_join(g, *now->current_task)) {
      if (target != now) now = &migrate_to(*now, *target);
    }
    of(*now).policy_.resumed_after_join(*now, g);
    join::finish_join(g);
  }

  // Moves the running task to `target`: it suspends here and the policy hands its fiber to the target
  // (policy_.hand_over), which resumes it. Returns the worker it runs on afterwards.
  static worker& migrate_to(worker& w, worker& target) {
    switch_msg m;
    m.action = after::hand_over;
    m.target = &target;
    return suspend_to_scheduler(w, m);
  }

  // The running task's fiber leaves its worker for a pooled fiber that runs the scheduling loop; `m` says
  // what that fiber does with it (register as a join waiter, hand it over). Returns the worker the task
  // runs on when something resumes it.
  static worker& suspend_to_scheduler(worker& w, switch_msg& m, bool in_tick = false) {
    fiber* self = w.current_fiber;
    if (w.current_task) of(w).policy_.on_task_suspend(w, *w.current_task);
    fiber* sched = fiber_to_suspend_to(w);
    self->task = w.current_task;
    ++self->epoch;
    w.become(sched);
    w.current_task = nullptr;
    m.w = &w;
    m.from = self;
    ult::transfer t;
    const switch_msg& in = switch_with(sched->ctx, m, t);
    worker& now = *in.w;
    resumed(in, t, in_tick);
    return now;
  }

  // A fiber for the scheduling loop of a task that must suspend (join, migration). Without one the task can
  // neither wait nor leave the join half done (children still point at its group), so the process ends with
  // the reason, as a stack overflow does: never a hang.
  static fiber* fiber_to_suspend_to(worker& w) {
    try {
      return w.fibers.get();
    } catch (const std::exception& e) {
      platform::os::fatal("roost: a task must wait for its children, and no stack is left for the worker to "
                          "run others meanwhile", e.what());
    }
  }

  // Help-first: run inline the children this group pushed and nobody took. Only while the owner has not
  // been switched away since the group's pushes (fiber epoch), the deque is the group's. Returns the worker
  // the owner runs on afterwards.
  static worker& pop_own_children(worker& w, group& g) {
    fiber* self = w.current_fiber;
    const std::uint64_t epoch = self->epoch;
    if (g.base_epoch != epoch) return w;
    while (w.deque.bottom_index() > g.queue_base) {
      // While only a few of the children are left private, run them in spawn order, the serial program's
      // (a stencil's blocks in memory order): popping reversed it, and heat2d 1448x50 ran its leaves 4x
      // slower at 1 worker. A take from the middle moves the tasks above it, hence the bound.
      constexpr std::int64_t kInOrderMax = 8;
      job* j = w.deque.take_oldest_private(g.queue_base, kInOrderMax);
      if (!j) j = w.deque.pop();
      if (!j) return w;
      if (!j->is_fresh() || detail::group_of(*static_cast<frame*>(j)) != &g) {
        w.deque.push(j);  // not ours: a foreign child of another group, pushed above ours (join.hpp); leave it
        return w;
      }
      // A child another task spawned into the group (spawn_foreign) pays its debt on the balance, as it
      // would wherever it ran; the owner is not registered, so it resumes nobody.
      const bool foreign = j->k() == job::kind::fresh_foreign;
      run_inline(w, *static_cast<frame*>(j));
      if (foreign) (void)join::complete_remote(g);
      else ++g.local_done;
      if (self->epoch != epoch) return worker_of(*self);  // the child suspended: we moved
    }
    return w;
  }

  // A frame pushed by an inline spawn or join has neither name nor hint (task_frame.hpp): it becomes a task
  // with no hint, the child of an unrecorded parent, before the engine runs it (its children are then
  // named under it). Not a root: a policy starts its own work at a root (ADWS's search of the whole line).
  // The policy may then give it scheduling state of its own (adopt_unnamed: adws-ml's leaf level).
  static void name_unnamed(worker& w, frame& f) {
    // Acquire: a join's frame its owner claimed and released as fresh_unnamed holds the fields the owner
    // wrote, which this worker's run of it (its end's add to the balance) must come after.
    const job::kind k = f.k_acquire();
    if (!job::unnamed(k)) [[likely]] return;
    group* g = detail::group_of_unnamed(f);
    f.group = g;  // left unwritten by the inline spawn (task_frame.hpp)
    ::new (static_cast<void*>(&f.id)) detail::task_id(detail::task_id::child_of_unrecorded_t{});
    // An observer may see such a task (installed before it runs, or during it): each its own spawn path,
    // not all "0.0" (an outside-user campaign found 1,024 paths started several times). Drawn at every
    // naming, not only while an observer is installed: one installed mid-run saw all the children named
    // before it as 4294967295.0 (a later campaign). Off the inline path: only a frame the engine runs.
    f.id.index = unrecorded_index(w);
    f.work_hint = -1;
    // A join's half: the group's balance and error slot before it runs (abi.hpp, take_join_slot).
    if (k == job::kind::fresh_unnamed || !detail::take_join_slot(f, *g)) f.rename_kind(job::kind::fresh);
    of(w).policy_.adopt_unnamed(w, f.id);
  }

  // A child another task spawned into group g (spawn_foreign) is never named under its spawner, which owns
  // no part of g: g's join waits for the child and not for the spawner, so the spawner may end first, and its
  // id with it. A pointer to that id dangled: under ws-help, cats and numa the spawner's pooled frame went to
  // a later task, whose id then lay on the child's chain of parents, and an observer's spawn path walked that
  // cycle for ever while memory grew (an outside-user campaign); the tracer read a parent's serial there.
  // Spawned on the owner's stack (a child its join runs there), it is named under the owner, which runs no
  // code of its own meanwhile (name_child); from another stack, which may run beside the owner and its count
  // of children, as a child of an unrecorded parent, as name_unnamed names a frame an inline path pushed.
  // Its depth stays one below its spawner's (cab reads it; adopt_unnamed adjusts it).
  static void name_foreign(worker& w, group& g, frame& f) {
    if (w.current_fiber == g.owner_fiber) {
      name_child(w, f, const_cast<detail::task_id*>(g.owner_task),
                 [&w]() __attribute__((always_inline)) -> detail::fiber_abi* { return w.current_fiber; });
      f.id.clear_sched();
      return;
    }
    const detail::task_id& spawner = *w.current_task;
    const std::uint32_t depth = spawner.depth + 1;
    ::new (static_cast<void*>(&f.id)) detail::task_id(detail::task_id::child_of_unrecorded_t{});
    f.id.depth = depth;
    f.id.index = unrecorded_index(w);  // as name_unnamed: whether or not an observer is installed yet
    if (detail::hook_bits() & detail::kHookSim) [[unlikely]]
      detail::hook_spawn(w.id, spawner, f.id.index);  // under spawn_foreign's scope
  }

  // The index of a child of an unrecorded parent: worker-local counts, interleaved, so unique in the runtime
  // while each of its P workers names fewer than 2^32 / P of them.
  static std::uint32_t unrecorded_index(worker& w) {
    return static_cast<std::uint32_t>(w.id) + of(w).num_workers() * w.unrecorded_named++;
  }

  // Runs a fresh frame on the calling fiber as its worker's current task: named if the inline spawn left it
  // unnamed, observed, an exception recorded in its group (a root has none: run_root rethrows it). Returns
  // the worker the fiber is on afterwards, another one only if the task suspended (its epoch then moved).
  // The frame's memory is still the caller's to free. Inlined into both callers, as the two copies were.
  // `from_loop`: taken by the scheduling loop (always observed), else popped at its join (observed as
  // observe.hpp's nested_seen says).
  template <bool from_loop>
  __attribute__((always_inline)) static worker& run_here(worker& w, frame& f) {
    name_unnamed(w, f);
    fiber* self = w.current_fiber;
    group* g = f.group;
    w.current_task = &f.id;
    if constexpr (from_loop) observe_start(w, f.id, f.work_hint);
    else observe_start_nested(w, f.id, f.work_hint);
    if (g) child_started(w, f.id);
    else of(w).policy_.on_task_start(w, f.id);  // a root
    try {
      detail::preemptible_body body(self);
      f.ops->run_in_place(&f);
    } catch (...) {
      if (g) join::record_exception(*g, std::current_exception());
    }
    worker& now = worker_of(*self);
    // A root's end is not an observer's (run() returning is its end, observer.hpp), but the tracer records
    // it, or a timeline shows nothing of what the root ran itself.
    if (g) observe_end(now, f.id);
    else observe_root_end(now, f.id);
    of(now).policy_.on_task_end(now, f.id);
    return now;
  }

  // A task with a parent starts: the policy's on_child_start where it has one (nothing of a root's to
  // test for), else its on_task_start.
  __attribute__((always_inline)) static void child_started(worker& w, detail::task_id& id) {
    if constexpr (requires(P& p) { p.on_child_start(w, id); }) of(w).policy_.on_child_start(w, id);
    else of(w).policy_.on_task_start(w, id);
  }

  // A child the group's owner pops back at its join: the owner's task is current again afterwards.
  static void run_inline(worker& w, frame& f) {
    detail::task_id* saved = w.current_task;
    const std::size_t size = f.ops->size, align = f.ops->align;
    const bool pooled = static_cast<void*>(&f) != detail::group_of(f)->inline_frame;
    worker& now = run_here<false>(w, f);
    now.current_task = saved;
    // The child ran on the owner's fiber: if it suspended and was resumed elsewhere, the owner goes on there.
    if (&now != &w) observe_moved(now, saved, now.current_fiber);
    if (saved) of(now).policy_.on_task_resume(now, *saved);
    if (pooled) now.frames.free(&f, size, align);
  }

  // The last remote child of `g` ended on `w` and found its owner suspended (join::complete_remote). An owner
  // whose policy moves it after the join (ADWS's return migration to its range's owner, seed 003 §4.2.2) goes
  // there straight from here, instead of being resumed here only to suspend again and be handed over: on
  // the critical path of every dealt group that is one switch and the owner's lines crossing to this core
  // and back. Returns the fiber to resume on `w`, or nullptr. `g` lives on the owner's stack, and the owner
  // cannot run before it is resumed or handed over, so reading it here is safe; not after.
  static fiber* resume_waiter(worker& w, group& g, fiber* waiter) {
    worker* target = of(w).policy_.after_join(g, *waiter->task);
    if (!target || target == &w) return waiter;
    return hand_over_or_keep(w, *target, waiter);
  }
  // Hands a suspended task to `target`, or returns it to be resumed here when the policy cannot queue it
  // there (std::bad_alloc: a queue could not grow). The move is for locality (seed 003 §4.2.2), never for
  // the result, and neither caller may throw: one finishes a child's end, the other a switch.
  static fiber* hand_over_or_keep(worker& w, worker& target, fiber* f) noexcept {
    try {
      of(w).policy_.hand_over(w, target, f);
      return nullptr;
    } catch (...) {
      return f;
    }
  }

  static worker& suspend_for_join(group& g, std::uint32_t remote) {
    switch_msg m;
    m.action = after::wait_join;
    m.group = &g;
    m.remote = remote;
    return suspend_to_scheduler(*current_worker(), m);
  }

  // ---------------------------------------------------------------- fibers and the scheduling loop
  static void fiber_entry_fn(ult::transfer t) {
    ult::entered_new_context(static_cast<switch_msg*>(t.data)->w->eh);
    for (;;) t = on_arrival(t);
  }

  // Completes the switch that brought this (idle) fiber to life, runs what it was given, then schedules
  // until the fiber switches away. Returns the transfer that later brings it back from the pool.
  static ult::transfer on_arrival(ult::transfer t) {
    const switch_msg& m = *static_cast<switch_msg*>(t.data);  // on from's stack: read before from can run
    worker& w = *m.w;
    fiber* from = m.from;
    if (from) from->ctx.fctx = t.fctx;
    else w.thread_ctx.fctx = t.fctx;
    // The switch gave this fiber the floating-point state it parked with, which may be another run's: the
    // thread keeps the one it left instead, which is its task's (fp_control.hpp). What this fiber runs
    // next is that task's work: a work-first child, or its own frames left in the deque. Read before `from`
    // can run: the state lies in its saved context, on its stack.
    keep_fp_state_of(t.fctx);
    job* next = nullptr;
    switch (m.action) {
      case after::nothing: break;
      case after::park: w.fibers.put(from); break;
      case after::publish: return run_child_first<false>(w, from, *m.frame);
      case after::wait_join:
        if (join::register_waiter(*m.group, from, m.remote)) next = from;
        break;
      case after::hand_over: next = hand_over_or_keep(w, *m.target, from); break;
      case after::run_root: next = m.frame; break;
      case after::preempted: w.preempted.push(from); break;
      case after::klt_resume: break;  // only ever sent to a thread's own stack (engine_base::serve)
    }
    return schedule(w, next);
  }

  // Out of line: inlined, their register needs cost the work-first child's path (which shares a function with
  // the scheduling loop) 3 instructions a spawn (callgrind, fib(24) less fib(20), ws).
  __attribute__((noinline)) static void keep_fp_state_of(const void* fctx) noexcept {
    detail::fp_control::apply(detail::fp_control::saved_in_context(fctx));
  }
  // Before the thread takes another task's floating-point state (a stamped frame, a fiber to resume), this
  // worker's own frames still private get the state they were pushed under, the thread's now: a policy that
  // runs such work before its own (ADWS's mailbox, its migration inbox) would have run them with the
  // other's (a review). Elsewhere the worker's queues are empty by then (its own work comes first). Which
  // queues hold such frames is the policy's to say (policy.hpp, stamp_own_private: adws's migration queue
  // keeps them after its join queue names another).
  __attribute__((noinline)) static void apply_fp_state(worker& w, std::uint64_t fp) noexcept {
    const std::uint64_t here = detail::fp_control::capture();
    if (here == fp) return;
    stamp_own_private(w, here);
    detail::fp_control::apply(fp);
  }
  __attribute__((noinline)) static void keep_own_fp_state_before(worker& w, const fiber& target) noexcept {
    const std::uint64_t here = detail::fp_control::capture();
    if (here != detail::fp_control::saved_in_context(target.ctx.fctx)) stamp_own_private(w, here);
  }
  static void stamp_own_private(worker& w, std::uint64_t state) noexcept { of(w).policy_.stamp_own_private(w, state); }

  // The plain child's publication of its parent (run_child_first): false where it failed (the deque could
  // not grow), which changed nothing.
  __attribute__((always_inline)) static bool publish_or_not(worker& w, fiber* parent) noexcept {
    try {
      of(w).policy_.publish_continuation(w, parent);
      return true;
    } catch (...) {
      return false;
    }
  }
  // The plain child whose parent could not be published: it runs as the child of a parent nobody can take,
  // and returns to it.
  template <bool kOnStack>
  __attribute__((noinline, cold)) static ult::transfer run_unpublished(fiber* parent, fiber* self, frame& f,
                                                                       group& g, detail::task_id& id) {
    try {
      f.ops->run_in_place(&f);
    } catch (...) {
      join::record_exception(g, std::current_exception());
    }
    worker& now = worker_of(*self);
    observe_end(now, id);
    of(now).policy_.on_task_end(now, id);
    return end_locally<kOnStack>(now, parent);
  }
  // A child-first child that is observed, or may be preempted, or whose frame lies on its parent's stack
  // (run_child_first's `plain` is false): its start and end are observed, its body is preemptible from its
  // publication on, and a frame on the parent's stack moves onto this one before the publication. Sets
  // `published` (false: the parent never left, its publication failed) and returns the worker the child
  // ended on.
  // Out of line: inlined, it was the fall-through of the plain child's test, and the plain path jumped
  // around it twice.
  __attribute__((noinline)) static worker& run_observed(worker& w, fiber* parent, fiber* self, frame& f,
                                                        group& gr, detail::task_id& id, bool& published) {
    group* g = &gr;
    observe_start_nested(w, id, f.work_hint);
    if constexpr (!P::child_first_hooks_idle) child_started(w, id);
    // The child's body is preemptible from its publication on (engine/README.md, "Preemption"): the
    // publication lowers the fiber's count as its last act, and the engine raises it again before its own
    // code after the body, in the handler of the body's exception or after the body. A publication that
    // failed left it raised (pub.done false): that child is not preempted. (A flag of its own for "lowered"
    // cost two more instructions per spawn; `lifted` is a constant on the path without an exception.)
    struct publisher {
      worker* w;
      fiber* parent;
      fiber* self;
      bool done;
      static void publish(void* p) {
        auto* pub = static_cast<publisher*>(p);
        of(*pub->w).policy_.publish_continuation(*pub->w, pub->parent);
        pub->done = true;
        detail::preempt_lower(*pub->self);
      }
    } pub{&w, parent, self, false};
    bool lifted = false;
    try {
      // A first child in the group's inline slot runs where it lies (the slot lives until the join, which
      // waits for it): no closure to move onto this stack and no callback to publish after the move.
      if (&id == &f.id) {
        // A publication that fails (the deque could not grow) changed nothing: the parent then stays
        // unstealable and resumes when the child ends (pub.done is false), as if nobody had taken it.
        try {
          publisher::publish(&pub);
        } catch (...) {
        }
        f.ops->run_in_place(&f);
      } else {
        f.ops->run_moved(&f, &publisher::publish, &pub);
      }
    } catch (...) {
      if (pub.done) detail::preempt_raise(*self);
      lifted = true;
      join::record_exception(*g, std::current_exception());
    }
    if (pub.done && !lifted) detail::preempt_raise(*self);
    worker& now = worker_of(*self);
    observe_end(now, id);
    of(now).policy_.on_task_end(now, id);
    // A task's end is progress (worker.hpp, progress_signature): a work-first child that ends locally leaves
    // the deque's bottom where its spawn found it, so a loop of such spawns (matmul's leaves under ws) looked
    // stuck to two ticks that met the same bottom, and 29 of its tasks a run were preempted for nothing.
    if (now.preempt) [[unlikely]] now.passed_scheduling_point();
    published = pub.done;
    return now;
  }

  // kOnStack: called on a free stack by call_child_on_stack. A local end then returns (a null transfer)
  // instead of switching to the parent; a remote end makes this fiber one of the scheduling loop's, for good.
  template <bool kOnStack>
  __attribute__((always_inline)) static ult::transfer run_child_first(worker& w, fiber* parent, frame& f) {
    // Keep what we need before the parent becomes stealable. A group's first child lies in the group's
    // inline slot, which lives until the group's join, and that join waits for this child: its id can be
    // used where it lies. Any other frame is on the parent's stack, which the stolen continuation unwinds.
    group* g = f.group;
    // The copy is built only when needed: nothing to write on the common path. Not std::optional, whose
    // empty state GCC zero-fills with a `rep stos` of 88 bytes per spawn.
    union id_slot {
      detail::task_id copy;
      id_slot() {}
    } slot;
    detail::task_id& id =
        static_cast<void*>(&f) == g->inline_frame ? f.id : *::new (static_cast<void*>(&slot.copy)) detail::task_id(f.id);
    fiber* self = w.current_fiber;
    // Which continuation of the parent's fiber is this child's: the one published at this spawn, at the
    // epoch the parent left with (it cannot run before publish_continuation below, so the read is safe).
    const std::uint64_t parent_epoch = parent->epoch;
    w.current_task = &id;
    // The plain child (issue #25): in the group's inline slot, with no hook installed and preemption off in
    // this runtime, it has no start to observe and no count to keep for a tick (a fiber's preempt_off is
    // read only where the worker has a `preempt`), so it publishes its parent and runs, without the
    // publisher's record, its flag and the counts of the path below: 19 instructions of a `ws` spawn's 278
    // (callgrind, fib), and fib under `ws` 0.93-0.94x the time (src/engine/README.md, "A plain work-first
    // spawn"). Its end is still observed: an observer installed while it runs sees the ends of the tasks that
    // started before it (observer.hpp), one test.
    const bool plain = &id == &f.id && !detail::hook_bits() && !w.preempt;
    worker* now_p;
    if (plain) [[likely]] {
      if constexpr (!P::child_first_hooks_idle) child_started(w, id);
      // A publication that fails (the deque could not grow) changed nothing: the parent then stays
      // unstealable, and the child runs out of line and returns to it, as below. Tested before the body, not
      // after it: a flag kept across the body took a callee-saved register and three instructions a spawn.
      if (!publish_or_not(w, parent)) [[unlikely]] return run_unpublished<kOnStack>(parent, self, f, *g, id);
      try {
        f.ops->run_in_place(&f);
      } catch (...) {
        join::record_exception(*g, std::current_exception());
      }
      now_p = &worker_of(*self);
      observe_end(*now_p, id);
      of(*now_p).policy_.on_task_end(*now_p, id);
    } else {
      bool published;
      now_p = &run_observed(w, parent, self, f, *g, id, published);
      if (!published) return end_locally<kOnStack>(*now_p, parent);  // never published: the parent never left
    }
    worker& now = *now_p;
    job* j = of(now).policy_.pop_own(now);
    // Our parent's continuation, still unstarted: a local completion. The parent's fiber alone is not
    // proof: after its continuation was taken, the parent may have spawned again and published a later
    // continuation of the same fiber, and a policy whose own work is not last-in-first-out (ADWS's mailbox
    // and migration queue, seed 003 Algorithm 4.3) can bring this child to an end on the worker holding
    // it. That one has a later epoch (the fiber's epoch grows at every switch away, and we own j now, so
    // the read is safe). Taking it for ours credited this child to the later group and left its own group
    // waiting forever: adws on fib(18), 2 workers, hung in about 1% of runs without stealing.
    if (j == static_cast<job*>(parent) && parent->epoch == parent_epoch) return end_locally<kOnStack>(now, parent);
    // The parent was taken by someone else: this child completes remotely.
    job* next = j;
    of(now).policy_.before_remote_end(now);
    if (void* waiter = join::complete_remote(*g)) {
      if (fiber* here = resume_waiter(now, *g, static_cast<fiber*>(waiter))) {
        if (j) {
          of(now).policy_.put_back(now, j);  // where pop_own's queues will give it again
          of(now).idle().notify_new_work();
        }
        next = here;
      }
    }
    ult::transfer t = schedule(now, next);
    if constexpr (kOnStack) {
      for (;;) t = on_arrival(t);  // as fiber_entry_fn: below this frame lies the parent's old call
    }
    return t;
  }

  // A child that found its parent's continuation still in the deque ends locally (join.hpp): it switches
  // to the parent, or, called on a free stack, returns to it.
  template <bool kOnStack>
  static ult::transfer end_locally(worker& w, fiber* parent) {
    if constexpr (kOnStack) {
      (void)parent;
      return ult::transfer{nullptr, &w};  // child_on_stack's: the worker the child ended on
    } else {
      return resume_fiber(w, parent, true);
    }
  }

  // Runs jobs on this fiber until it must switch away (to resume a suspended task, or at shutdown).
  static ult::transfer schedule(worker& start, job* next) {
    for (worker* wp = &start;;) {
      worker& w = *wp;
      if (!next) next = find_work(w);
      if (!next) return go_home(w);
      if (next->is_fresh()) {
        next = run_fresh(wp, *static_cast<frame*>(next));  // updates wp: the task may have moved this fiber
        continue;
      }
      return resume_from_loop(w, static_cast<fiber*>(next));
    }
  }

  // A suspended task the loop found: a task preempted under KLT-switching is asleep with its kernel thread.
  // Out of line: with this test inlined into the scheduling loop, GCC's register allocation there cost every
  // work-first spawn 2 instructions on the child's path, which the loop shares a function with (callgrind,
  // fib(24) less fib(20), ws, preemption off: 202 against 200; 200 with it out of line).
  __attribute__((noinline)) static ult::transfer resume_from_loop(worker& w, fiber* f) {
    if (f->klt_holder) [[unlikely]] return go_home(w, f);
    if constexpr (detail::fp_control::kSupported) keep_own_fp_state_before(w, *f);  // the switch brings f's
    return resume_fiber(w, f);
  }

  // Switches to a suspended task; this (idle) fiber parks in the pool until it is reused. The task's count
  // is raised before it becomes the running fiber and lowered by resumed() at the end of the switch: a task
  // that suspended in a spawn of the runtime text did so with its count at 0 (spawn_in_runtime_text), and a
  // tick from here to there lands outside that text, in this function or in Boost.Context's.
  static ult::transfer resume_fiber(worker& w, fiber* target, bool child_done_locally = false) {
    fiber* self = w.current_fiber;
    ++self->epoch;
    detail::preempt_raise(*target);
    w.become(target);
    w.current_task = target->task;
    switch_msg m;
    m.w = &w;
    m.from = self;
    m.action = after::park;
    m.child_done_locally = child_done_locally;
    ult::transfer t;
    switch_with(target->ctx, m, t);
    return t;
  }

  // To the calling thread's own stack (engine_base::serve), which parks this fiber: to leave (at shutdown,
  // or worker 0 at a run's end), or, under KLT-switching, to resume `held`, a task asleep with its kernel
  // thread in a tick's handler (preempt_klt): serve wakes that thread and sleeps as a spare. Returns when the
  // parked fiber is reused, as resume_fiber does.
  // Out of line and cold: a worker goes home once per run or hand-back.
  __attribute__((noinline, cold)) static ult::transfer go_home(worker& w, fiber* held = nullptr) {
    fiber* self = w.current_fiber;
    ++self->epoch;
    w.current_fiber = nullptr;
    w.current_task = nullptr;
    switch_msg m;
    m.w = &w;
    m.from = self;
    m.action = held ? after::klt_resume : after::park;
    m.resume = held;
    ult::transfer t;
    switch_with(w.thread_ctx, m, t);
    return t;
  }

  // A frame from a queue (a help-first child someone else pushed, or a root task): run it on this fiber.
  // Returns the suspended owner to resume if this was its last remote child; `wp` is updated to the worker
  // the fiber is on afterwards.
  static job* run_fresh(worker*& wp, frame& f) {
    // A frame another thread made visible starts with the floating-point state that thread stamped it with
    // (fp_control.hpp); one of this worker's own never shared starts with the thread's, which is its
    // spawner's (on_arrival keeps it across the switch here).
    if (const std::uint64_t fp = f.fp_state()) apply_fp_state(*wp, fp);
    group* g = detail::group_of(f);
    const std::size_t size = f.ops->size, align = f.ops->align;
    const bool pooled = !g || static_cast<void*>(&f) != g->inline_frame;
    worker& now = run_here<true>(*wp, f);
    wp = &now;
    now.current_task = nullptr;
    if (pooled) now.frames.free(&f, size, align);
    if (!g) {  // a root: its end reached the policy (run_here), so the caller may go on
      of(now).finish_root();
      return nullptr;
    }
    of(now).policy_.before_remote_end(now);
    void* waiter = join::complete_remote(*g);
    return waiter ? resume_waiter(now, *g, static_cast<fiber*>(waiter)) : nullptr;
  }

  static job* find_work(worker& w) {
    engine& e = of(w);
    const unsigned relax_per_poll = e.relax_per_poll();
    // Oversubscribed, a round yields the CPU instead (to a worker that may have work), so fewer rounds; and
    // as a round tries up to every other worker, at most about 4096 attempts before sleeping (8192 above
    // 2048): 64 rounds each of 2048 idle workers on 2 CPUs took the runtime's construction 1.7 s, 18 s at
    // 4096 (quadratic in the workers; an outside-user campaign). But at least two: with one, every idle
    // worker of more than 2048 slept after one failed round, and a policy that delivers work to a chosen
    // worker wakes every sleeper to be sure the chosen one wakes (idle.hpp has one word for all), each of
    // which made its round of P - 1 attempts and slept again, at every delivery. adws's parallel_for(0, 1000)
    // took 0.4 s at 2048 workers and 6.7 s at 2049, a parallel_reduce of 2^20 (grain 64) 0.7 s at 2048 and
    // more than 60 s at 3072 (an outside-user campaign); with two rounds 1.3 s at 3072 and 2.0-2.2 s at 4096,
    // where ws's empty run took 0.17 s instead of 0.13 s.
    const bool oversubscribed = e.oversubscribed();
    const unsigned spin_rounds =
        oversubscribed ? std::clamp(4096u / std::max(1u, e.num_workers()), 2u, 64u) : engine_base::kSpinRounds;
    unsigned fails = 0;
    // From here until a job is found the worker runs no task: all of it is the scheduler's time, however
    // soon the first look succeeds (seed 001's non-work; roost-analyze ovr counts work as the rest).
    observe_idle(w, true);
    auto found = [&](job* j) {
      observe_idle(w, false);
      if (w.preempt) [[unlikely]] {
        // For a tick in the task it found (fiber_pool::has_idle). Without one no tick preempts, and a task that
        // spins until another runs spins on: said once (an outside-user campaign saw 2,000 spinners under
        // ulimit -v hang without a word). Here, not in reserve_idle: that is inlined into the runtime text.
        if (!w.fibers.reserve_idle(1)) [[unlikely]] note_no_idle_fiber();
        w.passed_scheduling_point();
      }
      return j;
    };
    for (;;) {
      if (job* j = e.policy_.pop_own(w)) return found(j);
      // Worker 0 once the root has ended: nothing of the run is left to find, so no steal round either (a
      // round of P-1 attempts cost every simulated run of 256 workers 25 us of virtual time).
      // Stopping: every run has ended, so no task is left to steal. Tested before the steal round, not only
      // after it: at shutdown every worker wakes, and each made a round of P-1 attempts first, which
      // destroying a simulated runtime of 4,096 workers took 36-53 s of the host's time to charge (P^2
      // attempts; an outside-user campaign).
      // Either way the worker first resumes its own preempted tasks, as it ran its own queue's above: only a
      // task that outlived its root is there (a child of a group that escaped its creator, docs/user-guide.md,
      // "Ownership"), and once its worker left it was never resumed (worker 0's waited for a later run and were
      // lost with the runtime; 4 of 4 such children started and none ended under ROOST_PREEMPT=signal).
      // And then what the policy holds in queues of no worker's own (policy.hpp, take_left_behind): cab's
      // socket pools dropped such children, never run nor destroyed, when the runtime was destroyed (an
      // outside-user campaign: 15 of 20 runs at 4 workers on two sockets).
      if (w.should_leave() || e.stopping()) [[unlikely]] {
        if (fiber* f = w.preempted.pop()) return found(f);
        return found(e.policy_.take_left_behind(w));
      }
      if (job* j = e.policy_.steal(w)) return found(j);
      // Preempted tasks come last: a spinner waits for work that is queued (seed 003 ch. 3 queues them in
      // the worker's FIFO). Only this worker fills its FIFO, so it never sleeps on a task it holds.
      if (fiber* f = w.preempted.pop()) [[unlikely]] return found(f);
      // Told to leave during the round: back to the top, whose leaving branch looks at what it must first
      // (a review: leaving from here skipped take_left_behind).
      if (e.stopping() || w.should_leave()) continue;
      if (++fails < spin_rounds) {
        if (oversubscribed) platform::os::yield_cpu();
        else for (unsigned i = 0; i < relax_per_poll; ++i) platform::os::cpu_relax();
        continue;
      }
      w.bind_lent_thread();  // worker 0 when it is the caller of run (worker.hpp); a no-op otherwise
      // While nothing runs, neither the stacks of a deep nest of child-first children beyond the worker's share
      // nor what deep tasks touched are kept (fiber.hpp): the trim first, so that the look skips what it unmaps.
      w.fibers.trim_free_stacks();
      w.fibers.release_deep_pages();
      observe_sleep(w, true);
      if (w.preempt) w.sleeping.store(true, std::memory_order_relaxed);
      e.idle().sleep_unless(
          [&] {
            return (P::steals_from_any_deque ? e.any_work_visible() : e.stopping()) ||
                   e.policy_.has_visible_work(w) || w.should_leave();
          });
      if (w.preempt) w.sleeping.store(false, std::memory_order_relaxed);
      observe_sleep(w, false);
      fails = 0;
    }
  }

  P policy_;
};

}  // namespace roost::engine

// Defines engine<P>::spawn_in_runtime_text for one policy, in that policy's engine unit
// (sched/engines/<policy>.cpp), before the engine is instantiated there. Nothing where there is no runtime
// text (the engine then never names it).
#ifdef ROOST_RUNTIME_TEXT
#define ROOST_ENGINE_RUNTIME_TEXT_SPAWN(P)                                                                      \
  template <>                                                                                                   \
  ROOST_RUNTIME_TEXT void roost::engine::engine<P>::spawn_in_runtime_text(                                      \
      roost::detail::worker_abi& wa, roost::detail::group_state& g, roost::detail::task_frame& f) {             \
    spawn_in_runtime_text_body(wa, g, f);                                                                       \
  }
#else
#define ROOST_ENGINE_RUNTIME_TEXT_SPAWN(P)
#endif
