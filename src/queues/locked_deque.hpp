// A deque behind a spin lock, for queues that other workers push into: ADWS's migration queue (seed 003
// Algorithm 4.3), where the sender inserts at the steal end, the owner pops at its end and thieves take
// from the steal end. Theorem 1 of the thesis makes senders unique, but owner and thieves still race, so
// a lock it is, as in the thesis; `size_hint` lets idle workers look without taking it.
#pragma once
#include <atomic>
#include <cstddef>
#include <deque>
#include <type_traits>

#include "platform/platform.hpp"
#include "roost/detail/job.hpp"

namespace roost::queues {

template <class T>
class locked_deque {
 public:
  // A push may throw std::bad_alloc (the deque grows); the queue is then as it was, and unlocked.
  void push_top(T* x) {  // steal end: the owner will run it after what is already there (FIFO)
    stamp(x);
    held h(*this);
    q_.push_front(x);
    size_hint_.store(q_.size(), std::memory_order_release);
  }
  void push_bottom(T* x) {  // owner end
    stamp(x);
    held h(*this);
    q_.push_back(x);
    size_hint_.store(q_.size(), std::memory_order_release);
  }
  T* pop_bottom() { return take(false); }
  T* steal_top() { return take(true); }
  bool empty_hint() const { return size_hint_.load(std::memory_order_acquire) == 0; }
  std::size_t size_hint() const { return size_hint_.load(std::memory_order_acquire); }

 private:
  // What others take from here is visible at once: a fresh frame gets the pusher's floating-point state
  // here, which a worker that takes it starts it with (roost/detail/fp_control.hpp). Before the lock: the
  // read waits for the floating-point work in flight.
  static void stamp(T* x) {
    if constexpr (std::is_base_of_v<detail::job, T>) x->stamp_fp_state();
  }
  T* take(bool top) {
    if (empty_hint()) return nullptr;
    lock();
    T* x = nullptr;
    if (!q_.empty()) {
      if (top) {
        x = q_.front();
        q_.pop_front();
      } else {
        x = q_.back();
        q_.pop_back();
      }
      size_hint_.store(q_.size(), std::memory_order_release);
    }
    unlock();
    return x;
  }
  void lock() {
    while (lock_.exchange(true, std::memory_order_acquire))
      while (lock_.load(std::memory_order_relaxed)) platform::os::cpu_relax();
  }
  void unlock() { lock_.store(false, std::memory_order_release); }
  struct held {
    explicit held(locked_deque& d) : d(d) { d.lock(); }
    ~held() { d.unlock(); }
    locked_deque& d;
  };

  std::atomic<bool> lock_{false};
  std::atomic<std::size_t> size_hint_{0};
  std::deque<T*> q_;
};

}  // namespace roost::queues
