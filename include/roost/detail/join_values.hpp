// The two-way join that returns both closures' results, behind roost::join(f, g) (Rayon's `join`): the same
// join as fork_join2.hpp's, on the same paths, windows and engine, but no result goes through a reference to
// the caller, so that a recursion written with it can become a loop.
//
// Why a second form (issue #25). A closure of parallel_invoke writes its result through a reference to a
// local of the caller, and that local is live across the join's last call, the pushed half's: GCC must
// assume the call may write it, and makes no tail call of it. Lace's fib has no such local: its SYNC calls
// the task function directly and last, and `return m + k` adds that call's result, which GCC's tail-recursion
// pass turns into a loop with an accumulator, one call a spawn instead of two (src/engine/README.md, "The loop
// GCC makes of Lace's fib"). Here the join's whole state (its group, the frame in the group's inline slot,
// the place a thief's result goes) lives in a scope that ends before the pushed half, popped back, is called
// with the values it was pushed with: no local whose address went to the deque is live at that call, which
// is then the function's last when the caller returns `a + b`, and the loop forms (GCC 12 checks the live
// addressable locals at a tail call, not every one the function has). A stolen half's result reaches the
// caller through a pointer its frame holds into a slot of that scope, on a path that makes no tail call.
// Results whose move may throw take parallel_invoke's join instead (join_values_by_invoke).
//
// Kept from fork_join2.hpp: which half is pushed (help-first the first, work-first the second), the closures'
// copies (join_copies_v: a copy where it cannot be told from the closure), the exception of the first
// closure leaving when both throw, the push's slow path and the engine's path out of line on the copies,
// and the handler of the half run at once in a plain `inline` function, so that GCC splits the caller's leaf
// test off first ("The leaf test in the caller").
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <functional>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include "roost/detail/fork_join2.hpp"

namespace roost::detail {

// What a closure of roost::join returns, and whether it may: an object type (not void, not a reference), made
// by moving; a const one comes back as the type itself, which the caller may move (call_as). The result of a
// copy is that of a call as const (join_copies_v), which must be the same type.
template <class F>
using join_result_t = std::remove_cv_t<std::invoke_result_t<F&>>;
// f()'s result as a prvalue of R, its type without const: a `const T` prvalue initialises R in place (no
// copy, no move), so a const move-only result comes back too.
template <class R, class F>
ROOST_DETAIL_SPAWN_INLINE inline R call_as(F&& f) {
  return std::forward<F>(f)();
}
template <class F>
inline constexpr bool join_result_ok_v = std::is_object_v<join_result_t<F>> &&
                                         !std::is_array_v<join_result_t<F>> &&
                                         std::is_move_constructible_v<join_result_t<F>>;

// Storage for a T that the join constructs and destroys itself.
template <class T>
union join_slot {
  T v;
  join_slot() noexcept {}
  ~join_slot() {}
};

// The pushed half as its frame holds it: the closure (a copy, or a reference: join_handle_t) and where a run
// other than the join's direct call puts its result (a thief's, the engine's, or the join after the other half
// threw). Trivially copyable and destructible like the handle: nothing of it is destroyed.
template <class Handle, class R>
struct value_half {
  Handle fn;
  R* out;
  void operator()() const { ::new (static_cast<void*>(out)) R(call_as<R>(std::as_const(fn))); }
  // After the other half threw: the result is dropped with the join (fork_join2.hpp, leave_after_throw).
  void discard_result() const noexcept { out->~R(); }
};
template <class Handle, class R>
inline constexpr bool is_value_half_v<value_half<Handle, R>> = true;  // fork_join2.hpp, leave_after_throw

// A copy of a closure of roost::join only where fork_join2's would be one and its frame, with the result's
// address, fits the inline slot, and where a call as const returns what the caller's call would.
template <class F>
constexpr bool join_value_copies() {
  if constexpr (!std::is_trivially_copyable_v<F> || !std::is_invocable_v<const F&>) {
    return false;
  } else {
    using frame_t = closure_frame<value_half<F, join_result_t<F>>>;
    return std::is_same_v<std::remove_cv_t<std::invoke_result_t<const F&>>, join_result_t<F>> &&
           sizeof(frame_t) <= group_state::kInlineFrameBytes && alignof(frame_t) <= 16;
  }
}
template <class F>
inline constexpr bool join_value_copies_v = join_value_copies<F>();
template <class F>
using join_value_handle_t =
    std::conditional_t<join_value_copies_v<std::remove_cv_t<F>>, std::remove_cv_t<F>, std::reference_wrapper<F>>;

template <class F, class G>
using join_values_t = std::pair<join_result_t<F>, join_result_t<G>>;

// Whether both results move and are destroyed without throwing, which the inline join's moves and
// destructions after its scope, and the stolen path's around the wait, assume: one that threw there would
// leave a half unrun, a result undestroyed, or the scope a thief writes into unwound.
template <class R>
inline constexpr bool join_result_nothrow_v = std::is_nothrow_move_constructible_v<R> &&
                                              std::is_nothrow_destructible_v<R>;
template <class F, class G>
inline constexpr bool join_values_inline_ok_v = join_result_nothrow_v<join_result_t<F>> &&
                                                join_result_nothrow_v<join_result_t<G>>;

// roost::join through parallel_invoke's join: each half's result into a slot of this frame, then the pair,
// whose moves come after both halves ran. Where a result's move or destructor may throw, and for the
// engine's path (a task group, or each half a task of its own under a tracer of every task: fork_join2's
// join_on_engine, with its order of the exceptions). No loop for GCC to make; correct for any result. Given the
// closures' handles by value (join_value_handle_t), as fork_join2's out-of-line paths are: a closure whose
// address went here would be an addressable local live across the inline path's last call, and the caller's
// recursion no loop (tests/split_check's loop mode).
template <class FirstHandle, class SecondHandle>
__attribute__((noinline)) join_values_t<FirstHandle, SecondHandle> join_values_by_invoke(const char* what,
                                                                                        FirstHandle first,
                                                                                        SecondHandle second) {
  std::optional<join_result_t<FirstHandle>> first_result;
  std::optional<join_result_t<SecondHandle>> second_result;
  auto run_first = [&] { first_result.emplace(call_as<join_result_t<FirstHandle>>(first)); };
  auto run_second = [&] { second_result.emplace(call_as<join_result_t<SecondHandle>>(second)); };
  fork_join2(what, run_first, run_second, 2.0, 1.0);
  return {std::move(*first_result), std::move(*second_result)};
}

// The other half's result, made in the handler's function as run_guarded's (fork_join2.hpp): plain `inline`,
// never always_inline, so that GCC splits the caller before the handler comes in.
template <spawn_path P, class Pushed, class Here>
inline join_result_t<Here> run_guarded_value(group_state& g, Pushed& pushed, Here& here) {
  try {
    return call_as<join_result_t<Here>>(here);
  } catch (...) {
    leave_after_throw<P>(g, pushed);
  }
}

// The pushed half was stolen, or the engine must join it: wait for it (which rethrows what it threw), then the
// pair from its result, destroyed where it lay, and the other half's, which the caller hands over by value so
// that its own stays no addressable local (the direct path's last call must find none live). Every move here
// and in the caller cannot throw (join_values_inline_ok_v): the caller's scope, which a thief may still be
// writing into, ends only after the wait.
template <bool kFirstPushed, class RP, class RH>
__attribute__((noinline, cold)) auto join_values_wait(group_state& g, RP* pushed_result, RH here_result) {
  settle_join_slot(g);  // the group's balance and error slot, unwritten until now (task_frame.hpp)
  fiber_abi* fb = running_fiber();
  worker_abi* now = fb->worker;
  g.for_engine_join(fb);
  now->engine_wait(*now, g);
  struct drop_pushed {
    RP* r;
    ~drop_pushed() { r->~RP(); }
  } drop{pushed_result};
  if constexpr (kFirstPushed) return std::pair<RP, RH>(std::move(*pushed_result), std::move(here_result));
  else return std::pair<RH, RP>(std::move(here_result), std::move(*pushed_result));
}

template <spawn_path P, class FirstHandle, class SecondHandle>
__attribute__((noinline)) join_values_t<FirstHandle, SecondHandle> join_values_slow(worker_abi& w, const char* what,
                                                                                   FirstHandle first,
                                                                                   SecondHandle second);

// The inline join on path P (help-first pushes the first closure, work-first the second), the push as kPush
// says (fork_join2.hpp, join_push: the window alone, or the slow path alone). Where the push cannot go
// inline, the rest is the slow path's (out of line on the copies) or the engine's.
template <spawn_path P, join_push kPush, class First, class Second>
ROOST_DETAIL_SPAWN_INLINE inline join_values_t<First, Second> join_values_inline(worker_abi& w, const char* what,
                                                                               First& first, Second& second) {
  constexpr bool kFirstPushed = P == spawn_path::inline_help_first;
  auto& pushed = [&]() -> auto& {
    if constexpr (kFirstPushed) return first;
    else return second;
  }();
  auto& here = [&]() -> auto& {
    if constexpr (kFirstPushed) return second;
    else return first;
  }();
  using pushed_t = std::remove_reference_t<decltype(pushed)>;
  using handle_t = join_value_handle_t<pushed_t>;
  using RP = join_result_t<pushed_t>;
  using RH = join_result_t<std::remove_reference_t<decltype(here)>>;
  using half_t = value_half<handle_t, RP>;
  using frame_t = closure_frame<half_t>;
  static_assert(sizeof(frame_t) <= group_state::kInlineFrameBytes && alignof(frame_t) <= 16);
  join_slot<handle_t> popped;  // the pushed half once popped back: called after the scope below, last
  join_slot<RH> here_result;
  {
    group_state g{group_state::inline_join_t{}};
    join_slot<RP> pushed_result;  // where a run other than the direct call below puts the pushed half's result
    auto* f = ::new (static_cast<void*>(g.inline_frame))
        frame_t(half_t{handle_t(pushed), &pushed_result.v}, typename frame_t::join_unnamed_t{});
    if constexpr (kPush == join_push::window_only) {
      if (!push_first_child_window_on<P>(w, g, *f)) [[unlikely]] {
        return join_values_slow<P>(w, what, join_value_handle_t<First>(first), join_value_handle_t<Second>(second));
      }
    } else {
      static_assert(kPush == join_push::slow_only);
      if (!push_first_child_slow_here(g, *f)) [[unlikely]] {
        // The policy names no queue: the engine joins.
        return join_values_by_invoke(what, join_value_handle_t<First>(first), join_value_handle_t<Second>(second));
      }
    }
    ::new (static_cast<void*>(&here_result.v)) RH(run_guarded_value<P>(g, f->fn, here));
    if (!pop_pushed_back<P>(g)) [[unlikely]] {
      RH h(std::move(here_result.v));
      here_result.v.~RH();
      return join_values_wait<kFirstPushed>(g, &pushed_result.v, std::move(h));
    }
    ::new (static_cast<void*>(&popped.v)) handle_t(f->fn.fn);  // trivially copyable, or a reference
  }
  // The frame's scope is over: nothing whose address the deque saw is live across this call.
  RH h(std::move(here_result.v));
  here_result.v.~RH();
  if constexpr (kFirstPushed) return {call_as<RP>(std::as_const(popped.v)), std::move(h)};
  else return {std::move(h), call_as<RP>(std::as_const(popped.v))};
}

template <spawn_path P, class FirstHandle, class SecondHandle>
__attribute__((noinline)) join_values_t<FirstHandle, SecondHandle> join_values_slow(worker_abi& w, const char* what,
                                                                                   FirstHandle first,
                                                                                   SecondHandle second) {
  return join_values_inline<P, join_push::slow_only>(w, what, first, second);
}

// The inline join's dispatch on the worker's path, each path returning the pair: results that move without
// throwing (join_values_inline_ok_v).
template <class F, class G>
ROOST_DETAIL_SPAWN_INLINE inline join_values_t<F, G> fork_join2_values_inline(const char* what, F& first, G& second) {
  worker_abi& w = running_worker();
  const spawn_path path = w.path.load(std::memory_order_relaxed);
  if (path == spawn_path::inline_help_first) {
    return join_values_inline<spawn_path::inline_help_first, join_push::window_only>(w, what, first, second);
  }
  if (path == spawn_path::inline_join) [[likely]] {
    return join_values_inline<spawn_path::inline_join, join_push::window_only>(w, what, first, second);
  }
  return join_values_by_invoke(what, join_value_handle_t<F>(first), join_value_handle_t<G>(second));  // the engine's
}

// roost::join's body.
template <class F, class G>
ROOST_DETAIL_SPAWN_INLINE inline join_values_t<F, G> fork_join2_values(const char* what, F& first, G& second) {
  if constexpr (!join_values_inline_ok_v<F, G>) {
    return join_values_by_invoke(what, join_value_handle_t<F>(first), join_value_handle_t<G>(second));
  } else {
    return fork_join2_values_inline(what, first, second);
  }
}

}  // namespace roost::detail

#include "roost/detail/min_max_back.hpp"
