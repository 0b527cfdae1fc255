// The binary trace format (ROOST_TRACE=path writes `path` while the runtime runs; `path.json` is the same run
// as Chrome/Perfetto JSON, written when the runtime is destroyed). Little-endian, version 6 (readers take 3,
// which lacks steal_failures and wrote a steal record for every failed attempt, 4, which wrote every touch as
// a whole touch record, and 5, which wrote every task_end and touch_rows whole):
//
//   header   "ROOSTTRC" (8 bytes) | u32 version = 6 | u32 workers | u64 start_ns (CLOCK_MONOTONIC)
//            | u64 start_ticks (the records' clock at start_ns) | u32 n | n bytes: the topology summary,
//              which begins with "simulated: " in a run of the simulated platform (its times are virtual)
//            | u64 l2_bytes | u64 llc_bytes (0: not described) | u32 llc_domain[workers] (the last-level
//              cache each worker shares: KRD merges the accesses of one domain)
//   chunks   u32 lane | u32 count | u64 ticks | u64 ns | u64 base | u32 na | u32 nb | u32 ni | u32 0  (48 bytes)
//            | u64 a[na] | u64 b[nb] | u32 dt[count] | u32 index[ni] | u8 kind[count] | zeros to a multiple of 8
//
// A chunk holds `count` records of one lane in columns: lane is a worker, 0xffff the runtime (iterations), or
// 0xfffe the end (count 0, written last when the runtime is destroyed: a trace without it was cut short).
// A worker writes its lane as a chunk whenever its buffer fills (tracer.hpp), so a lane's chunks are in its
// order and the lanes' chunks interleave. (ticks, ns): both clocks, read when the chunk was written.
// A record's time is base + dt, in ticks of the cheap clock (the TSC where there is one, else ns). Its kind
// says which of a, b and index it stores (the table below), each the next value of its column; the others
// are 0. A task_begin's serial is not stored: it is lane << 48 | the number of task_begins in the lane so
// far, this one included. Fields that are always 0 or implied are left out so that a fine-grained program's
// trace takes half the bytes of whole records (17 bytes for a spawn or a task_begin, 13 for an end, 5 for
// a task_end_last).
//
// Readers give whole records (`record`), lane by lane (workers in order, then the runtime), each lane in its
// order, with times in ns since start_ns from the clock pair of the chunk written last:
// t_ns = (t - start_ticks) * (ns - start_ns) / (ticks - start_ticks), 0 for t <= start_ticks.
//
// Records by kind, with the columns each stores in brackets:
//   task_begin [b index]  a = task serial, b = parent's serial (0: none, the root of a run; kUnrecorded, all
//                         ones: a spawner that was not recorded, as a stolen task's may be; version 3 wrote 0
//                         there too), index = rank among the parent's children that the engine named: at
//                         a depth, a child an inline path spawned (ws-help's first child of a group, a
//                         two-way join's half) is part of its spawner's span and is not counted, so the
//                         index can be below the child's rank in the program (exact at depth all)
//   task_end [a]          a = serial
//   task_end_last []      the end of the task whose task_begin is the lane's latest so far (a leaf's end, most
//                         often): its serial is implied as that begin's is. 5 bytes instead of 13. Readers
//                         give it as the task_end it stands for. Version 6 added it.
//   task_resume [a]       a = serial (a suspended task continues here, or a task goes on here without a switch
//                         after running on another worker: observe.hpp, observe_moved); a task whose begin was not recorded
//                         (deeper than its worker's recording depth where it was spawned, or spawned by a
//                         task not recorded: ROOST_TRACE_DEPTH) has a serial with bit 47 set, given at its
//                         first resumption
//   touch [a b index]     a = base address, b = bytes, index = 0 read, 1 write, 2 read-write (roost::touch);
//                         written only for a region of 4 GiB or more since version 5
//   touch_read, touch_write, touch_read_write [a index]
//                         roost::touch of a region under 4 GiB, the mode in the kind: a = base address,
//                         index = bytes. 17 bytes instead of 25: touches were most of a heat-like program's
//                         trace (57% of its records). Readers give them as touch records (b = bytes,
//                         index = the mode), so nothing that reads records tells the two forms apart.
//                         Version 5 added them.
//   touch_rows_read, touch_rows_write, touch_rows_read_write [a b index]
//                         a = base address, b = row bytes << 32 | rows, index = stride in bytes; the mode is
//                         in the kind (roost::touch_rows)
//   touch_rows_read_same, touch_rows_write_same, touch_rows_read_write_same [a]
//                         a touch_rows whose row bytes, rows and stride (b and index) are those of the chunk's
//                         previous touch_rows record, of any mode (a tile's source and destination, the next
//                         tile of the same shape): 13 bytes instead of 25. The first touch_rows of a chunk is
//                         always whole, so its touch_rows decode without the chunks before it (its
//                         task serials need them: the lane's task_begins are counted). Readers give it as the
//                         touch_rows record it stands for. Version 6 added them.
//   spawn [a index]       a = the spawning task's serial, index = the child's rank. No longer written: the
//                         child's task_begin carries both, and a fine-grained program paid a quarter of its
//                         trace's cost for it; readers still accept it
//   steal [a b]           a = victim worker, b = 1: a job was taken (thief's lane); version 3 also wrote one
//                         with b = 0 for every failed attempt
//   steal_failures [a b]  a = failed steal attempts since the lane's last steal record, b = the last victim
//                         tried; written when the search ends, just before the successful steal, idle_end or
//                         sleep_begin (or last in its lane). Version 4 added it: a worker looking for work
//                         wrote a record per attempt (53,588 in six 2-worker runs of heat)
//   idle_begin, idle_end []             a worker enters its scheduling loop (it runs no task from there) /
//                                       leaves it with a job to run or to stop; a worker's work is its
//                                       time inside an iteration and outside these (roost-analyze ovr)
//   sleep_begin, sleep_end []           an idle worker goes to sleep / wakes
//   iteration_begin, iteration_end []   around each runtime::run, in the runtime's lane
//   memory [a b index]    simulated runs only, after each touch record (after the last of the row-by-row
//                         touches a touch_rows too large to pack becomes): what the simulated memory hierarchy
//                         made of it: a = cache lines, b = their modelled memory time in ns (what the
//                         task stalled; src/sim/README.md), index = lines fetched from another node's DRAM
//                         (seed 002 Fig. 8 colours tasks by b / a). Version 3 added it.
// Serials are unique in a run (worker << 48 | per-worker count); spawn paths follow from (parent, index).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace roost::trace {

enum class kind : std::uint16_t {
  task_begin = 1, task_end = 2, task_resume = 3, touch = 4,
  sleep_begin = 5, sleep_end = 6, iteration_begin = 7, iteration_end = 8,
  touch_rows_read = 9, touch_rows_write = 10, touch_rows_read_write = 11,
  spawn = 12, steal = 13, idle_begin = 14, idle_end = 15, memory = 16, steal_failures = 17,
  touch_read = 18, touch_write = 19, touch_read_write = 20,
  task_end_last = 21, touch_rows_read_same = 22, touch_rows_write_same = 23, touch_rows_read_write_same = 24,
};

// A touch under 4 GiB as the tracer stores it (the kind says the mode: 0 read, 1 write, 2 read-write).
constexpr bool is_short_touch(kind k) {
  return k == kind::touch_read || k == kind::touch_write || k == kind::touch_read_write;
}
constexpr kind short_touch(std::uint32_t mode) {
  return static_cast<kind>(static_cast<std::uint32_t>(kind::touch_read) + mode);
}
constexpr std::uint32_t short_touch_mode(kind k) {
  return static_cast<std::uint32_t>(k) - static_cast<std::uint32_t>(kind::touch_read);
}

// A touch_rows like the chunk's previous one (version 6), and the whole kind it stands for.
constexpr bool is_rows_same(kind k) {
  return k == kind::touch_rows_read_same || k == kind::touch_rows_write_same || k == kind::touch_rows_read_write_same;
}
constexpr bool is_whole_rows(kind k) {
  return k == kind::touch_rows_read || k == kind::touch_rows_write || k == kind::touch_rows_read_write;
}
constexpr kind rows_same(kind whole) {
  return static_cast<kind>(static_cast<std::uint32_t>(whole) - static_cast<std::uint32_t>(kind::touch_rows_read) +
                           static_cast<std::uint32_t>(kind::touch_rows_read_same));
}
constexpr kind rows_whole(kind same) {
  return static_cast<kind>(static_cast<std::uint32_t>(same) - static_cast<std::uint32_t>(kind::touch_rows_read_same) +
                           static_cast<std::uint32_t>(kind::touch_rows_read));
}

constexpr bool is_touch(kind k) {
  return k == kind::touch || is_whole_rows(k) || is_short_touch(k) || is_rows_same(k);
}
// The columns a kind stores (the table above).
constexpr bool stores_a(kind k) {
  return k == kind::task_end || k == kind::task_resume || is_touch(k) || k == kind::spawn || k == kind::steal ||
         k == kind::memory || k == kind::steal_failures;
}
constexpr bool stores_b(kind k) {
  return k == kind::task_begin || k == kind::touch || is_whole_rows(k) || k == kind::steal || k == kind::memory ||
         k == kind::steal_failures;
}
constexpr bool stores_index(kind k) {
  return k == kind::task_begin || k == kind::touch || is_whole_rows(k) || is_short_touch(k) || k == kind::spawn ||
         k == kind::memory;
}
constexpr unsigned kKinds = 25;  // kinds are 1 .. kKinds - 1
// The first kind each version cannot hold (version 5 added the short touches, 6 task_end_last and the
// touch_rows like the previous one).
constexpr unsigned first_kind_after(std::uint32_t version) {
  return version < 5 ? static_cast<unsigned>(kind::touch_read)
         : version < 6 ? static_cast<unsigned>(kind::task_end_last)
                       : kKinds;
}

// A record as readers give it.
struct record {
  std::uint64_t t_ns;  // ns since start
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
  std::uint64_t base;
  std::uint32_t na, nb, ni;
  std::uint32_t zero = 0;
  // The columns' bytes after the header, padding included.
  std::uint64_t body_bytes() const {
    const std::uint64_t n = 8ull * na + 8ull * nb + 4ull * count + 4ull * ni + count;
    return (n + 7) & ~std::uint64_t{7};
  }
};
static_assert(sizeof(chunk_header) == 48);

constexpr std::uint32_t kVersion = 6;
constexpr std::uint64_t kUnrecorded = ~std::uint64_t{0};  // a task_begin's parent serial: not recorded
constexpr std::uint32_t kOldestVersion = 3;  // the oldest the readers take
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
  unique_fd(unique_fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  unique_fd& operator=(unique_fd&& o) noexcept {
    std::swap(fd, o.fd);  // o closes what this held
    return *this;
  }
  ~unique_fd();
};

// The header's bytes (the tracer writes them when the runtime starts).
std::string encode_header(const header& h);
// Records of one lane as its only chunk (times in ticks): for tests and tools; the tracer fills columns
// directly. Stored as the tracer stores them: a task_begin's `a` dropped (readers derive it), a touch under
// 4 GiB short, the end of the lane's latest task_begin as task_end_last (its begins counted from this
// chunk's first), a touch_rows like the previous one as its `_same` kind. std::invalid_argument if the times
// span 2^32 ticks or more.
std::string encode_chunk(std::uint32_t lane, std::uint64_t ticks, std::uint64_t ns, const std::vector<record>& rs);

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
  void decode(std::uint64_t at, const chunk_header& c, const std::string& body, std::vector<record>& out);

  std::string path_;
  unique_fd file_;
  std::uint64_t size_ = 0, pos_ = 0, first_chunk_ = 0;
  header head_;
  bool complete_ = false;
  double ns_per_tick_ = 1.0;
  std::vector<std::uint64_t> task_begins_;  // per worker lane so far: the implied serials
  std::string body_;                        // the chunk being decoded
};

trace_file read(const std::string& path);
// Writes `t` (times in ns) as a trace of one chunk per lane, with ticks = ns; for tests and tools.
void write_binary(const std::string& path, const trace_file& t);
// The timeline of the trace at `trace_path` as Chrome/Perfetto JSON (chrome_json.cpp).
void write_chrome_json(const std::string& trace_path, const std::string& json_path);

}  // namespace roost::trace
