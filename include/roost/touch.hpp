// Kernel data annotations: a task says which bytes it reads or writes. Free unless a consumer (a footprint
// profiler, the tracer) is registered; then each call is forwarded to it with the calling worker's id.
#pragma once
#include <atomic>
#include <cstddef>

namespace roost {

enum class access : unsigned char { read, write, read_write };

// Receives annotations. Implementations must be thread-safe: every worker calls them.
class touch_consumer {
 public:
  virtual ~touch_consumer() = default;
  virtual void on_touch(int worker, const void* base, std::size_t bytes, access mode) = 0;
};

// Installs (or, with nullptr, removes) the consumer; returns the previous one.
touch_consumer* set_touch_consumer(touch_consumer* c);

namespace detail {
extern std::atomic<touch_consumer*> g_touch_consumer;
void forward_touch(touch_consumer* c, const void* base, std::size_t bytes, access mode);
}  // namespace detail

inline void touch(const void* base, std::size_t bytes, access mode = access::read) {
  if (auto* c = detail::g_touch_consumer.load(std::memory_order_relaxed)) [[unlikely]]
    detail::forward_touch(c, base, bytes, mode);
}

}  // namespace roost
