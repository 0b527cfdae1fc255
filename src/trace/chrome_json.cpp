// A trace as Chrome/Perfetto JSON ("traceEvents"): task spans, sleep and idle spans per worker, iteration
// marks on the runtime's track. Read chunk by chunk: the memory is one chunk and the spans still open.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <system_error>
#include <unordered_map>

#include "trace/trace_format.hpp"

namespace roost::trace {

namespace {
struct file_closer {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

struct json_out {
  std::FILE* f;
  bool first = true;
  // A complete event ("X"); `extra` is more fields, each with its leading comma. Times in us with 3
  // decimals, from integer ns.
  void span(const char* name, const std::string& tid, std::uint64_t begin_ns, std::uint64_t end_ns, const char* extra) {
    const std::uint64_t dur = end_ns - begin_ns;
    std::fprintf(f, "%s{\"name\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%s,\"ts\":%" PRIu64 ".%03" PRIu64
                 ",\"dur\":%" PRIu64 ".%03" PRIu64 "%s}",
                 first ? "" : ",\n", name, tid.c_str(), begin_ns / 1000, begin_ns % 1000, dur / 1000, dur % 1000, extra);
    first = false;
  }
  void raw(const std::string& ev) {
    std::fprintf(f, "%s%s", first ? "" : ",\n", ev.c_str());
    first = false;
  }
};

struct lane_key_hash {
  std::size_t operator()(const std::pair<std::uint16_t, std::uint64_t>& k) const {
    return std::hash<std::uint64_t>()(k.second * 0x9e3779b97f4a7c15ull ^ k.first);
  }
};
}  // namespace

void write_chrome_json(const std::string& trace_path, const std::string& json_path) {
  chunk_reader in(trace_path);
  std::unique_ptr<std::FILE, file_closer> file(std::fopen(json_path.c_str(), "w"));
  if (!file) throw std::system_error(errno, std::generic_category(), "roost: cannot write trace file '" + json_path + "'");
  json_out o{file.get()};
  std::fputs("{\"traceEvents\":[\n", o.f);
  // Thread names for the timeline: one track per worker, one for the runtime (run() calls).
  const std::uint32_t workers = in.head().workers;
  const std::string runtime_tid = std::to_string(workers);
  for (std::uint32_t w = 0; w <= workers; ++w)
    o.raw("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(w) + ",\"args\":{\"name\":\"" +
          (w == workers ? std::string("runtime") : "worker " + std::to_string(w)) + "\"}}");
  std::unordered_map<std::pair<std::uint16_t, std::uint64_t>, std::uint64_t, lane_key_hash> open;  // -> begin
  std::map<std::uint16_t, std::uint64_t> asleep, idle;
  std::uint16_t lane = 0;
  std::vector<record> chunk;
  while (in.next(lane, chunk)) {
    const std::string tid = lane == kRuntimeLane ? runtime_tid : std::to_string(lane);
    for (const auto& r : chunk) {
      const auto k = static_cast<kind>(r.kind);
      if (k == kind::task_begin || k == kind::task_resume) {
        open[{r.worker, r.a}] = r.t_ns;
      } else if (k == kind::task_end) {
        auto it = open.find({r.worker, r.a});
        if (it != open.end()) {
          char name[64];
          std::snprintf(name, sizeof name, "task %" PRIu64 "@%" PRIu64, static_cast<std::uint64_t>(r.a & 0xffffffffffffull), r.a >> 48);
          o.span(name, tid, it->second, r.t_ns, "");
          open.erase(it);
        }
      } else if (k == kind::sleep_begin) {
        asleep[r.worker] = r.t_ns;
      } else if (k == kind::sleep_end && asleep.count(r.worker)) {
        o.span("sleep", tid, asleep[r.worker], r.t_ns, ",\"cname\":\"grey\"");
        asleep.erase(r.worker);
      } else if (k == kind::idle_begin) {
        idle[r.worker] = r.t_ns;
      } else if (k == kind::idle_end && idle.count(r.worker)) {
        o.span("idle", tid, idle[r.worker], r.t_ns, ",\"cname\":\"yellow\"");
        idle.erase(r.worker);
      } else if (k == kind::iteration_begin || k == kind::iteration_end) {
        char ev[160];
        std::snprintf(ev, sizeof ev, "{\"name\":\"%s\",\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":%s,\"ts\":%" PRIu64 ".%03" PRIu64 "}",
                      k == kind::iteration_begin ? "iteration begin" : "iteration end", tid.c_str(), r.t_ns / 1000,
                      r.t_ns % 1000);
        o.raw(ev);
      }
    }
  }
  std::fputs("\n]}\n", o.f);
  if (std::fflush(o.f) != 0 || std::ferror(o.f))
    throw std::system_error(errno, std::generic_category(), "roost: writing trace file '" + json_path + "'");
  if (std::fclose(file.release()) != 0)
    throw std::system_error(errno, std::generic_category(), "roost: writing trace file '" + json_path + "'");
}

}  // namespace roost::trace
