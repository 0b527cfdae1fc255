#include "roost/touch.hpp"

#include <cstdint>
#include <limits>
#include <sstream>

#include "api/region_check.hpp"
#include "roost/detail/abi.hpp"
#include "roost/errors.hpp"
#include "roost/runtime.hpp"

namespace roost {

namespace detail {
std::atomic<touch_consumer*> g_touch_consumer{nullptr};

namespace {
// A region no memory can hold reaches no consumer: a simulation would walk (or wrap around) the address
// space, a tracer record it row by row for ever. Checked here, where a call is forwarded, so that the
// annotation stays free while nothing listens (touch.hpp).
void check(const char* call, const void* base, std::size_t row_bytes, std::size_t rows, std::size_t stride, bool strided) {
  const char* why = region_outside_address_space(base, row_bytes, rows, stride);
  if (!why) [[likely]] return;
  std::ostringstream os;
  os << call << "(base=" << base;
  if (strided) os << ", row_bytes=" << row_bytes << ", rows=" << rows << ", stride=" << stride;
  else os << ", bytes=" << row_bytes;
  os << "): " << why << "; a region must name bytes that exist";
  throw usage_error(os.str());
}

// The worker of the running task: from its fiber, inline (a traced touch is a few dozen ns, and the two
// calls of this_worker_id were a tenth of it); this_worker_id outside a task (a thread of the program's own).
int touching_worker() {
  if (const fiber_abi* f = running_fiber()) [[likely]]
    if (f->worker) return static_cast<int>(f->worker->id);
  return this_worker_id();
}
}  // namespace

void forward_touch(touch_consumer* c, const void* base, std::size_t bytes, access mode) {
  // The common region (a non-null base whose bytes end inside the address space) passes without the call.
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  if (!(b != 0 && bytes <= std::numeric_limits<std::uintptr_t>::max() - b) && bytes != 0) [[unlikely]]
    check("roost::touch", base, bytes, 1, bytes, false);
  c->on_touch(touching_worker(), base, bytes, mode);
}

void forward_touch_rows(touch_consumer* c, const void* base, std::size_t row_bytes, std::size_t rows,
                        std::size_t stride, access mode) {
  check("roost::touch_rows", base, row_bytes, rows, stride, true);
  c->on_touch_rows(touching_worker(), base, row_bytes, rows, stride, mode);
}

void forward_compute(touch_consumer* c, std::uint64_t operations) { c->on_compute(touching_worker(), operations); }
}  // namespace detail

touch_consumer* set_touch_consumer(touch_consumer* c) {
  return detail::g_touch_consumer.exchange(c, std::memory_order_acq_rel);
}

}  // namespace roost
