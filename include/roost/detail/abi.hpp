// The worker ABI: the part of a worker and of a fiber that user code touches directly, so that the common
// help-first spawn and its join cost no call into the library (the idea of OpenCilk's cilk ABI, where
// compiler-generated code pushes onto the worker's deque with the THE protocol).
//
// How user code finds its worker: every task runs on a fiber, and a fiber's record says which worker runs
// it *now* (the engine updates it at every resume). A task_group keeps the fiber it was made on (its
// owner's), checks at every spawn and wait that the caller runs on it (the one check that tells the owner
// from any other task, and from code outside the runtime), and reads fiber->worker each time, so a task that
// moved to another thread during a join sees its new worker.
//
// The fiber is read from t_running_fiber, an initial-exec __thread variable read inline: one
// %fs-relative load, no call, no TLS wrapper. Its *value* may be kept by the compiler across a migration
// and still be right: the fiber a task runs on does not change when the task moves, and every thread that
// resumes it sets t_running_fiber to it. What must never be kept is the variable's *address* (the old
// thread's slot): initial-exec scalar reads are segment-relative loads that hold no address in a register.
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>
#include <new>

#include "roost/detail/task_frame.hpp"
#include "roost/detail/ws_deque.hpp"

namespace roost {
class task_observer;
}

namespace roost::detail {

// How user code may spawn on this worker: through the engine (any policy); inline as help-first onto the
// worker's own deque (policies whose spawn decision is always exactly that, e.g. ws-help), which covers
// tg.run() and the two-way join; or inline for the two-way join only (inline_join: work-first policies whose
// deque and order the inline join keeps, e.g. ws; fork_join2.hpp); or inline for the two-way join onto the
// queue the policy names at the moment, through the engine while it names none (inline_join_queue: adws,
// whose joins are ws's except while a search deals them; worker_abi::join_queue). The engine keeps it at
// `engine` while an observer or a simulation is installed, so that user code tests one byte per spawn and
// join, not the path and the hook flag (engine_base.cpp, refresh_spawn_paths).
//
// While preemption is on (ROOST_PREEMPT=signal), inline_help_first and inline_join become their `_marked`
// twins: the same code, with each deque operation inside an inline_op_mark (below), so that a tick never
// suspends a task half way through pushing or popping its worker's deque. Separate values, not a flag tested
// at each operation: with preemption off the inline paths run exactly the instructions they ran before.
// The two-way join tests for them (fork_join2.hpp); a task_group does not (no other path should pay the
// compare), and reaches the marked help-first spawn and join through the engine's entry points instead.
enum class spawn_path : std::uint8_t {
  engine,
  inline_help_first,
  inline_join,
  inline_join_queue,
  inline_help_first_marked,
  inline_join_marked,
};
// What a marked path does, unmarked (the closure it pushes, the queue, the order).
constexpr spawn_path unmarked(spawn_path p) {
  return p == spawn_path::inline_help_first_marked ? spawn_path::inline_help_first
         : p == spawn_path::inline_join_marked     ? spawn_path::inline_join
                                                   : p;
}
constexpr bool is_marked(spawn_path p) {
  return p == spawn_path::inline_help_first_marked || p == spawn_path::inline_join_marked;
}

struct worker_abi {
  ws_deque<job> deque;
  // Path inline_join_queue only. Both written by the policy on the worker's own thread, read by the tasks
  // it runs (plain fields). join_queue: where a join pushes its half now, the queue a continuation would go
  // to; nullptr while the policy must see the join (an ADWS search deals it). run_first: a slot other
  // workers fill with a job to run before the worker's own (ADWS's mailbox); a join that finds it full
  // lets the engine join, which runs that job first, as a work-first child's end does.
  // In a line of their own, between the deque and the line that every switch reads: that line is full
  // (engine/worker.hpp), and moving the deque off the worker's start cost 2-7 instructions per spawn.
  ws_deque<job>* join_queue = nullptr;
  const std::atomic<job*>* run_first = nullptr;
  // While preemption is on: the scheduling points this worker passed, 2 for each (a spawn or wait through
  // the engine, a task taken from its loop, an inline deque operation of a marked path), odd while such an
  // inline operation is under way. A tick preempts only where it is even and unchanged since the worker's
  // previous tick; the chained timer passes its tick only to a worker where it is unchanged
  // (engine/preemption.cpp). Written by the worker's thread only (plain moves), read by its handler and by
  // the chain's; in this line because the marked inline paths write it from user code.
  std::atomic<std::uint64_t> sched_points{0};
  alignas(64) task_id* current_task = nullptr;
  unsigned id = 0;
  // Written by the engine at start and whenever hooks are installed or removed (any thread), read by the
  // owner at each spawn and join: relaxed, a plain byte load.
  std::atomic<spawn_path> path{spawn_path::engine};
  // The engine's spawn and join for this worker's scheduler (engine<P>, set when the engine starts). User
  // code calls them directly, through the worker it already holds: one indirect call for what the inline
  // paths below do not cover, no call into the library first.
  void (*engine_spawn)(worker_abi&, group_state&, task_frame&) = nullptr;
  void (*engine_wait)(worker_abi&, group_state&) = nullptr;
};

struct fiber_abi : job {
  worker_abi* worker = nullptr;  // the worker running this fiber now
  std::uint64_t epoch = 0;       // bumped whenever the fiber is switched away from
  // Preemption (include/roost/preempt.hpp): nonzero while this fiber runs the runtime's own code, or a
  // task's roost::non_preemptible region; the timer signal's handler preempts only at zero. A fiber starts
  // in the runtime (1) and is at 0 only inside a task's body. Written by its own thread only, read by that
  // thread's signal handler: relaxed loads and stores (plain moves) with signal fences, never an RMW.
  std::atomic<std::uint32_t> preempt_off{1};
  // How a tick preempts this fiber's task (roost::preempt_as): 0 as the runtime's ROOST_PREEMPT says, 1 by
  // signal-yield, 2 by KLT-switching. Written and read as preempt_off is.
  std::atomic<std::uint8_t> preempt_kind{0};
};

// Brackets one inline deque operation of a marked path (a no-op unless Marked): the worker's scheduling-point
// count is odd inside (worker_abi::sched_points). The signal fences keep the operation's loads and stores
// between the two stores, as the handler, on this thread, must see them; no RMW, and the value stays in a
// register between the two.
template <bool Marked>
struct inline_op_mark {
  explicit inline_op_mark(worker_abi&) noexcept {}
};
template <>
struct inline_op_mark<true> {
  std::atomic<std::uint64_t>& c;
  std::uint64_t n;
  explicit inline_op_mark(worker_abi& w) noexcept : c(w.sched_points), n(c.load(std::memory_order_relaxed)) {
    c.store(n + 1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  ~inline_op_mark() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    c.store(n + 2, std::memory_order_relaxed);
  }
  inline_op_mark(const inline_op_mark&) = delete;
  inline_op_mark& operator=(const inline_op_mark&) = delete;
};

// Keeps the fiber `f` (the caller's, or nullptr outside a task) from being preempted while it lives. The
// destructor runs on the same stack, hence for the same fiber, wherever the task moved meanwhile.
struct no_preempt_scope {
  fiber_abi* f;
  explicit no_preempt_scope(fiber_abi* fb) noexcept : f(fb) {
    if (f) f->preempt_off.store(f->preempt_off.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // nothing of the region moves above the store
  }
  ~no_preempt_scope() {
    std::atomic_signal_fence(std::memory_order_seq_cst);  // nor below this one
    if (f) f->preempt_off.store(f->preempt_off.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  }
  no_preempt_scope(const no_preempt_scope&) = delete;
  no_preempt_scope& operator=(const no_preempt_scope&) = delete;
};

// The engine's side: a task's body runs inside one of these, the only place where the count drops to 0.
// It wraps an opaque call (the closure through its operations table), across which the compiler moves no
// access to the engine's escaped state; what remains to order is the engine's own code on either side:
// the release store keeps the stores before the body above it (a plain move on x86-64), the signal fence
// keeps the code after the body below the raise.
inline void preempt_lower(fiber_abi& f) {
  f.preempt_off.store(f.preempt_off.load(std::memory_order_relaxed) - 1, std::memory_order_release);
}
inline void preempt_raise(fiber_abi& f) {
  f.preempt_off.store(f.preempt_off.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
}
struct preemptible_body {
  fiber_abi* f;
  explicit preemptible_body(fiber_abi* fb) noexcept : f(fb) { preempt_lower(*f); }
  ~preemptible_body() { preempt_raise(*f); }
  preemptible_body(const preemptible_body&) = delete;
  preemptible_body& operator=(const preemptible_body&) = delete;
};

// The fiber the calling task runs on, nullptr outside a roost task (set by engine::worker::become).
extern __thread fiber_abi* t_running_fiber __attribute__((tls_model("initial-exec")));

// The fiber the calling task runs on now (see the file's head). A plain initial-exec read re-reads the
// thread's segment each time, so it stays right across a migration; a sanitizer build instead computes the
// slot's address and may keep it across one (TSan saw a wait read the old thread's slot), so there the read
// is out of line, where no address can be kept from before a switch.
fiber_abi* running_fiber_out_of_line();
inline fiber_abi* running_fiber() {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  return running_fiber_out_of_line();
#else
  return t_running_fiber;
#endif
}

// Out of line (src/api/task_group.cpp).
[[noreturn]] void throw_outside_task(const char* call);  // usage_error
// usage_error for a spawn or wait by a task that does not own g (fb: its fiber, nullptr outside a task), or
// by one of g's own children while the owner joins g (group_state::kJoining).
[[noreturn]] void throw_not_owner(const char* call, const fiber_abi* fb, const group_state& g);
inline fiber_abi* current_fiber_or_throw(const char* call) {
  fiber_abi* f = running_fiber();
  if (!f) [[unlikely]] throw_outside_task(call);
  return f;
}
// Observation and tracing hooks: one flag, so that with neither installed a hook point costs one relaxed
// load and a branch. User code does not test it: while an observer or a simulation is installed no worker's
// path is inline (both must see every task); a tracer alone leaves the inline paths on, and what they run
// is part of the task that spawned it. The engine's hook points are in src/engine/observe.hpp, the
// dispatch in src/api/observer.cpp.
extern std::atomic<unsigned> g_hooks;
inline constexpr unsigned kHookObserver = 1, kHookTracer = 2, kHookSim = 4;
// The deepest task the hooks see where it was spawned (a work-first child, a child popped at its join):
// every task while an observer or a simulation is installed, ROOST_TRACE_DEPTH while only a tracer is.
// Tasks a worker takes from its scheduling loop, and resumed ones, are always seen (observe.hpp).
extern std::atomic<std::uint32_t> g_hook_depth;
// Whether an observer or a simulation is installed: every spawn must then go through the engine. seq_cst,
// as the flag's writers (src/api/final.cpp reads it after storing a worker's path).
inline bool hooks_see_every_task() {
#ifdef ROOST_NO_HOOKS
  return false;
#else
  return (g_hooks.load() & (kHookObserver | kHookSim)) != 0;
#endif
}
// Built with -DROOST_HOOKS=OFF (CMake), the hooks compile out: no observer, no tracing.
inline bool hooks_installed() {
#ifdef ROOST_NO_HOOKS
  return false;
#else
  return g_hooks.load(std::memory_order_relaxed) != 0;
#endif
}

// Keeps the first exception of a group's children (any thread). Allocation failure keeps the address of
// g_exception_lost_to_oom instead, which the join reports as std::bad_alloc: never lost silently.
extern std::exception_ptr g_exception_lost_to_oom;  // a marker only, never thrown (src/api/task_group.cpp)
inline void record_exception(group_state& g, std::exception_ptr e) {
  if (g.error.load(std::memory_order_relaxed) != nullptr) return;  // not the first
  std::exception_ptr* p = new (std::nothrow) std::exception_ptr(std::move(e));
  if (!p) p = &g_exception_lost_to_oom;
  std::exception_ptr* expected = nullptr;
  if (!g.error.compare_exchange_strong(expected, p, std::memory_order_acq_rel, std::memory_order_relaxed) &&
      p != &g_exception_lost_to_oom)
    delete p;
}
[[noreturn]] void rethrow_group_error(std::exception_ptr* e);  // frees e (src/api/task_group.cpp)

// After a join: ready for reuse; rethrows the first exception a child threw.
inline void finish_join(group_state& g) {
  g.spawned = 0;
  g.local_done = 0;
  if (std::exception_ptr* e = g.error.load(std::memory_order_acquire)) [[unlikely]] {
    g.error.store(nullptr, std::memory_order_relaxed);
    rethrow_group_error(e);
  }
}

// Help-first spawn of the group's first child, built in g.inline_frame. Only on a worker whose path is
// inline_help_first (the caller checks), so only while no observer or tracer is installed: then nobody
// reads task identities, so the child's id and hint are not even written (job::kind::fresh_unnamed: the
// engine names it, a child of an unrecorded parent, if it ever runs it, after a steal or in its own join)
// and the worker's current task is not switched to it, which is most of what a spawn and join would cost
// otherwise. With hooks installed, the engine spawns and joins it and names it. `deque` is the deque of the
// worker the owner's fiber runs on (the engine's join pops the group's children back from there).
template <bool Marked = false>
__attribute__((always_inline)) inline void push_first_child(group_state& g, fiber_abi& fb, ws_deque<job>& deque,
                                                         task_frame& f) {
  inline_op_mark<Marked> mark(*fb.worker);
  g.spawned = 1;
  g.base_epoch = fb.epoch;
  const std::int64_t b = deque.bottom_index();
  g.queue_base = b;
  deque.push_at(b, &f);  // a private push needs no wake-up: only sharing does (ws_deque.hpp)
}

// Pops the group's only child, the frame in its inline slot, off q (a queue of the worker its owner runs on
// now) if it lies on top there, unstarted and ours; otherwise puts back what it popped and returns false.
template <bool Marked = false>
__attribute__((always_inline)) inline bool pop_first_child(group_state& g, worker_abi& w, ws_deque<job>& q) {
  inline_op_mark<Marked> mark(w);
  job* j = q.pop();
  if (j != reinterpret_cast<task_frame*>(g.inline_frame)) [[unlikely]] {
    if (j) q.push(j);  // not ours: leave it as it was
    return false;
  }
  return true;
}

// Join of a group whose only child is the unstolen inline frame: pop it back and run it here. Returns
// false (having changed nothing) when that is not the case, or when the worker's path is no longer inline
// (hooks were installed since: the child must then be observed as a task); the engine's join takes over.
//
// Why popping and comparing is enough, without the base checks of the engine's join: the frame's address
// is the group's, so the job on top of the deque of the worker the owner runs on now is this child exactly
// when the child is still unstarted and owned by this worker (a frame is in at most one deque, and nested
// groups joined before we got here, so nothing of theirs lies above it). Anything else means it was
// stolen, or the owner moved; the job is put back as it was and the engine decides.
template <bool Marked>
__attribute__((always_inline)) inline bool join_first_child_on(group_state& g, worker_abi* w) {
  if (!pop_first_child<Marked>(g, *w, w->deque)) [[unlikely]] return false;
  auto* f = reinterpret_cast<task_frame*>(g.inline_frame);
  // The child is the group's only one and it is ours now: nobody else can record an exception in the group
  // or be waited for, so the join is complete once it returns, and an exception it throws leaves wait()
  // directly, as the join's rethrow would have (run_in_place destroys the closure either way). The group is
  // reset after the call, not before: the compiler then knows it is reset when the destructor tests it.
  // The child runs on the owner's fiber: marked as joining, the group tells its run() and wait() from the
  // owner's (the owner is inside this call until the child returns).
  g.spawned = group_state::kJoining | 1;
  try {
    f->ops->run_in_place(f);
  } catch (...) {
    g.spawned = 0;  // the destructor, run by the unwinding, must not wait for this child again
    throw;
  }
  g.spawned = 0;  // local_done is 0: ready for reuse
  return true;
}
__attribute__((always_inline)) inline bool try_join_first_child(group_state& g) {
  // The caller is the owner (task_group::wait checked): anyone else would pop the owner's deque from
  // another thread.
  worker_abi* w = g.owner_fiber->worker;
  // Not the marked twin: the engine's entry points do that one (engine.hpp, spawn_first_marked), so that
  // no other path pays a compare for it here.
  if (w->path.load(std::memory_order_relaxed) != spawn_path::inline_help_first) [[unlikely]] return false;
  return join_first_child_on<false>(g, w);
}

}  // namespace roost::detail
