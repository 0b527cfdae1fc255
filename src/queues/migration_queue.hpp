// ADWS's migration queue (seed 003 Algorithm 4.3; digest §2.6): the tasks other workers hand to this one
// (give_migrated: at the steal end, so the owner runs them in the order they came) and, while the owner runs
// migrated work, the continuations it pushes at its own end. Thieves take from the steal end.
//
// The two ends are used at very different rates: a sender hands over a few tasks per dealt group, the owner
// pushes and pops once per spawn for as long as it runs migrated work (half the spawns of a program dealt
// over two workers). So the owner's end is the split deque of the local queue (roost/detail/ws_deque.hpp:
// no lock, no fence on a private push and pop), and what senders hand over waits above it in a locked
// inbox. Everything in the inbox lies on the steal side of everything in the deque, as in one deque:
//
//    steal end | inbox: newest received ... oldest received | deque: oldest pushed ... newest pushed | owner end
//
// A task received while the owner has pushes of its own goes above them, as a push at the top of one deque
// would. (It was one deque behind a spin lock: two locked operations per spawn on migrated work.)
#pragma once
#include <cstdint>

#include "queues/locked_deque.hpp"
#include "roost/detail/ws_deque.hpp"

namespace roost::queues {

template <class T>
class migration_queue {
 public:
  // Any worker, one at a time (Theorem 1 of seed 003 §4.2.3 makes senders unique).
  void push_top(T* x) { inbox_.push_top(x); }
  // Owner only.
  __attribute__((always_inline)) void push_bottom(T* x) { own_.push(x); }
  __attribute__((always_inline)) T* pop_bottom() {
    if (T* x = own_.pop()) return x;
    return inbox_.pop_bottom();  // the oldest received task
  }
  // Owner only: the end it pushes and pops its own continuations at, for the inline two-way join, which
  // pushes its pushed half there and pops it back (roost/detail/fork_join2.hpp).
  detail::ws_deque<T>& owner_end() { return own_; }
  // Any worker. Like the deque's steal, returns nullptr when it loses a race; finding the deque's shared
  // part empty asks the owner to share.
  T* steal_top() {
    if (T* x = inbox_.steal_top()) return x;
    return own_.steal();
  }
  // Racy. Anything here at all (the owner's question), and anything a thief could take now.
  bool empty_hint() const { return inbox_.empty_hint() && own_.empty_estimate(); }
  bool stealable_hint() const { return !inbox_.empty_hint() || own_.shared_estimate(); }
  // A worker about to sleep asks the owner to share its private pushes (engine_base::any_work_visible).
  void ask_to_share() { own_.ask_to_share(); }
  // Called when the owner shares pushes (set before any push): the engine wakes a sleeper there.
  void on_share(typename detail::ws_deque<T>::share_hook fn, void* arg) { own_.on_share(fn, arg); }

 private:
  detail::ws_deque<T> own_;
  locked_deque<T> inbox_;
};

}  // namespace roost::queues
