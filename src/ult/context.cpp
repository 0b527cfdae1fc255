#include "ult/context.hpp"

#include <cxxabi.h>
#include <pthread.h>

namespace roost::ult {

// Out of line, and opaque to its callers: the empty asm that may write memory keeps any compiler from taking
// it for a const function, as __cxa_get_globals is declared (GCC's noipa would too; clang has none).
__attribute__((noinline)) eh_state* thread_eh_state() {
  asm volatile("" ::: "memory");
  return reinterpret_cast<eh_state*>(abi::__cxa_get_globals());
}

void adopt_thread_context(context& c) {
  void* lo = nullptr;
  std::size_t size = 0;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstack(&attr, &lo, &size);
    pthread_attr_destroy(&attr);
  }
  adopt_running_context(c, lo, size);
}

void adopt_running_context(context& c, const void* lo, std::size_t size) {
  c.stack_lo = lo;
  c.stack_size = size;
#ifdef ROOST_TSAN
  c.tsan_fiber = __tsan_get_current_fiber();
#endif
}

void release_context(context& c) {
#ifdef ROOST_TSAN
  if (c.tsan_fiber) __tsan_destroy_fiber(c.tsan_fiber);
  c.tsan_fiber = nullptr;
#else
  (void)c;
#endif
}

}  // namespace roost::ult
