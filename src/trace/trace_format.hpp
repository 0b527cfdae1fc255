// The binary trace format (ROOST_TRACE=path writes `path` while the runtime runs; `path.json` is the same run
// as Chrome/Perfetto JSON, written when the runtime is destroyed). Little-endian, version 2:
//
//   header   "ROOSTTRC" (8 bytes) | u32 version = 2 | u32 workers | u64 start_ns (CLOCK_MONOTONIC)
//            | u64 start_ticks (the clock of the records at start_ns) | u32 n | n bytes: the topology summary
//            | u64 l2_bytes | u64 llc_bytes (0: not described) | u32 llc_domain[workers] (the last-level
//              cache each worker shares: KRD merges the accesses of one domain)
//   chunks   u32 lane | u32 count | u64 ticks | u64 ns | count records                       (24 + 32 count)
//            lane: a worker, 0xffff the runtime (iterations), 0xfffe the end (count 0, written last, when the
//            runtime is destroyed: a trace without it was cut short). (ticks, ns): the two clocks read when
//            the chunk was written. A worker writes a chunk whenever its buffer fills (tracer.hpp), so a
//            lane's chunks are in its order and the lanes' chunks interleave.
//   record   u64 t (ticks) | u64 a | u64 b | u32 index | u16 kind | u16 worker                    (32 bytes)
//
// Time: records hold the cheap clock's ticks (the TSC where there is one, elsewhere ns). Readers turn them into
// ns since start_ns with the clock pair of the chunk written last: t_ns = (t - start_ticks) * (ns - start_ns)
// / (ticks - start_ticks), 0 for t <= start_ticks. They give the records lane by lane, workers in order and the
// runtime's last, each lane in its own order.
//
// Records by kind:
//   task_begin   a = task serial, b = parent's serial (0: none), index = rank among the parent's children
//   task_end     a = serial          task_resume  a = serial (a suspended task continues here)
//   touch        a = base address, b = bytes, index = 0 read, 1 write, 2 read-write (roost::touch)
//   touch_rows   a = base address, b = row bytes << 32 | rows, index = stride in bytes; its mode is in
//                the kind: touch_rows_read, touch_rows_write, touch_rows_read_write (roost::touch_rows)
//   spawn        a = the spawning task's serial, index = the child's rank (the child's task_begin follows,
//                possibly on another worker)
//   steal        a = victim worker, b = 1 if a job was taken, 0 for a failed attempt (on the thief's lane)
//   idle_begin, idle_end             a worker starts / stops looking for work
//   sleep_begin, sleep_end           an idle worker goes to sleep / wakes
//   iteration_begin, iteration_end   around each runtime::run, in the runtime's lane
// Serials are unique in a run (worker << 48 | per-worker count); spawn paths follow from (parent, index).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace roost::trace {

enum class kind : std::uint16_t {
  task_begin = 1, task_end = 2, task_resume = 3, touch = 4,
  sleep_begin = 5, sleep_end = 6, iteration_begin = 7, iteration_end = 8,
  touch_rows_read = 9, touch_rows_write = 10, touch_rows_read_write = 11,
  spawn = 12, steal = 13, idle_begin = 14, idle_end = 15,
};

struct record {
  std::uint64_t t_ns;  // ticks in the file and in the tracer's buffers; ns since start once read
  std::uint64_t a;
  std::uint64_t b;
  std::uint32_t index;
  std::uint16_t kind;
  std::uint16_t worker;
};
static_assert(sizeof(record) == 32);

struct chunk_header {
  std::uint32_t lane;
  std::uint32_t count;
  std::uint64_t ticks;
  std::uint64_t ns;
};
static_assert(sizeof(chunk_header) == 24);

constexpr std::uint32_t kVersion = 2;
constexpr std::uint16_t kRuntimeLane = 0xffff;
constexpr std::uint16_t kEndLane = 0xfffe;

struct header {
  std::uint32_t version = kVersion;
  std::uint32_t workers = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t start_ticks = 0;
  std::string topology;
  std::uint64_t l2_bytes = 0, llc_bytes = 0;
  std::vector<std::uint32_t> llc_domain;  // per worker
};

// A whole trace in memory (tests and small traces; the JSON conversion reads chunk by chunk).
struct trace_file : header {
  bool complete = false;        // the end chunk is there
  std::vector<record> records;  // lane by lane, t_ns in ns since start_ns
};

// Clear errors for a file that is not a trace, is of another version, or is cut short: the message names
// the file and the byte offset.
struct format_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Owns a file descriptor: closes it when it goes.
struct unique_fd {
  int fd = -1;
  explicit unique_fd(int f = -1) : fd(f) {}
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd();
};

// The header's bytes (the tracer writes them when the runtime starts).
std::string encode_header(const header& h);

// Reads a trace one chunk at a time, so that converting a long run needs one chunk's memory. The constructor
// reads the header and walks the chunk headers once, for the last clock pair and to find damage early.
class chunk_reader {
 public:
  explicit chunk_reader(const std::string& path);
  const header& head() const { return head_; }
  bool complete() const { return complete_; }
  // The next chunk's lane and records, times in ns since start; false after the last chunk.
  bool next(std::uint16_t& lane, std::vector<record>& out);

 private:
  template <class T>
  T get(const char* what);
  void get_bytes(void* to, std::uint64_t n, const char* what);
  chunk_header get_chunk_header();

  std::string path_;
  unique_fd file_;
  std::uint64_t size_ = 0, pos_ = 0, first_chunk_ = 0;
  header head_;
  bool complete_ = false;
  double ns_per_tick_ = 1.0;
};

trace_file read(const std::string& path);
// Writes `t` (times in ns) as a trace of one chunk per lane, with ticks = ns; for tests and tools.
void write_binary(const std::string& path, const trace_file& t);
// The timeline of the trace at `trace_path` as Chrome/Perfetto JSON (chrome_json.cpp).
void write_chrome_json(const std::string& trace_path, const std::string& json_path);

}  // namespace roost::trace
