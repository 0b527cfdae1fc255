#include "roost/touch.hpp"

#include "roost/runtime.hpp"

namespace roost {

namespace detail {
std::atomic<touch_consumer*> g_touch_consumer{nullptr};

void forward_touch(touch_consumer* c, const void* base, std::size_t bytes, access mode) {
  c->on_touch(this_worker_id(), base, bytes, mode);
}

void forward_touch_rows(touch_consumer* c, const void* base, std::size_t row_bytes, std::size_t rows,
                        std::size_t stride, access mode) {
  c->on_touch_rows(this_worker_id(), base, row_bytes, rows, stride, mode);
}

void forward_compute(touch_consumer* c, std::uint64_t operations) { c->on_compute(this_worker_id(), operations); }
}  // namespace detail

touch_consumer* set_touch_consumer(touch_consumer* c) {
  return detail::g_touch_consumer.exchange(c, std::memory_order_acq_rel);
}

}  // namespace roost
