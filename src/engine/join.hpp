// Joining a task group.
//
// The owner counts its spawns and the children whose completion it saw itself (a help-first child it
// popped and ran inline, a work-first child that found the owner's continuation still in the deque and
// switched back to it). Those counters are plain: only the owner touches them, so the common, unstolen join
// costs no atomic operation (the idea of Cilk's THE protocol and Lace's split deque, seed 003 §2.2.3).
//
// Every other child is "remote". remote = spawned - local_done is known exactly at wait. The remote children
// and the owner meet on one atomic balance:
//   a remote child, when done:     prev = balance.fetch_add(1);                 last iff prev == kWaiting - 1
//   the owner, once suspended:     prev = balance.fetch_add(kWaiting - remote); all done already iff prev == remote
// The owner registers only after its context is saved (on the scheduler fiber), so whoever sees the "last"
// condition may resume it at once.
//
// A child spawned into the group by another task than the owner (a foreign child: tg.run() from a
// parallel_for body or from a child of the group, as oneTBB allows; engine.hpp, spawn_foreign) is counted on
// the balance alone: its spawner takes one off before the child can run (a debt), the child adds it back
// when done, wherever it ends. So before the owner registers, the balance is the remote children done less
// the foreign ones still owed, which may be negative; kWaiting (far above any count of children) tells a
// registered balance apart from every one of those, and "all done" is the balance at `remote` exactly.
// A foreign spawn happens before the owner's join looks (its spawner was joined first, or is a child of the
// group, whose own end comes after its debt), so the join never misses one (user-guide.md, "Ownership").
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>

#include "roost/detail/abi.hpp"

namespace roost::engine::join {

using detail::record_exception;
using detail::finish_join;

inline constexpr std::int64_t kWaiting = std::int64_t{1} << 62;

// A remote or foreign child finished. Returns the owner's fiber if this was the last one and the owner is
// suspended.
inline void* complete_remote(detail::group_state& g) {
  void* waiter = nullptr;
  if (g.remote_balance.fetch_add(1, std::memory_order_acq_rel) == kWaiting - 1) waiter = g.waiter;
  return waiter;  // g may be gone once the waiter runs: do not touch it after this point
}

// A foreign child's debt, taken by its spawner before the child can run.
inline void owe_foreign_child(detail::group_state& g) { g.remote_balance.fetch_sub(1, std::memory_order_acq_rel); }

// All remote children are already done and no foreign child is owed (checked before suspending, to skip the
// switch).
inline bool all_remote_done(detail::group_state& g, std::uint32_t remote) {
  if (g.remote_balance.load(std::memory_order_acquire) == static_cast<std::int64_t>(remote)) {
    g.remote_balance.store(0, std::memory_order_relaxed);
    return true;
  }
  return false;
}

// The owner, suspended, registers as waiter. Returns true if every remote child is already done (the
// caller then resumes the owner itself). Either way the balance ends at kWaiting, which the owner sets back
// to 0 once it runs again (after_waiting).
inline bool register_waiter(detail::group_state& g, void* owner_fiber, std::uint32_t remote) {
  g.waiter = owner_fiber;  // published by the release half of the RMW below
  return g.remote_balance.fetch_add(kWaiting - static_cast<std::int64_t>(remote), std::memory_order_acq_rel) ==
         static_cast<std::int64_t>(remote);
}
// The owner runs again after register_waiter: every child counted on the balance ended (the last one's add
// came before the owner was resumed).
inline void after_waiting(detail::group_state& g) { g.remote_balance.store(0, std::memory_order_relaxed); }

}  // namespace roost::engine::join
