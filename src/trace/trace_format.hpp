// The binary trace format (ROOST_TRACE=path writes `path`; `path.json` is the same run as Chrome/Perfetto
// JSON). Little-endian, version 1:
//
//   header   "ROOSTTRC" (8 bytes) | u32 version = 1 | u32 workers | u64 start_ns (CLOCK_MONOTONIC)
//            | u32 n | n bytes: the topology summary
//            | u64 l2_bytes | u64 llc_bytes (0: not described) | u32 llc_domain[workers] (the last-level
//              cache each worker shares: KRD merges the accesses of one domain)
//   blocks   one per worker and one for the runtime (worker = 0xffff):
//            u32 worker | u64 count | count records
//   record   u64 t_ns (since start) | u64 a | u64 b | u32 index | u16 kind | u16 worker     (32 bytes)
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
//   iteration_begin, iteration_end   around each runtime::run, in the runtime's block
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
  std::uint64_t t_ns;
  std::uint64_t a;
  std::uint64_t b;
  std::uint32_t index;
  std::uint16_t kind;
  std::uint16_t worker;
};
static_assert(sizeof(record) == 32);

constexpr std::uint32_t kVersion = 1;
constexpr std::uint16_t kRuntimeBlock = 0xffff;

struct trace_file {
  std::uint32_t version = kVersion;
  std::uint32_t workers = 0;
  std::uint64_t start_ns = 0;
  std::string topology;
  std::uint64_t l2_bytes = 0, llc_bytes = 0;
  std::vector<std::uint32_t> llc_domain;  // per worker
  std::vector<record> records;  // every block, in file order
};

// Clear errors for a file that is not a trace, is of another version, or is cut short: the message names
// the file and the byte offset.
struct format_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

trace_file read(const std::string& path);
void write_binary(const std::string& path, const trace_file& t);
void write_chrome_json(const std::string& path, const trace_file& t);

}  // namespace roost::trace
