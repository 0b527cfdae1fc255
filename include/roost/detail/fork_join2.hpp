// The two-way join behind parallel_invoke(f, g) and the splits of parallel_for and parallel_reduce: run two
// closures, possibly in parallel, and return when both are done. roost::join, which returns both results, is
// the same join in join_values.hpp, on these helpers.
//
// Where the worker's policy allows it (detail::spawn_path, policy.hpp's inline_join), this is Rayon's
// join done on roost's deque, all in user code: one half goes into a frame in the join's own group state
// and onto the worker's deque, the other runs at once, then the join pops the frame back and, when it is
// still there (the common case: nobody stole it), calls the closure directly, where the compiler can
// inline it: no frame to name, no operations table, no stack switch. A stolen half is joined by the engine
// (engine_wait), as any other help-first child.
//
// Which half is pushed keeps the policy's order. Help-first (ws-help): the first closure is the spawned
// child and is pushed, the caller goes on with the second, as tg.run(f); g(); tg.wait() does. Work-first
// (ws, hws): the first closure is the child and runs at once; the second is what is left of the parent up
// to the join, and is what a thief takes, the seeds' continuation stealing (seed 000 §5, "Cilk-a") with
// the continuation held as a closure instead of as a suspended stack. A task_group cannot do that: its
// continuation is arbitrary code, so ws pays a stack switch per tg.run() (engine/README.md).
//
// adws does the same where its join is a plain work-first spawn, outside a search: onto the queue its
// continuation would go to, which is the migration queue's own end while it runs migrated work (seed 003
// Algorithm 4.3), and it lets the engine join while a search-root task waits in its mailbox, which a
// work-first child's end would run first. During a search the join is dealt. adws-ml does it on the leaf
// level, where a worker represents its own memory group; above it a join may descend. cab does it in its
// intra-socket tier, whose spawns are child-first onto the core's deque; cats in its leaf and intra-socket
// tiers, while it runs as ws, and while profiling below the top of the tree it profiles. Those four take
// ws's path (inline_join, worker_abi::names_join_queue), whose windows address the queue they name now
// (worker_abi::join_window): on it the join is ws's to the instruction, the worker's own deque or adws's
// migration queue alike, and where they name none the windows stay shut and the join's slow paths let the
// engine join (abi.hpp, name_join_queue).
//
// Where a policy names no queue, and every policy while hooks are installed, the join takes the engine's
// path: a task_group with the caller's work hints, so ADWS divides its range by them (seed 003 §4.2).
//
// What the compiler is left to keep in registers (issue #25). A closure whose address goes anywhere lives
// in memory on every path of the caller (GCC's escape analysis does not follow paths), and each of the two
// inline paths pushes the closure the other runs at once: so the join hands on copies (join_handle_t), where
// a copy cannot be told from the closure, and calls the frame's copy when the pushed half comes back. And no
// value of the caller is live across a call on a cold path: the push's slow path and the engine's path are
// out of line and start over on the closures' copies (join_slow, join_on_engine), else GCC keeps a capture
// in a callee-saved register from the caller's entry on, which puts the register saves ahead of the caller's
// early return (fib_invoke's `n < 2`). src/engine/README.md, "Where a spawn's time goes", has the figures.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <exception>
#include <functional>
#include <type_traits>

#include "roost/detail/abi.hpp"
#include "roost/detail/spawn_inline.hpp"
#include "roost/task_group.hpp"

namespace roost::detail {

// Whether the two-way join hands on a copy of a closure of type F instead of a reference to it (issue #25):
// trivially copyable (a lambda whose captures are references and scalars, which is what a fork-join program
// passes: its copy is its bytes, and no code of the program runs to make it), callable as const (so that no
// call can change it: the caller's object and a copy are then the same to every observer), and its frame
// fits a group's inline slot. Why it matters: a closure whose address goes anywhere lives in memory on every
// path of the caller, its captures stored and loaded again around each call (GCC's escape analysis does not
// follow paths); with copies handed on, neither closure's address leaves the caller (src/engine/README.md,
// "Copies of the closures, the engine's path out of line").
template <class F>
inline constexpr bool join_copies_v = std::is_trivially_copyable_v<F> && std::is_invocable_v<const F&> &&
                                      sizeof(closure_frame<F>) <= group_state::kInlineFrameBytes &&
                                      alignof(closure_frame<F>) <= 16;
// What the join hands on of a closure `f`: a copy where join_copies_v allows it, else a reference. Not
// std::ref(f), which unwraps a std::reference_wrapper argument (parallel_invoke(std::cref(f), ...) did not
// compile: an outside-user campaign).
template <class F>
using join_handle_t = std::conditional_t<join_copies_v<std::remove_cv_t<F>>, std::remove_cv_t<F>,
                                         std::reference_wrapper<F>>;

// Pops the pushed half back off the deque of the worker the caller runs on now (the queue its policy names,
// for a policy that names one), if it lies on top there (abi.hpp, pop_first_child_on). False where the engine
// must join instead: hooks were installed since (every path is then `engine`), or the policy names no queue
// now or has a job waiting that must run first.
template <spawn_path P>
ROOST_DETAIL_SPAWN_INLINE inline bool pop_pushed_back(group_state& g) {
  return pop_first_child_on<P>(running_worker(), g);  // the path through the deque's floor (abi.hpp)
}

// Joins the pushed half: runs it here if it still lies on top of the join's queue on the worker the caller
// runs on now, else (stolen, or the engine must join) lets the engine join it, which rethrows what it
// threw. The caller may have moved while the other half ran (a join inside it that waited, or, under
// work-first, a continuation of it that a thief resumed); the frame is ours to run exactly when it lies
// there (abi.hpp, try_join_first_child): a frame lies in at most one queue. With hooks installed since, the
// engine runs it as a named and observed task.
template <spawn_path P, class Pushed>
ROOST_DETAIL_SPAWN_INLINE inline void join_pushed(group_state& g, Pushed& pushed) {
  if (pop_pushed_back<P>(g)) [[likely]] {
    pushed();  // the frame holds only a reference: nothing to destroy
    return;
  }
  settle_join_slot(g);  // the group's balance and error slot, unwritten until now (task_frame.hpp)
  fiber_abi* fb = running_fiber();
  worker_abi* now = fb->worker;
  g.for_engine_join(fb);
  now->engine_wait(*now, g);
}

// Whether a pushed half is roost::join's (join_values.hpp specialises it for its value_half).
template <class T>
inline constexpr bool is_value_half_v = false;

// The rest of the join after the other half threw, called from its handler: the pushed half still runs (as
// a task_group's children do when the group is destroyed by an exception), then the serial program's
// exception leaves, the first closure's: help-first pushed it, work-first ran it here (the one being
// handled, which `throw;` rethrows). Out of line and noreturn, so that the caller's handler holds nothing
// across a call: the pushed half's exception_ptr and its address held there took two callee-saved registers,
// saved and restored at every join, thrown or not (callgrind, fib-invoke: ws-help 59 -> 55 instructions a
// spawn, ws 62 -> 58).
template <spawn_path P, class Pushed>
[[noreturn]] __attribute__((noinline, cold)) void leave_after_throw(group_state& g, Pushed& pushed) {
  std::exception_ptr pushed_error;
  try {
    join_pushed<P>(g, pushed);
    // roost::join's pushed half made a result that nobody takes now (join_values.hpp, value_half).
    if constexpr (is_value_half_v<Pushed>) pushed.discard_result();
  } catch (...) {
    pushed_error = std::current_exception();
  }
  if (P == spawn_path::inline_help_first && pushed_error) std::rethrow_exception(pushed_error);
  throw;
}

// Runs the half that is not pushed, joining the pushed one before an exception of it leaves. Plain `inline`,
// never always_inline, so that the handler stays out of the caller until GCC has split it (issue #25). GCC
// splits a function (ipa-split, "partial inlining") right after its early inlining, and only where the part to
// split off holds no exception-handling construct (resx, eh dispatch); it is what lets the callers of a
// recursion test its leaf case themselves (fib_invoke's `if (n < 2) return n;`) and call the rest only when
// that fails, without a call and a return for each leaf. Forced inline, this handler sat in the join's caller
// from the start, and nothing written with parallel_invoke was split. Left to the inliner, it is inlined after
// the split (the inliner that runs then takes small `inline` functions called once): fib-invoke at one worker
// (fib(35), process CPU time) 0.93x the time under ws-help and 0.88x under ws, the instructions unchanged
// (src/engine/README.md, "The leaf test in the caller"). Where GCC keeps it out of line (a large closure), the
// join pays a call for it, never a change of behaviour (fib-invoke took 1.45x the time under ws-help with it
// noinline).
template <spawn_path P, class Pushed, class Here>
inline void run_guarded(group_state& g, Pushed& pushed, Here& here) {
  try {
    here();
  } catch (...) {
    // When both halves throw, the first closure's exception leaves, the one the serial program throws.
    leave_after_throw<P>(g, pushed);
  }
}

// How the join pushes: the window alone (`window_only`, fork_join2's: false, having pushed nothing, where the
// window sends it to its slow path, and the caller starts over out of line, in join_slow); the slow path alone
// (`slow_only`, join_slow's, which the window just sent there); or both in turn (`full`, for a caller that
// runs the whole join in one place: the tests of a policy's queues, tests/test_join.cpp). The work-first
// join's window is that of the queue the worker's policy names now (worker_abi::join_window).
enum class join_push { full, window_only, slow_only };

// Returns false only on path inline_join, having run nothing, when the worker's policy names no queue for its
// join now (an ADWS search deals it: the engine joins); with `window_only`, also where the push's window sent
// it to its slow path. `w`: the worker the calling thread serves (running_worker()), read by the caller,
// which ran no code since.
template <spawn_path P, join_push kPush = join_push::full, class Pushed, class Here>
ROOST_DETAIL_SPAWN_INLINE inline bool join_inline(worker_abi& w, Pushed& pushed, Here& here) {
  group_state g{group_state::inline_join_t{}};
  using handle_t = join_handle_t<Pushed>;
  using frame_t = closure_frame<handle_t>;
  static_assert(sizeof(frame_t) <= group_state::kInlineFrameBytes && alignof(frame_t) <= 16);
  auto* f = ::new (static_cast<void*>(g.inline_frame)) frame_t(handle_t(pushed), typename frame_t::join_unnamed_t{});
  // What runs the pushed half when it comes back: the frame's copy, so that the half's captures are read from
  // the frame and nothing of it stays live in a register across the other half (a callee-saved register
  // holding a capture from the function's entry kept GCC from shrink-wrapping fib_invoke); or the original,
  // which a reference reaches with one load less. Either way trivially destructible: nothing to destroy.
  auto& pushed_callee = [&]() -> auto& {
    if constexpr (std::is_same_v<handle_t, std::reference_wrapper<Pushed>>) return pushed;
    else return f->fn;
  }();
  // Onto the deque of the worker the caller's task runs on (abi.hpp). Where the policy names no queue,
  // nothing was pushed, and the frame holds a reference or a trivially destructible copy: nothing to undo.
  if constexpr (kPush == join_push::window_only) {
    if (!push_first_child_window_on<P>(w, g, *f)) [[unlikely]] return false;
  } else if constexpr (kPush == join_push::slow_only) {
    if (!push_first_child_slow_here(g, *f)) [[unlikely]] return false;
  } else {
    if (!push_first_child_on<P>(w, g, *f)) [[unlikely]] return false;
  }
  run_guarded<P>(g, pushed_callee, here);
  join_pushed<P>(g, pushed_callee);
  return true;
}

// A tracer of every task (ROOST_TRACE_DEPTH=all) records both halves as tasks of their own, each with the
// joining task as its spawner (user-guide.md, "Tracing"): roost-analyze mapping places each leaf piece of a
// loop where it ran. The engine's path below runs the second in its caller's span, so half the leaves were
// no tasks (an outside-user campaign). The serial program's exception leaves when both throw, as below.
template <class F, class G>
__attribute__((noinline)) void join_both_as_tasks(F& first, G& second, double total_work, double first_work) {
  std::exception_ptr first_error, second_error;
  {
    task_group tg(total_work);
    tg.run([&] {
      try {
        first();
      } catch (...) {
        first_error = std::current_exception();
      }
    }, first_work);
    tg.run([&] {
      try {
        second();
      } catch (...) {
        second_error = std::current_exception();
      }
    }, total_work >= first_work ? total_work - first_work : 0.0);
    tg.wait();
  }
  if (first_error) std::rethrow_exception(first_error);
  if (second_error) std::rethrow_exception(second_error);
}

// The engine's path (a task group) and the tracer's, out of line and given the closures' handles by value
// (join_handle_t): inlined, the group's spawn was a call after which the second closure's captures were still
// needed, so GCC kept them in callee-saved registers from the caller's entry on, every path's prologue.
template <class FirstHandle, class SecondHandle>
__attribute__((noinline)) void join_on_engine(const char* what, FirstHandle first, SecondHandle second,
                                              double total_work, double first_work) {
  current_fiber_or_throw(what);
  if (hook_bits() & kHookTracerEveryTask) [[unlikely]] return join_both_as_tasks(first, second, total_work, first_work);
  task_group tg(total_work);
  tg.run(std::ref(first), first_work);
  try {
    second();
  } catch (...) {
    // The first closure's exception, if it threw one, leaves instead (the serial program's): the group's
    // destructor would drop it while this one unwinds.
    std::exception_ptr second_error = std::current_exception();
    tg.wait();
    std::rethrow_exception(second_error);
  }
  tg.wait();
}

// The two-way join where the push's window sent it to its slow path: the same join again, out of line, on the
// closures' handles, then the engine's path where the policy names no queue. The caller holds nothing across
// this call: had it run the slow push itself and gone on, the closures' captures would have been live across
// that call, in callee-saved registers from the caller's entry on (GCC then saves them before fib_invoke's
// `n < 2` test). `w`: the worker the caller read, with no code run since.
// A worker whose policy names another queue than its deque does not come here at every join: the work-first
// join's windows address the queue named (worker_abi::join_window), and this function runs only where they
// need the C++ path.
template <spawn_path P, class FirstHandle, class SecondHandle>
__attribute__((noinline)) void join_slow(worker_abi& w, const char* what, FirstHandle first, SecondHandle second,
                                         double total_work, double first_work) {
  if constexpr (P == spawn_path::inline_help_first) {
    join_inline<P, join_push::slow_only>(w, first, second);
  } else {
    if (join_inline<P, join_push::slow_only>(w, second, first)) return;
    join_on_engine(what, first, second, total_work, first_work);
  }
}

// Runs first() and second(), possibly in parallel; returns when both are done. When both throw, first()'s
// exception leaves, whatever the schedule: the one the serial program, which runs first() before second(),
// would throw; so parallel_for and parallel_reduce rethrow their leftmost throwing piece's. total_work and
// first_work are the work hints of the engine's path (finite, >= 0; ADWS divides by them); the inline path
// has no use for them. `what` names the caller in the error outside a task.
template <class F, class G>
ROOST_DETAIL_SPAWN_INLINE inline void fork_join2(const char* what, F& first, G& second, double total_work,
                                                      double first_work) {
  // The worker the thread serves: outside every worker g_no_worker, whose path is `engine`, so the test for a
  // caller outside a task waits for the engine's path (abi.hpp, t_running_worker).
  worker_abi& w = running_worker();
  // Tests in this order, not a switch: with four cases GCC's switch cost ws-help 6 instructions per join
  // and saved ws 3 (callgrind, fib-invoke: 106 and 101 against 101 and 104).
  const spawn_path path = w.path.load(std::memory_order_relaxed);
  using first_handle = join_handle_t<F>;
  using second_handle = join_handle_t<G>;
  if (path == spawn_path::inline_help_first) {
    if (join_inline<spawn_path::inline_help_first, join_push::window_only>(w, first, second)) [[likely]] return;
    return join_slow<spawn_path::inline_help_first>(w, what, first_handle(first), second_handle(second), total_work,
                                                    first_work);
  }
  // Likely, once not help-first: ws (the default) and the policies that take its path. GCC then lays the work-first
  // join out straight after this test instead of behind the engine's call, two taken branches a join instead of
  // three: fib-invoke under ws 0.93-0.97x the time, adws 0.95x, ws-help's unchanged (fib(35), alternated runs of
  // the two aligned builds; 58 and 55 instructions a spawn either way). Testing inline_join first instead made
  // ws 0.93x and ws-help 1.15x (#25).
  if (path == spawn_path::inline_join) [[likely]] {
    // The window is that of the queue the worker's policy names now (worker_abi::join_window): adws's and
    // adws-ml's migration queue while the worker runs migrated work (on fib-invoke at two workers, one
    // worker's whole run) as much as ws's deque (issue #25, src/engine/README.md).
    if (join_inline<spawn_path::inline_join, join_push::window_only>(w, second, first)) [[likely]] return;
    return join_slow<spawn_path::inline_join>(w, what, first_handle(first), second_handle(second), total_work,
                                              first_work);
  }
  join_on_engine(what, first_handle(first), second_handle(second), total_work, first_work);
}

}  // namespace roost::detail

#include "roost/detail/min_max_back.hpp"
