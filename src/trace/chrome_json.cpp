// A trace as Chrome/Perfetto JSON ("traceEvents"): task spans, sleep and idle spans per worker, iteration
// marks on the runtime's track. Read chunk by chunk: the memory is one chunk and the spans still open.
#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include "trace/trace_format.hpp"

namespace roost::trace {

namespace {
struct file_closer {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Formats into a buffer of its own and writes it in large blocks: fprintf per field made a long run's
// timeline take seconds.
class json_out {
 public:
  explicit json_out(std::FILE* f) : f_(f) { buf_.reserve(kBlock + 512); }
  // A complete event ("X"); `extra` is more fields, each with its leading comma.
  void span(std::string_view name, std::string_view tid, std::uint64_t begin_ns, std::uint64_t end_ns,
            std::string_view extra) {
    start_event();
    text("{\"name\":\"");
    text(name);
    text("\",\"ph\":\"X\",\"pid\":1,\"tid\":");
    text(tid);
    text(",\"ts\":");
    micros(begin_ns);
    text(",\"dur\":");
    micros(end_ns - begin_ns);
    text(extra);
    text("}");
  }
  // An instant event, global scope.
  void instant(std::string_view name, std::string_view tid, std::uint64_t ns) {
    start_event();
    text("{\"name\":\"");
    text(name);
    text("\",\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":");
    text(tid);
    text(",\"ts\":");
    micros(ns);
    text("}");
  }
  void raw(std::string_view ev) {
    start_event();
    text(ev);
  }
  void text(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= kBlock) drain();
  }
  void number(std::uint64_t v) {
    char d[24];
    auto r = std::to_chars(d, d + sizeof d, v);
    buf_.append(d, r.ptr);
  }
  // ns as us with 3 decimals ("12.345"), as the timeline format counts time.
  void micros(std::uint64_t ns) {
    number(ns / 1000);
    const auto frac = static_cast<unsigned>(ns % 1000);
    const char d[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                       static_cast<char>('0' + frac % 10)};
    buf_.append(d, 4);
  }
  void drain() {
    if (!buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), f_);
    buf_.clear();
  }

 private:
  static constexpr std::size_t kBlock = 1 << 16;
  void start_event() {
    if (!first_) buf_.append(",\n");
    first_ = false;
  }
  std::FILE* f_;
  std::string buf_;
  bool first_ = true;
};

}  // namespace

void write_chrome_json(const std::string& trace_path, const std::string& json_path) {
  chunk_reader in(trace_path);
  std::unique_ptr<std::FILE, file_closer> file(std::fopen(json_path.c_str(), "w"));
  const std::string failed = "roost: writing the timeline '" + json_path + "'";
  if (!file) throw std::system_error(errno, std::generic_category(), failed);
  json_out o(file.get());
  o.text("{\"traceEvents\":[\n");
  // Thread names for the timeline: one track per worker, one for the runtime (run() calls).
  const std::uint32_t workers = in.head().workers;
  const std::string runtime_tid = std::to_string(workers);
  for (std::uint32_t w = 0; w <= workers; ++w)
    o.raw("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(w) + ",\"args\":{\"name\":\"" +
          (w == workers ? std::string("runtime") : "worker " + std::to_string(w)) + "\"}}");
  // A task's pieces, one per worker it ran on: from its begin or first resumption there to its end there, or
  // to that worker's next idle or sleep (it had suspended: the format has no record of a suspension, and an
  // idle worker runs no task). A resumption where its piece is still open continues that piece (what the
  // worker ran meanwhile lies inside it). A piece keyed by (worker, serial), so that a worker's are found
  // together at its idle; it showed only the last resumption's piece, and nothing of a task that moved.
  using piece_key = std::pair<std::uint16_t, std::uint64_t>;
  std::map<piece_key, std::uint64_t> open;  // -> begin
  std::map<std::uint16_t, std::uint64_t> asleep, idle, last_ns;
  std::uint16_t lane = 0;
  std::vector<record> chunk;
  auto piece = [&](const piece_key& key, std::uint64_t begin, std::uint64_t end) {
    o.span("task " + std::to_string(key.second & 0xffffffffffffull) + "@" + std::to_string(key.second >> 48),
           std::to_string(key.first), begin, end, "");
  };
  auto close_pieces_of = [&](std::uint16_t worker, std::uint64_t at) {
    for (auto it = open.lower_bound({worker, 0}); it != open.end() && it->first.first == worker;) {
      piece(it->first, it->second, at);
      it = open.erase(it);
    }
  };
  while (in.next(lane, chunk)) {
    const std::string tid = lane == kRuntimeLane ? runtime_tid : std::to_string(lane);
    if (!chunk.empty()) last_ns[lane] = chunk.back().t_ns;  // a chunk's records are its lane's, in order
    for (const auto& r : chunk) {
      const auto k = static_cast<kind>(r.kind);
      if (k == kind::task_begin || k == kind::task_resume) {
        open.try_emplace({r.worker, r.a}, r.t_ns);
      } else if (k == kind::task_end) {
        auto it = open.find({r.worker, r.a});
        if (it != open.end()) {
          piece(it->first, it->second, r.t_ns);
          open.erase(it);
        }
      } else if (k == kind::sleep_begin) {
        close_pieces_of(r.worker, r.t_ns);
        asleep[r.worker] = r.t_ns;
      } else if (k == kind::sleep_end && asleep.count(r.worker)) {
        o.span("sleep", tid, asleep[r.worker], r.t_ns, ",\"cname\":\"grey\"");
        asleep.erase(r.worker);
      } else if (k == kind::idle_begin) {
        close_pieces_of(r.worker, r.t_ns);
        idle[r.worker] = r.t_ns;
      } else if (k == kind::idle_end && idle.count(r.worker)) {
        o.span("idle", tid, idle[r.worker], r.t_ns, ",\"cname\":\"yellow\"");
        idle.erase(r.worker);
      } else if (k == kind::iteration_begin || k == kind::iteration_end) {
        o.instant(k == kind::iteration_begin ? "iteration begin" : "iteration end", tid, r.t_ns);
      }
    }
  }
  // Pieces left open (a trace cut short, a worker that ended without going idle): to their worker's last record.
  for (const auto& [key, begin] : open) piece(key, begin, std::max(begin, last_ns[key.first]));
  o.text("\n]}\n");
  o.drain();
  if (std::fflush(file.get()) != 0 || std::ferror(file.get()))
    throw std::system_error(errno, std::generic_category(), failed);
  if (std::fclose(file.release()) != 0) throw std::system_error(errno, std::generic_category(), failed);
}

}  // namespace roost::trace
