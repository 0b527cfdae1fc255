// A fiber: a task's stack and suspended context, and the unit a worker resumes. The record lives at the
// top of its own stack, so a fiber is one mmap.
#pragma once
#include <cstdint>
#include <new>

#include "roost/detail/abi.hpp"
#include "ult/context.hpp"
#include "ult/stack.hpp"

namespace roost::engine {

// fiber_abi (worker now running it, epoch) comes first: user code reads it inline (roost/detail/abi.hpp).
struct fiber : detail::fiber_abi {
  ult::context ctx;
  ult::stack stk;
  detail::task_id* task = nullptr;  // the task running on this fiber, restored when it resumes
  fiber* next_free = nullptr;       // fiber_pool link
};

// Per-worker LIFO pool of idle fibers: the most recently parked fiber (cache-hot stack) is reused first.
// Idle fibers sit at the top of their entry loop, ready to receive a message.
class fiber_pool {
 public:
  fiber_pool() = default;
  fiber_pool(const fiber_pool&) = delete;
  ~fiber_pool() { release_all(); }

  fiber* get(std::size_t stack_bytes, ult::entry_fn entry) {
    if (fiber* f = head_) {
      head_ = f->next_free;
      return f;
    }
    return create(stack_bytes, entry);
  }
  void put(fiber* f) {
    f->next_free = head_;
    head_ = f;
  }
  void release_all() {
    while (fiber* f = head_) {
      head_ = f->next_free;
      destroy(f);
    }
  }

 private:
  static fiber* create(std::size_t stack_bytes, ult::entry_fn entry) {
    ult::stack s = ult::allocate_stack(stack_bytes + sizeof(fiber) + 64);
    // Record at the top, 64-byte aligned; the usable stack is everything between the guard and the record.
    auto top = reinterpret_cast<std::uintptr_t>(s.top());
    auto rec = (top - sizeof(fiber)) & ~std::uintptr_t{63};
    auto* f = ::new (reinterpret_cast<void*>(rec)) fiber();
    f->k = detail::job::kind::resume;
    f->stk = s;
    ult::make_context(f->ctx, static_cast<char*>(s.base) + s.guard, reinterpret_cast<void*>(rec), entry);
    return f;
  }
  static void destroy(fiber* f) {
    ult::stack s = f->stk;
    ult::release_context(f->ctx);
    f->~fiber();
    ult::free_stack(s);
  }

  fiber* head_ = nullptr;
};

}  // namespace roost::engine
