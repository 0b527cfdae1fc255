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
  tracer(std::string path, unsigned workers, std::string topology);
  tracer(const tracer&) = delete;

  void task_begin(unsigned w, detail::task_id& id);
  void task_end(unsigned w, const detail::task_id& id) { add(w, kind::task_end, id.serial, 0, 0); }
  void task_resume(unsigned w, const detail::task_id& id) { add(w, kind::task_resume, id.serial, 0, 0); }
  void sleep(unsigned w, bool begin) { add(w, begin ? kind::sleep_begin : kind::sleep_end, 0, 0, 0); }
  void iteration(bool begin);
  void on_touch(int worker, const void* base, std::size_t bytes, access mode) override;

  // Writes `path` and `path.json`; call after the workers stopped.
  void write() const;
  const std::string& path() const { return path_; }

 private:
  struct alignas(64) lane {
    std::vector<record> recs;
    std::uint64_t next_serial = 1;
  };
  void add(unsigned w, kind k, std::uint64_t a, std::uint64_t b, std::uint32_t index);
  std::uint64_t now() const;

  std::string path_;
  std::string topology_;
  std::uint64_t start_ns_;
  std::vector<lane> lanes_;
  mutable std::mutex runtime_mutex_;
  std::vector<record> runtime_lane_;
};

// Installs (or, with nullptr, removes) the runtime's tracer; only one runtime traces at a time.
bool install_tracer(tracer* t);
tracer* current_tracer();
void set_tracing_hooks(bool on);  // api/observer.cpp: the shared hook flag

}  // namespace roost::trace
