#include "roost/touch.hpp"

#include <cstdint>
#include <limits>
#include <mutex>
#include <sstream>

#include "api/listener_calls.hpp"
#include "api/region_check.hpp"
#include "engine/engine_base.hpp"
#include "engine/worker.hpp"
#include "platform/fork_hold.hpp"
#include "roost/detail/abi.hpp"
#include "roost/errors.hpp"
#include "roost/runtime.hpp"

namespace roost {

namespace detail {
std::atomic<bool> g_listening{false};

namespace {
// Who listens: the program's consumer (set_touch_consumer), and the runtimes that have listeners of their
// own (engine_base::set_touch_sink, counted here). touch() tests only g_listening, true while either
// exists: one relaxed load and a branch while nothing listens.
std::mutex g_listeners_mu;
std::atomic<touch_consumer*> g_program_consumer{nullptr};
using consumer_calls = listener_calls<struct program_touch_consumer_tag>;
[[maybe_unused]] const bool consumer_calls_fork_handler = consumer_calls::watch_forks();  // listener_calls.hpp
unsigned g_runtime_listeners = 0;  // g_listeners_mu
// Held across fork() (platform/fork_hold.hpp): a child forked while another thread made or destroyed a
// simulated or traced runtime hung making its own (an outside-user campaign).
__attribute__((constructor)) void watch_forks_for_listeners() { platform::hold_across_forks<g_listeners_mu>(); }

void refresh_listening_locked() {
  const bool any = g_program_consumer.load(std::memory_order_relaxed) != nullptr || g_runtime_listeners != 0;
  g_listening.store(any, std::memory_order_release);
}

// A region no memory can hold reaches no consumer: a simulation would walk (or wrap around) the address
// space, a tracer record it row by row for ever. Checked here, where a call is forwarded, so that the
// annotation stays free while nothing listens (touch.hpp).
void check(const char* call, const void* base, std::size_t row_bytes, std::size_t rows, std::size_t stride, bool strided,
           access mode = access::read) {
  const char* why = region_outside_address_space(base, row_bytes, rows, stride);
  // A value cast to access that names none: a simulation charged it as a read, a tracer dropped it.
  if (!why && static_cast<unsigned>(mode) > static_cast<unsigned>(access::read_write))
    why = "its mode is no roost::access (valid: access::read, access::write, access::read_write)";
  // Rows that overlap name some bytes twice: the simulation charged them twice, a footprint counted them
  // twice (roost::data refuses them too).
  if (!why && strided && rows > 1 && stride < row_bytes)
    why = "rows longer than their stride overlap; the stride must be at least row_bytes";
  if (!why) [[likely]] return;
  std::ostringstream os;
  os << call << "(base=" << base;
  if (strided) os << ", row_bytes=" << row_bytes << ", rows=" << rows << ", stride=" << stride;
  else os << ", bytes=" << row_bytes;
  os << "): " << why;
  if (region_outside_address_space(base, row_bytes, rows, stride)) os << "; a region must name bytes that exist";
  throw usage_error(os.str());
}

// The common case of the calls below: a task annotates and the program has no consumer of its own. Its worker,
// or nullptr when dispatch must serve the call. Each call takes its fast path through this in a function of
// its own, apart from dispatch: with the program's consumer's counting beside it, and the call's arguments
// captured for it, every forwarded touch saved six registers and spilled its arguments (callgrind, a traced
// heat2d: 78 instructions a touch_rows before its tracer's).
inline engine::worker* task_worker_alone(fiber_abi* f) {
  if (!f || !f->worker || g_program_consumer.load(std::memory_order_relaxed)) [[unlikely]] return nullptr;
  return static_cast<engine::worker*>(f->worker);
}

// The runtime's listeners first, then the program's: a simulation charges the touch before anyone else
// sees it, as when it was the only consumer. Never preempted in between (include/roost/preempt.hpp): a
// listener's state is its worker's (a tracer's lane, cats's meter), and a task preempted half way through
// a record would leave it to the next task on the worker, or to the tick's own resume record, half
// written; a tracer's lock held by it would deadlock that worker. So the running fiber's count is raised
// before anything else.
template <class Call>
void dispatch(Call&& call) {
  fiber_abi* f = running_fiber();
  no_preempt_scope np(f);
  engine::worker* w = f ? static_cast<engine::worker*>(f->worker) : nullptr;
  if (!w) [[unlikely]] w = engine::current_worker();  // a worker outside a fiber; none on the program's threads
  const int id = w ? static_cast<int>(w->id) : -1;
  if (w)
    if (touch_consumer* sink = w->eng->touch_sink()) call(*sink, id);
  // The program's, counted in flight: set_touch_consumer returns only once no call of the one it replaced
  // is running (listener_calls.hpp; the program deleted one a worker was still calling: a heap-use-after-
  // free found by an outside-user campaign). Nothing counted while none is installed.
  if (g_program_consumer.load(std::memory_order_relaxed))
    consumer_calls::call(static_cast<unsigned>(id), [] { return g_program_consumer.load(std::memory_order_seq_cst); },
                         [&](touch_consumer* c) { call(*c, id); });
}
// The calls below off their fast path: a region the fast test does not pass (checked in full here), a call
// from outside a task, or a consumer of the program's.
__attribute__((noinline)) void forward_touch_dispatched(const void* base, std::size_t bytes, access mode) {
  check("roost::touch", base, bytes, 1, bytes, false, mode);
  dispatch([&](touch_consumer& c, int w) { c.on_touch(w, base, bytes, mode); });
}
__attribute__((noinline)) void forward_touch_rows_dispatched(const void* base, std::size_t row_bytes, std::size_t rows,
                                                             std::size_t stride, access mode) {
  check("roost::touch_rows", base, row_bytes, rows, stride, true, mode);
  dispatch([&](touch_consumer& c, int w) { c.on_touch_rows(w, base, row_bytes, rows, stride, mode); });
}
}  // namespace

void count_runtime_listener(bool added) {
  std::lock_guard<std::mutex> lk(g_listeners_mu);
  g_runtime_listeners += added ? 1 : -1;
  refresh_listening_locked();
}

void forward_touch(const void* base, std::size_t bytes, access mode) {
  // The common region (a non-null base whose bytes end inside the address space) passes without the full
  // check (forward_touch_dispatched).
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  const bool plain = (b != 0 && bytes <= std::numeric_limits<std::uintptr_t>::max() - b) || bytes == 0;
  fiber_abi* f = running_fiber();
  engine::worker* w = task_worker_alone(f);
  if (plain && static_cast<unsigned>(mode) <= static_cast<unsigned>(access::read_write) && w) [[likely]] {
    no_preempt_scope np(f);
    if (touch_consumer* sink = w->eng->touch_sink()) sink->on_touch(static_cast<int>(w->id), base, bytes, mode);
    return;
  }
  forward_touch_dispatched(base, bytes, mode);
}

void forward_touch_rows(const void* base, std::size_t row_bytes, std::size_t rows,
                        std::size_t stride, access mode) {
  // The common tile passes without the full test, whose overflow check divides (a 64-bit division per call
  // was a quarter of a traced touch's instructions, callgrind, heat2d): a non-null base and row size under
  // 2^62, rows and stride under 2^31, end below (rows - 1) * stride + row_bytes + base < 3 * 2^62.
  static_assert(sizeof(std::uintptr_t) == 8, "the bound below is for 64-bit addresses");
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  const bool plain = b != 0 && ((b | row_bytes) >> 62) == 0 && ((rows | stride) >> 31) == 0 && (rows <= 1 || stride >= row_bytes);
  fiber_abi* f = running_fiber();
  engine::worker* w = task_worker_alone(f);
  if (plain && static_cast<unsigned>(mode) <= static_cast<unsigned>(access::read_write) && w) [[likely]] {
    no_preempt_scope np(f);
    if (touch_consumer* sink = w->eng->touch_sink())
      sink->on_touch_rows(static_cast<int>(w->id), base, row_bytes, rows, stride, mode);
    return;
  }
  forward_touch_rows_dispatched(base, row_bytes, rows, stride, mode);
}

void forward_compute(std::uint64_t operations) {
  fiber_abi* f = running_fiber();
  if (engine::worker* w = task_worker_alone(f)) [[likely]] {
    no_preempt_scope np(f);
    if (touch_consumer* sink = w->eng->touch_sink()) sink->on_compute(static_cast<int>(w->id), operations);
    return;
  }
  dispatch([&](touch_consumer& c, int id) { c.on_compute(id, operations); });
}
}  // namespace detail

__attribute__((noinline)) void touch_consumer::on_touch_rows(int worker, const void* base, std::size_t row_bytes,
                                                           std::size_t rows,
                                   std::size_t stride, access mode) {
  for (std::size_t r = 0; r < rows; ++r) on_touch(worker, static_cast<const char*>(base) + r * stride, row_bytes, mode);
}

touch_consumer* set_touch_consumer(touch_consumer* c) {
  // Not preempted while it holds the listeners' lock and waits (preempt.hpp: the runtime's own code).
  detail::no_preempt_scope np(detail::running_fiber());
  return detail::consumer_calls::replace([&] {
    std::lock_guard<std::mutex> lk(detail::g_listeners_mu);
    touch_consumer* prev = detail::g_program_consumer.exchange(c, std::memory_order_seq_cst);
    detail::refresh_listening_locked();
    return prev;
  });
}

}  // namespace roost
