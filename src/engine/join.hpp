// Joining a task group.
//
// The owner counts its spawns and the children whose completion it saw itself (a help-first child it
// popped and ran inline, a work-first child that found the owner's continuation still in the deque and
// switched back to it). Those counters are plain: only the owner touches them, so the common, unstolen join
// costs no atomic operation (the idea of Cilk's THE protocol and Lace's split deque, seed 003 §2.2.3).
//
// Every other child is "remote". remote = spawned - local_done is known exactly at wait. The remote children
// and the owner meet on one atomic balance:
//   a remote child, when done:     prev = balance.fetch_add(1);         last iff prev == -1
//   the owner, once suspended:     prev = balance.fetch_sub(remote);    all done already iff prev == remote
// The owner registers only after its context is saved (on the scheduler fiber), so whoever sees the "last"
// condition may resume it at once. Before registering, the balance is >= 0, so no child can see -1 early.
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>

#include "roost/detail/abi.hpp"

namespace roost::engine::join {

using detail::record_exception;
using detail::finish_join;

// A remote child finished. Returns the owner's fiber if this was the last one and the owner is suspended.
inline void* complete_remote(detail::group_state& g) {
  void* waiter = nullptr;
  if (g.remote_balance.fetch_add(1, std::memory_order_acq_rel) == -1) waiter = g.waiter;
  return waiter;  // g may be gone once the waiter runs: do not touch it after this point
}

// All remote children are already done (checked before suspending, to skip the switch).
inline bool all_remote_done(detail::group_state& g, std::uint32_t remote) {
  if (g.remote_balance.load(std::memory_order_acquire) == static_cast<std::int64_t>(remote)) {
    g.remote_balance.store(0, std::memory_order_relaxed);
    return true;
  }
  return false;
}

// The owner, suspended, registers as waiter. Returns true if every remote child is already done (the
// caller then resumes the owner itself).
inline bool register_waiter(detail::group_state& g, void* owner_fiber, std::uint32_t remote) {
  g.waiter = owner_fiber;  // published by the release half of the RMW below
  return g.remote_balance.fetch_sub(static_cast<std::int64_t>(remote), std::memory_order_acq_rel) ==
         static_cast<std::int64_t>(remote);
}


}  // namespace roost::engine::join
