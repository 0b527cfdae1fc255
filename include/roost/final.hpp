// roost::run_final — OpenMP's `final` clause: run a piece of a task with every spawn inside it inline.
//
//   long fib(int n) {
//     if (n < 2) return n;
//     if (n < 20) return roost::run_final([&] { return fib_parallel(n); });  // the spawns below run serially
//     ...
//   }
//
// Inside run_final(f), every task_group::run / run_if, parallel_invoke, parallel_for, parallel_reduce and
// nested runtime::run runs its function at once, on the calling task, in program order: no task is made,
// nothing is queued, nothing can be stolen, and the calling task stays on its worker (and OS thread) until
// f returns, unless f waits for a group that had children spawned before the region (that wait is a real
// one). Exceptions behave as with spawning: a child's throw is delivered by the group's wait().
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <utility>

namespace roost {

namespace detail {
void enter_final();           // src/api/final.cpp
void leave_final() noexcept;
struct final_scope {
  final_scope() { enter_final(); }
  ~final_scope() { leave_final(); }
  final_scope(const final_scope&) = delete;
  final_scope& operator=(const final_scope&) = delete;
};
}  // namespace detail

// Runs f() on the calling task, every spawn inside it inline; returns what f returns. Outside any task
// (no runtime::run), f simply runs, with in_final() true inside it: a spawn there is the usage_error any
// spawn outside runtime::run is (there is no task to run it inline on), and a runtime::run started there
// runs its root as usual (a root is never inside its caller's final region).
template <class F>
decltype(auto) run_final(F&& f) {
  detail::final_scope scope;
  return std::forward<F>(f)();
}

// Whether the caller runs inside run_final (omp_in_final).
bool in_final();

}  // namespace roost

#include "roost/detail/min_max_back.hpp"
