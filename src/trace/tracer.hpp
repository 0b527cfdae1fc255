// ROOST_TRACE: per-worker event buffers (lanes), written at the runtime's end in the binary format of
// trace_format.hpp and as Chrome/Perfetto JSON. Each worker appends to its own lane only; the runtime's
// lane (iterations) is written by the thread calling run(), under a lock. Installed through the same hook
// flag as the observer, so with tracing off the engine pays one relaxed load and a branch per hook point.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "roost/detail/task_frame.hpp"
#include "roost/touch.hpp"
#include "trace/trace_format.hpp"

namespace roost::trace {

class tracer final : public touch_consumer {
 public:
  struct caches {
    std::uint64_t l2_bytes = 0, llc_bytes = 0;
    std::vector<std::uint32_t> llc_domain;  // per worker
  };
  tracer(std::string path, unsigned workers, std::string topology, caches c);
  tracer(const tracer&) = delete;
  ~tracer();

  void task_begin(unsigned w, detail::task_id& id);
  void task_end(unsigned w, const detail::task_id& id) { add(w, kind::task_end, id.serial, 0, 0); }
  void task_resume(unsigned w, const detail::task_id& id) { add(w, kind::task_resume, id.serial, 0, 0); }
  void sleep(unsigned w, bool begin) { add(w, begin ? kind::sleep_begin : kind::sleep_end, 0, 0, 0); }
  void idle(unsigned w, bool begin) { add(w, begin ? kind::idle_begin : kind::idle_end, 0, 0, 0); }
  void spawn(unsigned w, const detail::task_id& parent, std::uint32_t index) { add(w, kind::spawn, parent.serial, 0, index); }
  void steal(unsigned thief, unsigned victim, bool taken) { add(thief, kind::steal, victim, taken ? 1 : 0, 0); }
  void iteration(bool begin);
  void on_touch(int worker, const void* base, std::size_t bytes, access mode) override;
  void on_touch_rows(int worker, const void* base, std::size_t row_bytes, std::size_t rows, std::size_t stride,
                     access mode) override;

  // Writes `path` and `path.json`; call after the workers stopped.
  void write() const;
  const std::string& path() const { return path_; }

 private:
  // A lane is a list of fixed chunks, pre-faulted when allocated and never copied: a growing vector
  // copied itself and faulted in fresh pages inside the traced program's time. The first chunk of each
  // lane is made by the constructor (tracer.cpp says why).
  static constexpr std::size_t kChunkRecords = 1 << 16;  // 2 MiB
  static constexpr std::size_t kPrefaultedLanes = 64;   // lanes whose first chunk the constructor makes
  struct alignas(64) lane {
    std::vector<record*> chunks;
    record* cur = nullptr;
    std::size_t used = kChunkRecords;  // of `cur`
    std::uint64_t next_serial = 1;
  };
  record* grow(lane& l);
  void add(unsigned w, kind k, std::uint64_t a, std::uint64_t b, std::uint32_t index);
  // The cheap clock: the time-stamp counter where there is one (records hold raw ticks, converted to ns at
  // write() from two (ticks, ns) calibration points), else the monotonic clock in ns.
  static std::uint64_t ticks();

  std::string path_;
  std::string topology_;
  caches caches_;
  std::uint64_t start_ns_;
  std::uint64_t start_ticks_;
  std::vector<lane> lanes_;
  mutable std::mutex runtime_mutex_;
  std::vector<record> runtime_lane_;
};

// Installs (or, with nullptr, removes) the runtime's tracer; only one runtime traces at a time.
bool install_tracer(tracer* t);
tracer* current_tracer();
void set_tracing_hooks(bool on);  // api/observer.cpp: the shared hook flag

}  // namespace roost::trace
