// Footprint sources of cats and its tier rule (seed 000 §3.2).
//
// A task's SOID (eq. 1) is its own footprint plus its children's SOIDs. The own footprint comes from a
// source behind one interface:
//  * perf_event hardware counters: private data-cache misses of the thread, times the line size, attributed
//    to whatever ran between two switches (counter_meter) — where the machine has a PMU;
//  * kernel annotations: the bytes declared with roost::touch between two switches (touched_spans);
//  * none: cats says so and schedules as ws.
// Simulated, the source is the annotations, not the model's misses that DESIGN §5 lists as a third source:
// the model sees exactly the lines the annotations declare, and its misses of a task depend on what the
// schedule left in the caches before it (a task whose data an earlier one brought in counts nothing), while
// eq. 1 asks for the task's data size. The hardware counters stand in for that size only because a real
// machine offers nothing better.
// The profile itself, a bounded tree of spawn paths, is profile/soid_tree.hpp; classify gives each of its
// tasks a tier from the shared cache size.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// Turns one worker's counter readings into bytes: what the counter rose since the previous reading, times
// the bytes per count (the line size). The first reading only sets the base; a counter that went backwards
// (reset) gives nothing. cats credits each interval between two switches of a worker to the profile node
// that ran in it (sched/cats.cpp, meter_switch).
class counter_meter {
 public:
  explicit counter_meter(double bytes_per_count = 64) : scale_(bytes_per_count) {}
  std::uint64_t bytes_since_last(std::uint64_t reading) {
    const bool counts = started_ && reading >= last_;
    const std::uint64_t bytes = counts ? static_cast<std::uint64_t>(static_cast<double>(reading - last_) * scale_) : 0;
    started_ = true;
    last_ = reading;
    return bytes;
  }

 private:
  std::uint64_t last_ = 0;
  bool started_ = false;
  double scale_;
};

// The annotation source's counterpart: the address intervals one worker declared with roost::touch since it
// last switched, whose union is what it touched (overlapping touches count once). Bounded: when the buffer
// fills, its intervals are merged in place, and if that leaves more than half of it, their union is kept
// as a number and the buffer starts again (touches overlapping across that point count twice).
class touched_spans {
 public:
  static constexpr std::size_t kMaxSpans = 4096;  // 64 KiB a worker
  void add(std::uintptr_t lo, std::uintptr_t hi) {
    if (spans_.size() == kMaxSpans) compact();
    spans_.emplace_back(lo, hi);
  }
  std::uint64_t take_distinct_bytes();  // the union's size since the last take; empties the set

 private:
  void compact();
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> spans_;
  std::uint64_t banked_ = 0;
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

}  // namespace roost::profile
