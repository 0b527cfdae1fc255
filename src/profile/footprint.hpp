// Footprint sources and the SOID partition of cats (seed 000 §3.2).
//
// A task's SOID (eq. 1) is its own footprint plus its children's SOIDs. The own footprint comes from a
// source behind one interface:
//  * perf_event hardware counters: private data-cache misses of the thread, times the line size, attributed
//    to whatever task ran between two switches (segment_meter) — where the machine has a PMU;
//  * kernel annotations: the bytes a task declares with roost::touch;
//  * none: cats says so and schedules as ws.
// After the profiling iteration every spawn path gets a tier (classify), from the shared cache size.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "roost/detail/task_frame.hpp"

namespace roost::profile {

// A monotonic per-thread counter of data traffic.
class counter_reader {
 public:
  virtual ~counter_reader() = default;
  virtual bool read(std::uint64_t& value) = 0;
};

// perf_event: L1 data-cache read misses of the calling thread (the private cache level every PMU exposes
// through the generic cache events). nullptr with the reason when the machine has no PMU or forbids it.
std::unique_ptr<counter_reader> open_cache_miss_counter(std::string& why_not);

// Where cats gets its per-thread counters: open_cache_miss_counter unless a test injected another factory
// (this machine has no PMU, so the counter path is tested with injected readings). A factory is called on
// the thread whose counter it opens.
using counter_factory = std::unique_ptr<counter_reader> (*)(std::string& why_not);
void set_counter_factory(counter_factory f, const char* name);  // nullptr: perf_event again
std::unique_ptr<counter_reader> open_counter(std::string& why_not);
std::string counter_source_name();  // "perf_event (L1D read misses)" or the injected factory's name

// Attributes a counter's increments to the task that ran in between: begin() when a task starts or resumes
// on this worker, end() when it stops or suspends. own_bytes += (reading delta) * scale. Atomic: a task
// that moved between workers can be credited by two meters at once.
class segment_meter {
 public:
  explicit segment_meter(double bytes_per_count = 64) : scale_(bytes_per_count) {}
  void begin(detail::task_id* t, std::uint64_t reading) {
    end(reading);
    current_ = t;
  }
  void end(std::uint64_t reading) {
    if (current_ && reading >= last_)
      std::atomic_ref<std::uint64_t>(current_->own_bytes)
          .fetch_add(static_cast<std::uint64_t>(static_cast<double>(reading - last_) * scale_), std::memory_order_relaxed);
    current_ = nullptr;
    last_ = reading;
  }

 private:
  detail::task_id* current_ = nullptr;
  std::uint64_t last_ = 0;
  double scale_;
};

enum class tier : std::uint8_t { unknown = 0, inter = 1, leaf = 2, intra = 3 };
const char* tier_name(tier t);

// §3.2.2 / Fig. 6: inter-socket when the task's SOID exceeds the shared cache; a leaf inter-socket task
// when it fits while its parent's does not (the root has no parent: it is a leaf when it fits); else intra.
inline tier classify(std::uint64_t soid, std::optional<std::uint64_t> parent_soid, std::uint64_t cache) {
  if (soid > cache) return tier::inter;
  if (!parent_soid || *parent_soid > cache) return tier::leaf;
  return tier::intra;
}

std::string path_of(const detail::task_id& id);  // "0.2.1"

// SOIDs by spawn path, filled concurrently during the profiling iteration.
class soid_table {
 public:
  void record(const std::string& path, std::uint64_t soid) {
    std::lock_guard<std::mutex> lk(m_);
    soids_[path] = soid;
  }
  std::optional<std::uint64_t> soid(const std::string& path) const {
    auto it = soids_.find(path);
    if (it == soids_.end()) return std::nullopt;
    return it->second;
  }
  std::unordered_map<std::string, tier> partition(std::uint64_t cache) const;
  std::size_t size() const { return soids_.size(); }
  void clear() { soids_.clear(); }

 private:
  std::mutex m_;
  std::unordered_map<std::string, std::uint64_t> soids_;
};

}  // namespace roost::profile
