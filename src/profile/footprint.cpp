#include "profile/footprint.hpp"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace roost::profile {

namespace {
class perf_reader final : public counter_reader {
 public:
  explicit perf_reader(int fd) : fd_(fd) {}
  ~perf_reader() override { ::close(fd_); }
  bool read(std::uint64_t& v) override { return ::read(fd_, &v, sizeof v) == static_cast<ssize_t>(sizeof v); }

 private:
  int fd_;
};
}  // namespace

std::unique_ptr<counter_reader> open_cache_miss_counter(std::string& why_not) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HW_CACHE;
  attr.config = PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1, -1, 0);
  if (fd < 0) {
    why_not = std::string("perf_event_open(L1D read misses) failed: ") + std::strerror(errno) +
              (errno == ENOENT || errno == EOPNOTSUPP ? " (no hardware performance counters here)" : "");
    return nullptr;
  }
  return std::make_unique<perf_reader>(static_cast<int>(fd));
}

namespace {
std::atomic<counter_factory> g_factory{nullptr};
std::atomic<const char*> g_factory_name{nullptr};
}  // namespace

void set_counter_factory(counter_factory f, const char* name) {
  g_factory_name.store(f ? name : nullptr, std::memory_order_relaxed);
  g_factory.store(f, std::memory_order_release);
}

std::unique_ptr<counter_reader> open_counter(std::string& why_not) {
  if (counter_factory f = g_factory.load(std::memory_order_acquire)) return f(why_not);
  return open_cache_miss_counter(why_not);
}

std::string counter_source_name() {
  const char* n = g_factory_name.load(std::memory_order_relaxed);
  return n ? n : "perf_event (L1D read misses)";
}

const char* tier_name(tier t) {
  switch (t) {
    case tier::inter: return "inter-socket";
    case tier::leaf: return "leaf inter-socket";
    case tier::intra: return "intra-socket";
    default: return "unknown";
  }
}

void touched_spans::compact() {
  std::sort(spans_.begin(), spans_.end());
  std::size_t out = 0;
  for (const auto& [lo, hi] : spans_) {
    if (out > 0 && lo <= spans_[out - 1].second) {
      spans_[out - 1].second = std::max(spans_[out - 1].second, hi);
    } else {
      spans_[out++] = {lo, hi};
    }
  }
  spans_.resize(out);
  if (spans_.size() > kMaxSpans / 2) {  // scattered touches: keep their size, not their addresses
    for (const auto& [lo, hi] : spans_) banked_ += hi - lo;
    spans_.clear();
  }
}

std::uint64_t touched_spans::take_distinct_bytes() {
  if (spans_.empty() && banked_ == 0) return 0;  // most intervals: a task that touched nothing
  compact();
  std::uint64_t total = banked_;
  for (const auto& [lo, hi] : spans_) total += hi - lo;
  spans_.clear();
  banked_ = 0;
  return total;
}

}  // namespace roost::profile
