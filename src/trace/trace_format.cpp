#include "trace/trace_format.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <system_error>

namespace roost::trace {

namespace {
template <class T>
void put(std::string& out, const T& v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

bool lane_is_valid(std::uint32_t lane, std::uint32_t workers) {
  return lane < workers || lane == kRuntimeLane || lane == kEndLane;
}
}  // namespace

std::string encode_header(const header& h) {
  std::string out = "ROOSTTRC";
  put(out, h.version);
  put(out, h.workers);
  put(out, h.start_ns);
  put(out, h.start_ticks);
  put(out, static_cast<std::uint32_t>(h.topology.size()));
  out += h.topology;
  put(out, h.l2_bytes);
  put(out, h.llc_bytes);
  for (std::uint32_t w = 0; w < h.workers; ++w) put(out, w < h.llc_domain.size() ? h.llc_domain[w] : 0u);
  return out;
}

void chunk_reader::get_bytes(void* to, std::uint64_t n, const char* what) {
  if (pos_ + n > size_)
    throw format_error(path_ + ": truncated at byte " + std::to_string(pos_) + " while reading " + what);
  auto* p = static_cast<char*>(to);
  for (std::uint64_t done = 0; done < n;) {
    ssize_t got = ::pread(file_.fd, p + done, n - done, static_cast<off_t>(pos_ + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      throw format_error(path_ + ": cannot read at byte " + std::to_string(pos_ + done) + " (" +
                         (got < 0 ? std::strerror(errno) : "the file shrank") + ")");
    done += static_cast<std::uint64_t>(got);
  }
  pos_ += n;
}

template <class T>
T chunk_reader::get(const char* what) {
  T v;
  get_bytes(&v, sizeof v, what);
  return v;
}

chunk_header chunk_reader::get_chunk_header() {
  const std::uint64_t at = pos_;
  auto c = get<chunk_header>("a chunk header");
  if (!lane_is_valid(c.lane, head_.workers))
    throw format_error(path_ + ": chunk for worker " + std::to_string(c.lane) + " at byte " + std::to_string(at) +
                       " but the trace has " + std::to_string(head_.workers) + " workers");
  if (pos_ + std::uint64_t{c.count} * sizeof(record) > size_)
    throw format_error(path_ + ": truncated at byte " + std::to_string(size_) + ": the chunk of lane " +
                       std::to_string(c.lane) + " at byte " + std::to_string(at) + " promises " +
                       std::to_string(c.count) + " records");
  return c;
}

unique_fd::~unique_fd() {
  if (fd >= 0) ::close(fd);
}

chunk_reader::chunk_reader(const std::string& path) : path_(path), file_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
  struct stat st {};
  if (file_.fd < 0 || ::fstat(file_.fd, &st) != 0)
    throw format_error(path + ": cannot open (" + std::strerror(errno) + ")");
  size_ = static_cast<std::uint64_t>(st.st_size);
  char magic[8] = {};
  if (size_ >= 8) get_bytes(magic, 8, "the magic");
  if (size_ < 8 || std::memcmp(magic, "ROOSTTRC", 8) != 0)
    throw format_error(path + ": not a roost trace (no ROOSTTRC magic at byte 0)");
  head_.version = get<std::uint32_t>("the version");
  if (head_.version != kVersion)
    throw format_error(path + ": trace format version " + std::to_string(head_.version) +
                       " at byte 8; this roost reads version " + std::to_string(kVersion));
  head_.workers = get<std::uint32_t>("the worker count");
  head_.start_ns = get<std::uint64_t>("the start time");
  head_.start_ticks = get<std::uint64_t>("the start clock");
  auto n = get<std::uint32_t>("the topology length");
  if (pos_ + n > size_) throw format_error(path + ": truncated at byte " + std::to_string(pos_) + " in the topology");
  head_.topology.resize(n);
  get_bytes(head_.topology.data(), n, "the topology");
  head_.l2_bytes = get<std::uint64_t>("the L2 size");
  head_.llc_bytes = get<std::uint64_t>("the last-level cache size");
  for (std::uint32_t w = 0; w < head_.workers; ++w)
    head_.llc_domain.push_back(get<std::uint32_t>("a worker's cache domain"));
  first_chunk_ = pos_;
  // The clock pair of the chunk written last spans the longest time: the best ticks-to-ns ratio.
  chunk_header last{kEndLane, 0, head_.start_ticks, head_.start_ns};
  while (pos_ < size_) {
    last = get_chunk_header();
    complete_ = complete_ || last.lane == kEndLane;
    pos_ += std::uint64_t{last.count} * sizeof(record);
  }
  if (last.ticks > head_.start_ticks)
    ns_per_tick_ = static_cast<double>(last.ns - head_.start_ns) / static_cast<double>(last.ticks - head_.start_ticks);
  pos_ = first_chunk_;
}

bool chunk_reader::next(std::uint16_t& lane, std::vector<record>& out) {
  out.clear();
  if (pos_ >= size_) return false;
  chunk_header c = get_chunk_header();
  lane = static_cast<std::uint16_t>(c.lane);
  out.resize(c.count);
  get_bytes(out.data(), std::uint64_t{c.count} * sizeof(record), "a chunk's records");
  for (auto& r : out)
    r.t_ns = r.t_ns > head_.start_ticks ? static_cast<std::uint64_t>((r.t_ns - head_.start_ticks) * ns_per_tick_) : 0;
  return true;
}

trace_file read(const std::string& path) {
  chunk_reader in(path);
  trace_file t;
  static_cast<header&>(t) = in.head();
  t.complete = in.complete();
  std::map<std::uint16_t, std::vector<record>> lanes;  // in lane order: workers, then the runtime
  std::uint16_t lane = 0;
  std::vector<record> chunk;
  while (in.next(lane, chunk)) {
    auto& l = lanes[lane];
    l.insert(l.end(), chunk.begin(), chunk.end());
  }
  for (auto& [_, rs] : lanes) t.records.insert(t.records.end(), rs.begin(), rs.end());
  return t;
}

void write_binary(const std::string& path, const trace_file& t) {
  std::ofstream o(path, std::ios::binary);
  if (!o) throw std::system_error(errno, std::generic_category(), "roost: cannot write trace file '" + path + "'");
  header h = t;
  h.start_ticks = 0;  // ticks are ns since the start
  const std::string head = encode_header(h);
  o.write(head.data(), static_cast<std::streamsize>(head.size()));
  std::map<std::uint16_t, std::vector<record>> lanes;
  std::uint64_t last = 0;
  for (const auto& r : t.records) {
    lanes[r.worker].push_back(r);
    last = std::max(last, r.t_ns);
  }
  auto chunk = [&](std::uint32_t lane, const std::vector<record>& rs) {
    chunk_header c{lane, static_cast<std::uint32_t>(rs.size()), last, t.start_ns + last};
    o.write(reinterpret_cast<const char*>(&c), sizeof c);
    o.write(reinterpret_cast<const char*>(rs.data()), static_cast<std::streamsize>(rs.size() * sizeof(record)));
  };
  for (const auto& [lane, rs] : lanes) chunk(lane, rs);
  if (t.complete) chunk(kEndLane, {});
  if (!o.flush()) throw std::system_error(errno, std::generic_category(), "roost: writing trace file '" + path + "'");
}

}  // namespace roost::trace
