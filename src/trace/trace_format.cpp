#include "trace/trace_format.hpp"

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace roost::trace {

namespace {
template <class T>
void put(std::ofstream& o, const T& v) { o.write(reinterpret_cast<const char*>(&v), sizeof v); }

struct reader {
  std::string path;
  std::string data;
  std::size_t pos = 0;
  template <class T>
  T get(const char* what) {
    if (pos + sizeof(T) > data.size())
      throw format_error(path + ": truncated at byte " + std::to_string(pos) + " while reading " + what);
    T v;
    std::memcpy(&v, data.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
};
}  // namespace

void write_binary(const std::string& path, const trace_file& t) {
  std::ofstream o(path, std::ios::binary);
  if (!o) throw std::runtime_error("roost: cannot write trace file '" + path + "' (ROOST_TRACE)");
  o.write("ROOSTTRC", 8);
  put(o, t.version);
  put(o, t.workers);
  put(o, t.start_ns);
  put(o, static_cast<std::uint32_t>(t.topology.size()));
  o.write(t.topology.data(), static_cast<std::streamsize>(t.topology.size()));
  put(o, t.l2_bytes);
  put(o, t.llc_bytes);
  for (std::uint32_t w = 0; w < t.workers; ++w) put(o, w < t.llc_domain.size() ? t.llc_domain[w] : 0u);
  std::map<std::uint16_t, std::vector<const record*>> blocks;
  for (const auto& r : t.records) blocks[r.worker].push_back(&r);
  for (const auto& [w, rs] : blocks) {
    put(o, static_cast<std::uint32_t>(w));
    put(o, static_cast<std::uint64_t>(rs.size()));
    for (const record* r : rs) put(o, *r);
  }
}

trace_file read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw format_error(path + ": cannot open");
  reader r{path, std::string(std::istreambuf_iterator<char>(in), {}), 0};
  if (r.data.size() < 8 || std::memcmp(r.data.data(), "ROOSTTRC", 8) != 0)
    throw format_error(path + ": not a roost trace (no ROOSTTRC magic at byte 0)");
  r.pos = 8;
  trace_file t;
  t.version = r.get<std::uint32_t>("the version");
  if (t.version != kVersion)
    throw format_error(path + ": trace format version " + std::to_string(t.version) + " at byte 8; this roost reads version " +
                       std::to_string(kVersion));
  t.workers = r.get<std::uint32_t>("the worker count");
  t.start_ns = r.get<std::uint64_t>("the start time");
  auto n = r.get<std::uint32_t>("the topology length");
  if (r.pos + n > r.data.size()) throw format_error(path + ": truncated at byte " + std::to_string(r.pos) + " in the topology");
  t.topology = r.data.substr(r.pos, n);
  r.pos += n;
  t.l2_bytes = r.get<std::uint64_t>("the L2 size");
  t.llc_bytes = r.get<std::uint64_t>("the last-level cache size");
  for (std::uint32_t w = 0; w < t.workers; ++w) t.llc_domain.push_back(r.get<std::uint32_t>("a worker's cache domain"));
  while (r.pos < r.data.size()) {
    auto w = r.get<std::uint32_t>("a block's worker");
    auto count = r.get<std::uint64_t>("a block's record count");
    if (w != kRuntimeBlock && w >= t.workers)
      throw format_error(path + ": block for worker " + std::to_string(w) + " at byte " + std::to_string(r.pos - 12) +
                         " but the trace has " + std::to_string(t.workers) + " workers");
    for (std::uint64_t i = 0; i < count; ++i) t.records.push_back(r.get<record>("a record"));
  }
  return t;
}

void write_chrome_json(const std::string& path, const trace_file& t) {
  std::ofstream o(path);
  if (!o) throw std::runtime_error("roost: cannot write trace file '" + path + "'");
  o << "{\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string& ev) {
    o << (first ? "" : ",\n") << ev;
    first = false;
  };
  std::map<std::pair<std::uint16_t, std::uint64_t>, std::uint64_t> open;  // (worker, serial) -> begin
  std::map<std::uint16_t, std::uint64_t> asleep, idle;
  auto us = [](std::uint64_t ns) {
    std::ostringstream s;
    s.precision(3);
    s << std::fixed << ns / 1000.0;
    return s.str();
  };
  // Thread names for the timeline: one track per worker, one for the runtime (run() calls).
  const std::string runtime_tid = std::to_string(t.workers);
  for (std::uint32_t w = 0; w <= t.workers; ++w)
    emit("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(w) +
         ",\"args\":{\"name\":\"" + (w == t.workers ? std::string("runtime") : "worker " + std::to_string(w)) + "\"}}");
  for (const auto& r : t.records) {
    const auto k = static_cast<kind>(r.kind);
    const std::string tid = r.worker == kRuntimeBlock ? runtime_tid : std::to_string(r.worker);
    if (k == kind::task_begin || k == kind::task_resume) open[{r.worker, r.a}] = r.t_ns;
    else if (k == kind::task_end) {
      auto it = open.find({r.worker, r.a});
      if (it != open.end()) {
        emit("{\"name\":\"task " + std::to_string(r.a & 0xffffffffffffull) + "@" + std::to_string(r.a >> 48) +
             "\",\"ph\":\"X\",\"pid\":1,\"tid\":" + tid + ",\"ts\":" + us(it->second) + ",\"dur\":" + us(r.t_ns - it->second) +
             "}");
        open.erase(it);
      }
    } else if (k == kind::sleep_begin) asleep[r.worker] = r.t_ns;
    else if (k == kind::sleep_end && asleep.count(r.worker)) {
      emit("{\"name\":\"sleep\",\"ph\":\"X\",\"pid\":1,\"tid\":" + tid + ",\"ts\":" + us(asleep[r.worker]) +
           ",\"dur\":" + us(r.t_ns - asleep[r.worker]) + ",\"cname\":\"grey\"}");
      asleep.erase(r.worker);
    } else if (k == kind::idle_begin) idle[r.worker] = r.t_ns;
    else if (k == kind::idle_end && idle.count(r.worker)) {
      emit("{\"name\":\"idle\",\"ph\":\"X\",\"pid\":1,\"tid\":" + tid + ",\"ts\":" + us(idle[r.worker]) +
           ",\"dur\":" + us(r.t_ns - idle[r.worker]) + ",\"cname\":\"yellow\"}");
      idle.erase(r.worker);
    } else if (k == kind::iteration_begin || k == kind::iteration_end) {
      emit(std::string("{\"name\":\"") + (k == kind::iteration_begin ? "iteration begin" : "iteration end") +
           "\",\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":" + tid + ",\"ts\":" + us(r.t_ns) + "}");
    }
  }
  o << "\n]}\n";
}

}  // namespace roost::trace
