// An execution context on its own stack, switched with Boost.Context's fcontext (DESIGN §2: no
// hand-written assembly). Each switch carries one pointer of data to the resumed side and tells it the
// context it came from. Switches are announced to ThreadSanitizer and AddressSanitizer so that the
// sanitizer builds of `make test` understand stack switching.
#pragma once
#include <boost/context/detail/fcontext.hpp>
#include <cstddef>

#include "ult/stack.hpp"

#include "roost/detail/sanitizers.hpp"

#ifdef ROOST_TSAN
extern "C" {
void* __tsan_get_current_fiber(void);
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
}
#endif
#ifdef ROOST_ASAN
extern "C" {
void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, std::size_t size);
void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old, std::size_t* size_old);
}
#endif

namespace roost::ult {

namespace bctx = boost::context::detail;
using transfer = bctx::transfer_t;
using entry_fn = void (*)(transfer);

struct context {
  bctx::fcontext_t fctx = nullptr;  // valid while this context is suspended
  const void* stack_lo = nullptr;   // for AddressSanitizer
  std::size_t stack_size = 0;
#ifdef ROOST_TSAN
  void* tsan_fiber = nullptr;
#endif
};

// Prepares `c` to run entry(first transfer) on the stack [lo, hi).
inline void make_context(context& c, void* lo, void* hi, entry_fn entry) {
  std::size_t size = static_cast<std::size_t>(static_cast<char*>(hi) - static_cast<char*>(lo));
  c.fctx = bctx::make_fcontext(hi, size, entry);
  c.stack_lo = lo;
  c.stack_size = size;
#ifdef ROOST_TSAN
  c.tsan_fiber = __tsan_create_fiber(0);
#endif
}

// Describes the calling OS thread's own stack as a context (the place workers return to at shutdown).
void adopt_thread_context(context& c);
// The same for code that runs on a stack it knows, [lo, lo + size): a sim thread, whose OS thread's stack is
// the driver's. No system call: pthread_getattr_np on the main thread reads /proc/self/maps, which grows
// with every sim thread's stack, and 2,048 simulated workers took 15 s to start.
void adopt_running_context(context& c, const void* lo, std::size_t size);
void release_context(context& c);

// The C++ runtime keeps the exceptions being handled and the count of uncaught ones per thread
// (__cxa_eh_globals). A context that is suspended while an exception is in flight or being handled (a
// task_group destructor that waits during unwinding) may resume on another thread, so every context carries
// its own copy across a switch, as OpenCilk's runtime does. The layout is the Itanium C++ ABI's.
struct eh_state {
  void* caught_exceptions;
  unsigned int uncaught_exceptions;
};
static_assert(sizeof(eh_state) <= 16);

// The calling thread's state. Out of line and opaque on purpose: __cxa_get_globals is declared
// __attribute__((const)), so an inlined call could be reused after a switch to another thread. Callers
// fetch it once per OS thread and pass it to switch_to.
eh_state* thread_eh_state();

// Switches to `to`, passing `data`. Returns when something switches back to the caller's context; the
// returned transfer says from which context (its fctx must be stored by the caller's protocol) and with
// what data. `here` is the calling thread's exception state; `eh_of(t)` must give the state of the thread
// that resumed us, which the transfer's data identifies.
template <class EhOf>
inline transfer switch_to(context& to, void* data, eh_state* here, EhOf&& eh_of) {
#ifdef ROOST_TSAN
  __tsan_switch_to_fiber(to.tsan_fiber, 0);
#endif
#ifdef ROOST_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, to.stack_lo, to.stack_size);
#endif
  bctx::fcontext_t target = to.fctx;
  to.fctx = nullptr;
  const eh_state mine = *here;
  transfer t = bctx::jump_fcontext(target, data);
  *eh_of(t) = mine;  // possibly another thread now: bring this context's exceptions along
#ifdef ROOST_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  return t;
}

// A call on another stack (call_on_stack.hpp) announced to AddressSanitizer, as switch_to announces a
// switch: the caller before the call (announce_call) and after it returns or its context is resumed
// (call_came_back); the callee as it starts (entered_call) and just before it returns (leaving_call: its
// frames are gone for good then, and so is its fake stack). No-ops in other builds.
struct call_fake_stack {
  void* p = nullptr;
};
inline void announce_call([[maybe_unused]] call_fake_stack& caller, [[maybe_unused]] const context& callee) {
#ifdef ROOST_ASAN
  __sanitizer_start_switch_fiber(&caller.p, callee.stack_lo, callee.stack_size);
#endif
}
inline void call_came_back([[maybe_unused]] const call_fake_stack& caller) {
#ifdef ROOST_ASAN
  __sanitizer_finish_switch_fiber(caller.p, nullptr, nullptr);
#endif
}
inline void entered_call() {
#ifdef ROOST_ASAN
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
}
inline void leaving_call([[maybe_unused]] const context& caller) {
#ifdef ROOST_ASAN
  __sanitizer_start_switch_fiber(nullptr, caller.stack_lo, caller.stack_size);
#endif
}

// First statement of every context entry function (`here`: the thread's exception state, which a new
// context starts without).
inline void entered_new_context(eh_state* here) {
#ifdef ROOST_ASAN
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
  *here = eh_state{nullptr, 0};
}

}  // namespace roost::ult
