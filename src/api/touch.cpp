#include "roost/touch.hpp"

#include <sstream>

#include "api/region_check.hpp"
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
}  // namespace

void forward_touch(touch_consumer* c, const void* base, std::size_t bytes, access mode) {
  check("roost::touch", base, bytes, 1, bytes, false);
  c->on_touch(this_worker_id(), base, bytes, mode);
}

void forward_touch_rows(touch_consumer* c, const void* base, std::size_t row_bytes, std::size_t rows,
                        std::size_t stride, access mode) {
  check("roost::touch_rows", base, row_bytes, rows, stride, true);
  c->on_touch_rows(this_worker_id(), base, row_bytes, rows, stride, mode);
}

void forward_compute(touch_consumer* c, std::uint64_t operations) { c->on_compute(this_worker_id(), operations); }
}  // namespace detail

touch_consumer* set_touch_consumer(touch_consumer* c) {
  return detail::g_touch_consumer.exchange(c, std::memory_order_acq_rel);
}

}  // namespace roost
