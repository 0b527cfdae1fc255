// Chase–Lev work-stealing deque (Chase & Lev, SPAA 2005) with the C11 memory orderings proved correct by
// Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory Models",
// PPoPP 2013 (Fig. 1 of that paper; comments below quote its reasoning).
//
// It lives among the public detail headers because spawn and join are inlined into user code for the
// policies that allow it (detail/abi.hpp), as OpenCilk's compiler-generated code pushes onto cheetah's deque.
//
// One owner pushes and pops at the bottom; any thread steals at the top. Growable: when full, the owner
// copies the live range into an array twice the size. Old arrays stay alive until the deque dies, because a
// thief may still be reading one (the paper leaves reclamation open; the memory is bounded by 2x the peak).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "roost/detail/sanitizers.hpp"

namespace roost::detail {

// ThreadSanitizer does not model stand-alone fences, so in TSan builds the fence-based publication below is
// also expressed as release/acquire on the slots and on bottom: stronger, equivalent in meaning.
#ifdef ROOST_TSAN
inline constexpr std::memory_order kSlotStore = std::memory_order_release;
inline constexpr std::memory_order kSlotLoad = std::memory_order_acquire;
#else
inline constexpr std::memory_order kSlotStore = std::memory_order_relaxed;
inline constexpr std::memory_order kSlotLoad = std::memory_order_relaxed;
#endif

template <class T>
class ws_deque {
  static_assert(sizeof(T*) == sizeof(void*));

  struct ring {
    std::int64_t mask;
    std::unique_ptr<std::atomic<T*>[]> slots;
    explicit ring(std::int64_t capacity) : mask(capacity - 1), slots(new std::atomic<T*>[capacity]) {}
    std::int64_t capacity() const { return mask + 1; }
    T* get(std::int64_t i) const { return slots[i & mask].load(kSlotLoad); }
    void put(std::int64_t i, T* x) { slots[i & mask].store(x, kSlotStore); }
  };

 public:
  explicit ws_deque(std::int64_t capacity = 256) {
    std::int64_t c = 2;
    while (c < capacity) c <<= 1;
    rings_.emplace_back(new ring(c));
    array_.store(rings_.back().get(), std::memory_order_relaxed);
  }
  ws_deque(const ws_deque&) = delete;
  ws_deque& operator=(const ws_deque&) = delete;

  // Owner only. Inlined into user code on the help-first path; growing is the cold part.
  __attribute__((always_inline)) void push(T* x) {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    std::int64_t t = top_.load(std::memory_order_acquire);
    ring* a = array_.load(std::memory_order_relaxed);
    if (b - t > a->capacity() - 1) a = grow(a, t, b);
    a->put(b, x);
    // Release fence: a thief that reads the new bottom must also see the element (paper, push line 7).
    std::atomic_thread_fence(std::memory_order_release);
    bottom_.store(b + 1, kSlotStore);
  }

  // Owner only. Returns nullptr when empty.
  __attribute__((always_inline)) T* pop() {
    std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    ring* a = array_.load(std::memory_order_relaxed);
    bottom_.store(b, std::memory_order_relaxed);
    // Seq-cst fence: the store to bottom and the load of top must not be reordered, or the owner and a thief
    // could both take the last element (store-load ordering; the one fence x86 needs here).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::int64_t t = top_.load(std::memory_order_relaxed);
    T* x = nullptr;
    if (t <= b) {
      x = a->get(b);
      if (t == b) {
        // Last element: race thieves for it through top, as they do.
        if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
          x = nullptr;
        bottom_.store(b + 1, std::memory_order_relaxed);
      }
    } else {
      bottom_.store(b + 1, std::memory_order_relaxed);  // was empty: restore
    }
    return x;
  }

  // Any thread. Returns nullptr when empty or when it lost a race (the caller may retry elsewhere).
  T* steal() {
    std::int64_t t = top_.load(std::memory_order_acquire);
    // Seq-cst fence pairs with the one in pop(): top is read before bottom (paper, steal line 3).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t < b) {
      // The paper uses consume; acquire is what compilers implement for it.
      ring* a = array_.load(std::memory_order_acquire);
      T* x = a->get(t);
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
        return nullptr;
      return x;
    }
    return nullptr;
  }

  // A racy size estimate for idle checks and victim selection.
  std::int64_t size_estimate() const {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    std::int64_t t = top_.load(std::memory_order_relaxed);
    return b > t ? b - t : 0;
  }
  bool empty_estimate() const { return size_estimate() == 0; }

  // Owner only: the index the next push will use; lets a task group pop only what it pushed itself.
  std::int64_t bottom_index() const { return bottom_.load(std::memory_order_relaxed); }

 private:
  __attribute__((noinline)) ring* grow(ring* a, std::int64_t t, std::int64_t b) {
    auto* bigger = new ring(a->capacity() * 2);
    for (std::int64_t i = t; i < b; ++i) bigger->put(i, a->get(i));
    rings_.emplace_back(bigger);
    // Release: a thief that loads the new array must see the copied slots.
    array_.store(bigger, std::memory_order_release);
    return bigger;
  }

  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<ring*> array_{nullptr};
  std::vector<std::unique_ptr<ring>> rings_;  // owner-only; every array ever used
};

}  // namespace roost::detail
