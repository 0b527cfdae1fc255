// ROOST_TRACE: per-worker event buffers (lanes) streamed to the trace file as the run goes, in the binary
// format of trace_format.hpp; FILE.json (Chrome/Perfetto) is made from the file when the runtime ends. Each
// worker appends to its own lane only and writes the lane as a chunk when it is full, so the tracer's memory
// is one buffer per worker however long the run (buffer_bytes()). The runtime's lane (iterations) is written
// by the thread calling run(), under a lock. Installed through the same hook flag as the observer, so with
// tracing off the engine pays one relaxed load and a branch per hook point.
//
// Errors: a file that cannot be created is a config_error when the runtime is made (open()). A write that
// fails later (a full disk) stops the trace: nothing more is written, and the error is thrown once as
// std::system_error when runtime::run returns (rethrow_write_error), or by finish() if no run() returned
// since; ~runtime prints finish()'s error on stderr (a destructor must not throw).
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "platform/platform.hpp"
#include "roost/detail/task_frame.hpp"
#include "roost/touch.hpp"
#include "trace/trace_format.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define ROOST_HAVE_TSC 1
#endif

namespace roost::trace {

class tracer final : public touch_consumer {
 public:
  struct caches {
    std::uint64_t l2_bytes = 0, llc_bytes = 0;
    std::vector<std::uint32_t> llc_domain;  // per worker
  };
  // 64 KiB per worker: one write per 2048 events keeps the system call's cost per event small, and the
  // buffers of 16 workers within 1 MiB.
  static constexpr std::uint32_t kChunkRecords = 2048;

  tracer(std::string path, unsigned workers, std::string topology, caches c);
  tracer(const tracer&) = delete;
  ~tracer() override;

  // Creates the trace file with its header, and FILE.json (empty until finish()). config_error naming
  // ROOST_TRACE, the file and the system's reason when either cannot be written.
  void open();

  void task_begin(unsigned w, detail::task_id& id) {
    if (w >= lanes_.size()) return;
    id.serial = (static_cast<std::uint64_t>(w) << 48) | lanes_[w].next_serial++;
    add(w, kind::task_begin, id.serial, id.parent ? id.parent->serial : 0, id.index);
  }
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

  // After a run: a write error not reported yet, as std::system_error (once).
  void rethrow_write_error();
  // After the workers stopped: writes what the lanes hold and the end chunk, closes the file and makes
  // FILE.json from it. std::system_error for a write error not reported yet (the trace stays as far as it
  // was written; FILE.json is then removed), or for one writing FILE.json.
  void finish();

  const std::string& path() const { return path_; }
  // The memory the tracer keeps events in: fixed when it is made, whatever the run does.
  std::size_t buffer_bytes() const;
  // Chunks written so far (all lanes).
  std::uint64_t chunks_written() const { return chunks_written_.load(std::memory_order_relaxed); }

  // The cheap clock: the time-stamp counter where there is one (records hold raw ticks; readers convert
  // them with the clock pairs in the file), else the monotonic clock in ns.
  static std::uint64_t ticks() {
#ifdef ROOST_HAVE_TSC
    return __rdtsc();  // invariant TSC on the machines roost targets (constant_tsc, nonstop_tsc)
#else
    return platform::os::now_ns();
#endif
  }

 private:
  struct alignas(64) lane {
    record* buf = nullptr;  // kChunkRecords, mapped by the constructor
    std::uint32_t used = 0;
    std::uint64_t next_serial = 1;
  };
  static constexpr std::size_t kRuntimeRecords = 64;  // the runtime's lane: two records a run

  void add(unsigned w, kind k, std::uint64_t a, std::uint64_t b, std::uint32_t index) {
    if (w >= lanes_.size()) [[unlikely]] return;
    lane& l = lanes_[w];
    l.buf[l.used] = record{ticks(), a, b, index, static_cast<std::uint16_t>(k), static_cast<std::uint16_t>(w)};
    if (++l.used == kChunkRecords) [[unlikely]] flush(w);
  }
  // Writes worker w's lane as a chunk and empties it; after a write error, only empties it.
  __attribute__((noinline)) void flush(unsigned w);
  // Appends `bytes` to the file (file_mutex_ held); on failure keeps the first error and stops the trace.
  void write_locked(const void* bytes, std::size_t n);
  void write_chunk_locked(std::uint32_t lane_id, const record* records, std::uint32_t count);

  std::string path_;
  std::string json_path_;
  header header_;
  std::vector<lane> lanes_;  // one per worker
  std::mutex runtime_mutex_;
  std::vector<record> runtime_lane_;  // iterations (runtime_mutex_), at most kRuntimeRecords

  std::mutex file_mutex_;  // the file's end: one chunk at a time
  unique_fd file_;
  int write_errno_ = 0;              // the first write error (file_mutex_)
  bool error_reported_ = false;      // thrown already (file_mutex_)
  std::atomic<bool> failed_{false};  // write_errno_ != 0, for the check after each run
  std::atomic<std::uint64_t> chunks_written_{0};
  bool finished_ = false;
};

// Installs (or, with nullptr, removes) the runtime's tracer; only one runtime traces at a time.
bool install_tracer(tracer* t);
extern std::atomic<tracer*> g_installed_tracer;  // install_tracer's; inline here for the hooks
inline tracer* current_tracer() { return g_installed_tracer.load(std::memory_order_acquire); }
void set_tracing_hooks(bool on);  // api/observer.cpp: the shared hook flag

}  // namespace roost::trace
