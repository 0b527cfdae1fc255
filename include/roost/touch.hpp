// Kernel annotations: a task says which bytes it reads or writes (touch), and how much arithmetic it does
// (compute). Free unless a consumer (a footprint profiler, the tracer, the simulated platform) is
// registered; then each call is forwarded to it with the calling worker's id, after a check that its
// region can exist: a null base with a non-zero size, or a region that runs past the end of the address
// space, is a roost::usage_error thrown from the call (the rules of roost::data, data.hpp). Empty regions
// are allowed. Unchecked while nothing listens: the call then does nothing with its arguments. The
// simulated platform also requires the region to be mapped memory of the process (it walks every line):
// a usage_error there, where natively the same call is not checked.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace roost {

enum class access : unsigned char { read, write, read_write };

// Receives annotations. Implementations must be thread-safe: every worker calls them. Under ROOST_PREEMPT a
// call is never preempted: no other task of the calling worker runs until it returns.
class touch_consumer {
 public:
  virtual ~touch_consumer() = default;
  virtual void on_touch(int worker, const void* base, std::size_t bytes, access mode) = 0;
  // `rows` rows of `row_bytes` each, `stride` bytes apart (a tile of a matrix). Default: row by row. (Out of
  // line, in the library: a compiler that guessed it at the call site inlined its loop there, and every
  // forwarded touch paid for its registers.)
  virtual void on_touch_rows(int worker, const void* base, std::size_t row_bytes, std::size_t rows,
                             std::size_t stride, access mode);
  // `operations` arithmetic operations of a kernel (roost::compute). Default: ignored.
  virtual void on_compute(int /*worker*/, std::uint64_t /*operations*/) {}
};

// Installs (or, with nullptr, removes) the program's own consumer; returns the previous one. It receives
// the annotations of every runtime's tasks (and of threads outside any), beside what each runtime's own
// listeners (its tracer, its simulation, cats's profiling) receive of its tasks alone. It returns once no
// call of the consumer it replaced is running or can start, so that one may be deleted then, except the
// calls the calling thread is inside: called from a consumer's callback, it does not wait for that call
// (nor for calls that one is nested in), which goes on unprotected and must not use its consumer once the
// setter returned (as set_task_observer).
// Called from a task_observer's callback while a consumer's callback may call set_task_observer, it can wait
// for ever: each setter waits for the other's call in flight.
touch_consumer* set_touch_consumer(touch_consumer* c);

namespace detail {
// Whether anything listens: the program's consumer, or a runtime's own (api/touch.cpp).
extern std::atomic<bool> g_listening;
// A runtime's first listener came (true) or its last went (false): engine_base::set_touch_sink.
void count_runtime_listener(bool added);
void forward_touch(const void* base, std::size_t bytes, access mode);
void forward_touch_rows(const void* base, std::size_t row_bytes, std::size_t rows,
                        std::size_t stride, access mode);
void forward_compute(std::uint64_t operations);
}  // namespace detail

inline void touch(const void* base, std::size_t bytes, access mode = access::read) {
  if (detail::g_listening.load(std::memory_order_relaxed)) [[unlikely]] detail::forward_touch(base, bytes, mode);
}

// A strided region in one call: `rows` rows of `row_bytes`, `stride` bytes apart (e.g. a tile of a
// row-major matrix: base = &m[r0 * ld + c0], row_bytes = width * sizeof(T), stride = ld * sizeof(T)).
// Rows may not overlap: with more than one row, a stride below row_bytes is a usage_error (as in
// roost::data). The simulated platform charges each row as a touch of its own (src/sim/README.md).
inline void touch_rows(const void* base, std::size_t row_bytes, std::size_t rows, std::size_t stride,
                       access mode = access::read) {
  if (detail::g_listening.load(std::memory_order_relaxed)) [[unlikely]]
    detail::forward_touch_rows(base, row_bytes, rows, stride, mode);
}

// A kernel's arithmetic: `operations` operations (a multiply-add counts two), for a kernel whose time is
// not in proportion to the bytes it touches (a block product does O(B^3) operations on O(B^2) bytes). The
// simulated platform charges them at its `op_ns` (src/platform/README.md), and refuses with a usage_error a
// call of more than 1e15 ns (the virtual clock, a double, would lose later charges); natively free.
inline void compute(std::uint64_t operations) {
  if (detail::g_listening.load(std::memory_order_relaxed)) [[unlikely]] detail::forward_compute(operations);
}

}  // namespace roost

#include "roost/detail/min_max_back.hpp"
