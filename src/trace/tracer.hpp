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
#include <algorithm>
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
  // Records per lane buffer: 64 KiB of columns (at most 25 bytes a record) per worker, so that one write
  // carries 2560 events (the system call's cost per event stays small) and 16 workers' buffers fit in 1 MiB.
  static constexpr std::uint32_t kChunkRecords = 2560;

  // `adaptive`: ROOST_TRACE_DEPTH=auto on the native platform (below, "The recording depth under auto").
  // `source`: where the path came from (ROOST_TRACE or options::trace), which errors name.
  tracer(std::string path, unsigned workers, std::string topology, caches c, bool adaptive = false,
         std::string source = "ROOST_TRACE");
  tracer(const tracer&) = delete;
  ~tracer() override;

  // Creates the trace file with its header, and FILE.json (empty until finish()). config_error naming
  // ROOST_TRACE, the file and the system's reason when either cannot be written.
  void open();

  void task_begin(unsigned w, detail::task_id& id) {
    if (w >= lanes_.size()) return;
    lane& l = lanes_[w];
    id.serial = (static_cast<std::uint64_t>(w) << 48) | l.next_serial++;  // readers derive it again
    l.deepest = std::max(l.deepest, id.split_depth);
    ++l.task_records;
    std::uint64_t parent = 0;  // the root
    if (id.parent) parent = serial_of(*id.parent);
    if (id.parent && !parent) parent = kUnrecorded;
    append<kind::task_begin>(l, static_cast<std::uint16_t>(w), 0, parent, id.index);
  }
  // Only a task that has a serial (its begin or a resumption was recorded): an observer installed while the
  // task ran makes the engine report its end, whose begin this tracer never saw.
  // The end of the lane's latest task_begin (a leaf's, most often) goes out as task_end_last, without its
  // serial (trace_format.hpp).
  void task_end(unsigned w, const detail::task_id& id) {
    if (!id.serial || w >= lanes_.size()) return;
    lane& l = lanes_[w];
    ++l.task_records;
    const auto lane_id = static_cast<std::uint16_t>(w);
    if (id.serial == ((static_cast<std::uint64_t>(w) << 48) | (l.next_serial - 1)))
      append<kind::task_end_last>(l, lane_id, 0, 0, 0);
    else
      append<kind::task_end>(l, lane_id, id.serial, 0, 0);
  }
  // A task whose start was left to its spawner's span (ROOST_TRACE_DEPTH) gets its serial when it first
  // resumes: from there on it is recorded, its end too (observe.hpp), and readers see a resumption of a task
  // whose begin they have not met.
  void task_resume(unsigned w, detail::task_id& id) {
    if (w >= lanes_.size()) return;
    // Not from next_serial: readers count a lane's task_begins to know their serials (trace_format.hpp).
    // Atomic: a child of this task in another group may be starting on another worker, reading it.
    if (!id.serial)
      std::atomic_ref<std::uint64_t>(id.serial)
          .store((static_cast<std::uint64_t>(w) << 48) | kResumeSerial | lanes_[w].next_resume_serial++,
                 std::memory_order_relaxed);
    add<kind::task_resume>(w, id.serial, 0, 0);
  }
  void sleep(unsigned w, bool begin) {
    if (w >= lanes_.size()) return;
    if (begin) {
      end_search(lanes_[w], w);
      add<kind::sleep_begin>(w, 0, 0, 0);
    } else {
      add<kind::sleep_end>(w, 0, 0, 0);
    }
  }
  void idle(unsigned w, bool begin) {
    if (w >= lanes_.size()) return;
    if (begin) {
      add<kind::idle_begin>(w, 0, 0, 0);
    } else {
      end_search(lanes_[w], w);
      add<kind::idle_end>(w, 0, 0, 0);
    }
  }
  // A failed attempt is counted, not recorded: a worker looking for work makes millions. The count goes out
  // as one steal_failures record when the search ends (end_search: a steal, leaving the loop, sleeping).
  void steal(unsigned thief, unsigned victim, bool taken) {
    if (thief >= lanes_.size()) return;
    lane& l = lanes_[thief];
    if (!taken) {
      ++l.failed_steals;
      l.last_victim = victim;
      return;
    }
    end_search(l, thief);
    append<kind::steal>(l, static_cast<std::uint16_t>(thief), victim, 1, 0);
  }
  // What the simulated memory hierarchy made of the worker's last touch (trace_format.hpp, "memory").
  void memory(unsigned w, std::uint64_t lines, std::uint64_t memory_ns, std::uint64_t remote_lines) {
    add<kind::memory>(w, lines, memory_ns, static_cast<std::uint32_t>(std::min<std::uint64_t>(remote_lines, 0xffffffffu)));
  }
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
  // them with the clock pairs in the file), else the monotonic clock in ns. Simulated, the running sim
  // thread's virtual clock, as the clock pairs are (ticks and ns then agree: one tick a virtual ns).
  static std::uint64_t ticks() {
#ifdef ROOST_HAVE_TSC
    if (platform::t_sim) [[unlikely]] return platform::os::now_ns();
    return __rdtsc();  // invariant TSC on the machines roost targets (constant_tsc, nonstop_tsc)
#else
    return platform::os::now_ns();
#endif
  }

  // The recording depth under auto (ROOST_TRACE_DEPTH=auto, the default). A task recorded costs two clock
  // reads, its begin's and its end's: 2 x 9.6 ns on a 2-vCPU AMD EPYC, against a work-first spawn of 42 ns
  // (fib under ws: 1.78x with every task recorded). No store, format or buffer removes the reads while every
  // task carries its own times; only recording fewer tasks does. So under auto the tracer bounds what it
  // spends, not what it records. When a lane's chunk is written (adapt), it prices the chunk's records at
  // record_ticks_ each, against the time the chunk covers, and sets its worker's recording depth
  // (observe.hpp, nested_seen) for the next chunk (next_depth). The tasks' records may cost what is left of
  // kAutoBudget of the worker's own time after the records the depth cannot leave out (touches, idle,
  // steals), and a quarter of kAutoBudget at least, so that a program whose touches alone cost more keeps
  // the top of its task tree:
  //  - over that: shallower by as many levels as halvings bring them under (a level of a binary split holds
  //    about half the tasks at and below it);
  //  - under a quarter of it, while tasks at the depth were recorded: one level deeper;
  //  - a chunk without task records leaves the depth as it is.
  // record_ticks_ is the clock read and the stores (calibrate()); the whole record, with the hook's call and
  // the bytes' write, costs about 1.7x that here, so 1% of modelled cost is about 2% of the worker's time.
  // What the depth changes is how fine the timeline is: OVR, WTI and KRD (roost-analyze) read the records
  // it never leaves out.
  static constexpr double kAutoBudget = 0.01;
  static constexpr std::uint32_t kAllDepths = ~std::uint32_t{0};
  // The rule: a worker's depth after a chunk of `records` records, `task_records` of them task begins and
  // ends, spanning `span` ticks at `record_ticks` each, whose task_begins reached split depth `deepest`, for
  // a `budget` (a fraction of the worker's time).
  static std::uint32_t next_depth(std::uint32_t depth, std::uint32_t deepest, std::uint32_t records,
                                  std::uint32_t task_records, std::uint64_t span, double record_ticks,
                                  double budget);

 private:
  // A lane's buffer holds its chunk's columns (trace_format.hpp), each sized for kChunkRecords: a record
  // stores its time, its kind, and only the fields its kind has.
  static std::uint64_t* column_a(char* buf) { return reinterpret_cast<std::uint64_t*>(buf); }
  static std::uint64_t* column_b(char* buf) { return column_a(buf) + kChunkRecords; }
  static std::uint32_t* column_dt(char* buf) { return reinterpret_cast<std::uint32_t*>(column_b(buf) + kChunkRecords); }
  static std::uint32_t* column_index(char* buf) { return column_dt(buf) + kChunkRecords; }
  static std::uint8_t* column_kinds(char* buf) { return reinterpret_cast<std::uint8_t*>(column_index(buf) + kChunkRecords); }
  struct alignas(64) lane {
    char* buf = nullptr;  // kLaneBytes, mapped by the constructor
    std::uint32_t used = 0, na = 0, nb = 0, ni = 0;
    std::uint64_t base = 0;  // the chunk's times are ticks since base, in 32 bits
    std::uint64_t next_serial = 1;
    std::uint64_t next_resume_serial = 1;
    std::uint64_t failed_steals = 0;  // since the lane's last steal record (steal_failures)
    std::uint32_t last_victim = 0;
    std::uint32_t depth = kAllDepths;  // the worker's recording depth (auto)
    std::uint32_t deepest = 0;         // the deepest split depth among the chunk's task_begins
    std::uint32_t task_records = 0;    // the chunk's task_begins and task_ends (what the depth decides)
    // The chunk's latest touch_rows: its b and index (valid while has_rows), which the next one like it leaves
    // out (trace_format.hpp, touch_rows_read_same). Cleared with each new chunk.
    std::uint64_t rows_b = 0;
    std::uint32_t rows_stride = 0;
    bool has_rows = false;
    std::uint64_t* a() const { return column_a(buf); }
    std::uint64_t* b() const { return column_b(buf); }
    std::uint32_t* dt() const { return column_dt(buf); }
    std::uint32_t* index() const { return column_index(buf); }
    std::uint8_t* kinds() const { return column_kinds(buf); }
  };
  static constexpr std::size_t kLaneBytes = 1 << 16;
  // The serials task_resume gives tasks whose begin was not recorded: apart from the begins' (bit 47).
  static constexpr std::uint64_t kResumeSerial = std::uint64_t{1} << 47;
  static_assert(kChunkRecords * 25 <= kLaneBytes);

  // A spawner's serial, as a task it spawned begins: task_resume may be giving it one on another worker (a
  // task that spawned into one group and waits on another is resumed while the first group's child runs).
  static std::uint64_t serial_of(const detail::task_id& spawner) {
    return std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(spawner.serial)).load(std::memory_order_relaxed);
  }
  // The failed attempts counted since the lane's last steal record, as one record (trace_format.hpp).
  void end_search(lane& l, unsigned w) {
    if (l.failed_steals == 0) return;
    append<kind::steal_failures>(l, static_cast<std::uint16_t>(w), l.failed_steals, l.last_victim, 0);
    l.failed_steals = 0;
  }
  // K says which columns the record stores; `as`, the kind written, is K or another kind with K's columns
  // (a short touch's mode, trace_format.hpp).
  template <kind K>
  void add(unsigned w, std::uint64_t a, std::uint64_t b, std::uint32_t index, kind as = K) {
    if (w >= lanes_.size()) [[unlikely]] return;
    append<K>(lanes_[w], w, a, b, index, as);
  }
  template <kind K>
  void append(lane& l, std::uint16_t id, std::uint64_t a, std::uint64_t b, std::uint32_t index, kind as = K) {
    store<K>(l, id, stamp(l, id), a, b, index, as);
  }
  // A record's time, as ticks since its chunk's base: read first, since a time that does not fit starts
  // another chunk, and what a record may leave out depends on its chunk (touch_rows like the previous one).
  std::uint32_t stamp(lane& l, std::uint16_t id) {
    const std::uint64_t t = ticks();
    if (t - l.base > 0xffffffffull) [[unlikely]] rebase(l, id, t);  // also when t < base (another CPU's TSC)
    return static_cast<std::uint32_t>(t - l.base);
  }
  // The lane's buffer and counts are read once and written once: a column's store may alias them (a uint32_t
  // column, a char buffer), so counts read through `l` were loaded again after every store (callgrind: 8
  // loads a record).
  template <kind K>
  void store(lane& l, std::uint16_t id, std::uint32_t dt, std::uint64_t a, std::uint64_t b, std::uint32_t index,
             kind as = K) {
    char* const buf = l.buf;
    const std::uint32_t used = l.used, na = l.na, nb = l.nb, ni = l.ni;
    column_dt(buf)[used] = dt;
    column_kinds(buf)[used] = static_cast<std::uint8_t>(as);
    if constexpr (stores_a(K)) column_a(buf)[na] = a;
    if constexpr (stores_b(K)) column_b(buf)[nb] = b;
    if constexpr (stores_index(K)) column_index(buf)[ni] = index;
    if constexpr (stores_a(K)) l.na = na + 1;
    if constexpr (stores_b(K)) l.nb = nb + 1;
    if constexpr (stores_index(K)) l.ni = ni + 1;
    l.used = used + 1;
    if (used + 1 == kChunkRecords) [[unlikely]] flush(l, id);
  }
  // row_bytes, rows and stride each pack in 32 bits of a touch_rows record; a region that does not: below.
  static constexpr std::size_t kPacks = std::size_t{1} << 32;
  __attribute__((noinline)) void on_touch_rows_unpacked(int worker, const void* base, std::size_t row_bytes,
                                                        std::size_t rows, std::size_t stride, access mode);
  // Writes the lane as a chunk and empties it; after a write error, only empties it.
  __attribute__((noinline)) void flush(lane& l, std::uint16_t id);
  // Under auto, a worker's recording depth for its next chunk, from the chunk `l` holds now.
  void adapt(lane& l, unsigned w);
  double calibrate();
  // A time that does not fit the chunk's 32 bits: the chunk so far goes out, the next starts at t.
  __attribute__((noinline)) void rebase(lane& l, std::uint16_t id, std::uint64_t t);
  lane make_lane(bool prefault);
  void unmap_lanes();
  // Appends `bytes` to the file (file_mutex_ held); on failure keeps the first error and stops the trace.
  void write_locked(const void* bytes, std::size_t n);
  void write_chunk_locked(const lane& l, std::uint16_t id);
  void keep_if_replaced_locked();  // at finish: the path no longer names this file (tracer.cpp)
  void unlink_own_timeline();      // FILE.json, if it is still the one open() made
  void drop_timeline();            // finish()'s timeline after a failure: the kept copy's, or FILE.json if ours
  // Before a chunk of n bytes goes out (file_mutex_ held): reserves the file's blocks kPreallocateBytes
  // at a time, so that a chunk's write finds them (fallocate, KEEP_SIZE). On ext4 a 60 KB chunk's write
  // took 23 us with the file growing block by block and 18 us into reserved blocks (this VM, 20 MB
  // written in chunks, the reservations' own calls counted): the write is about half of what tracing
  // costs a heat-like program (docs/benchmarks.md). finish() gives back what was not used; a program that
  // ends without destroying its runtime keeps it (up to 4 MiB past the end, which the size does not show).
  void reserve_locked(std::size_t n);
  static constexpr std::uint64_t kPreallocateBytes = std::uint64_t{4} << 20;
  bool preallocating_ = true;       // until a file system refuses (file_mutex_)
  std::uint64_t file_end_ = 0;      // bytes written so far, header included, once the first chunk came
  std::uint64_t allocated_end_ = 0; // bytes reserved from the start of the file

  std::string path_;
  std::string source_;  // ROOST_TRACE or options::trace
  std::string json_path_;
  // What the two paths name, a link's target where one is a link (open()): the files open() made, which the
  // removals below remove. By the paths, a user's link went and the file it names stayed (a review).
  std::string trace_file_, json_file_;
  header header_;
  std::vector<lane> lanes_;  // one per worker
  std::mutex runtime_mutex_;
  lane runtime_lane_;  // iterations (runtime_mutex_)

  std::mutex file_mutex_;  // the file's end: one chunk at a time
  unique_fd file_;
  int write_errno_ = 0;              // the first write error (file_mutex_)
  bool error_reported_ = false;      // thrown already, or said on stderr (file_mutex_)
  bool replaced_ = false;            // the path no longer named the trace at finish (keep_if_replaced_locked)
  std::pair<std::uint64_t, std::uint64_t> json_id_{~0ull, ~0ull};  // device and inode of open()'s FILE.json
  std::atomic<bool> failed_{false};  // write_errno_ != 0, for the check after each run
  std::atomic<std::uint64_t> chunks_written_{0};
  bool finished_ = false;
  bool opened_ = false;  // open() made the files
  bool adaptive_ = false;
  double record_ticks_ = 0;
};

// Claims (or, with nullptr, gives back) the process's one tracing runtime: the hook flag and the workers'
// recording depths (set_tracing_hooks) are the process's. The events reach a tracer through its own
// runtime (engine_base::tracer, set_touch_sink), never another's. False: another runtime traces.
bool install_tracer(tracer* t);
// api/observer.cpp: the shared hook flag; `depth` is every worker's recording depth (detail::g_trace_depth):
// ROOST_TRACE_DEPTH, or where auto starts; `every_task` (ROOST_TRACE_DEPTH=all): no inline path, so that the
// halves and children they would run unnamed are recorded tasks with their spawners.
void set_tracing_hooks(bool on, std::uint32_t depth = ~std::uint32_t{0}, bool every_task = false);
// api/observer.cpp: one worker's recording depth (auto).
void set_recording_depth(unsigned worker, std::uint32_t depth);

}  // namespace roost::trace
