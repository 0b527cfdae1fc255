#include "profile/footprint.hpp"

#include "engine/task_path.hpp"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

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

std::string path_of(const detail::task_id& id) { return engine::format_spawn_path(engine::spawn_path(id)); }

std::unordered_map<std::string, tier> soid_table::partition(std::uint64_t cache) const {
  std::unordered_map<std::string, tier> out;
  for (const auto& [path, own_soid] : soids_) {
    auto dot = path.rfind('.');
    std::optional<std::uint64_t> parent = dot == std::string::npos ? std::nullopt : soid(path.substr(0, dot));
    out[path] = classify(own_soid, parent, cache);
  }
  return out;
}

}  // namespace roost::profile
