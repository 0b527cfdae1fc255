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

unique_fd::~unique_fd() {
  if (fd >= 0) ::close(fd);
}

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
  if (c.na > c.count || c.nb > c.count || c.ni > c.count || (c.lane == kEndLane && c.count != 0))
    throw format_error(path_ + ": chunk of lane " + std::to_string(c.lane) + " at byte " + std::to_string(at) +
                       " is damaged: " + std::to_string(c.count) + " records with " + std::to_string(c.na) + ", " +
                       std::to_string(c.nb) + ", " + std::to_string(c.ni) + " values of a, b, index");
  if (pos_ + c.body_bytes() > size_)
    throw format_error(path_ + ": truncated at byte " + std::to_string(size_) + ": the chunk of lane " +
                       std::to_string(c.lane) + " at byte " + std::to_string(at) + " promises " +
                       std::to_string(c.count) + " records");
  return c;
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
  if (head_.version < kOldestVersion || head_.version > kVersion)
    throw format_error(path + ": trace format version " + std::to_string(head_.version) +
                       " at byte 8; this roost reads versions " + std::to_string(kOldestVersion) + " to " +
                       std::to_string(kVersion));
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
  chunk_header last{kEndLane, 0, head_.start_ticks, head_.start_ns, 0, 0, 0, 0};
  while (pos_ < size_) {
    last = get_chunk_header();
    complete_ = complete_ || last.lane == kEndLane;
    pos_ += last.body_bytes();
  }
  if (last.ticks > head_.start_ticks)
    ns_per_tick_ = static_cast<double>(last.ns - head_.start_ns) / static_cast<double>(last.ticks - head_.start_ticks);
  pos_ = first_chunk_;
  task_begins_.assign(head_.workers, 0);
}

bool chunk_reader::next(std::uint16_t& lane, std::vector<record>& out) {
  out.clear();
  if (pos_ >= size_) return false;
  const std::uint64_t at = pos_;
  chunk_header c = get_chunk_header();
  lane = static_cast<std::uint16_t>(c.lane);
  body_.resize(c.body_bytes());
  get_bytes(body_.data(), body_.size(), "a chunk's records");
  decode(at, c, body_, out);
  return true;
}

void chunk_reader::decode(std::uint64_t at, const chunk_header& c, const std::string& body, std::vector<record>& out) {
  // The columns, copied out of the byte string (its alignment is the allocator's, not the columns').
  std::vector<std::uint64_t> a(c.na), b(c.nb);
  std::vector<std::uint32_t> dt(c.count), index(c.ni);
  const char* p = body.data();
  auto take = [&p](void* to, std::size_t n) {
    if (n > 0) std::memcpy(to, p, n);
    p += n;
  };
  take(a.data(), a.size() * 8);
  take(b.data(), b.size() * 8);
  take(dt.data(), dt.size() * 4);
  take(index.data(), index.size() * 4);
  const auto* kinds = reinterpret_cast<const std::uint8_t*>(p);
  std::size_t ia = 0, ib = 0, ii = 0;
  auto damaged = [&](const std::string& why) {
    return format_error(path_ + ": chunk of lane " + std::to_string(c.lane) + " at byte " + std::to_string(at) +
                        " is damaged: " + why);
  };
  const record* rows = nullptr;  // the chunk's latest touch_rows: what a `_same` one repeats
  out.resize(c.count);
  for (std::uint32_t i = 0; i < c.count; ++i) {
    if (kinds[i] == 0 || kinds[i] >= first_kind_after(head_.version))
      throw damaged("record " + std::to_string(i) + " has kind " + std::to_string(kinds[i]));
    const auto k = static_cast<kind>(kinds[i]);
    record& r = out[i];
    const std::uint64_t t = c.base + dt[i];
    r.t_ns = t > head_.start_ticks ? static_cast<std::uint64_t>((t - head_.start_ticks) * ns_per_tick_) : 0;
    r.kind = kinds[i];
    r.worker = static_cast<std::uint16_t>(c.lane);
    if ((stores_a(k) && ia == a.size()) || (stores_b(k) && ib == b.size()) || (stores_index(k) && ii == index.size()))
      throw damaged("its columns end before record " + std::to_string(i));
    r.a = stores_a(k) ? a[ia++] : 0;
    r.b = stores_b(k) ? b[ib++] : 0;
    r.index = stores_index(k) ? index[ii++] : 0;
    if (k == kind::task_begin || k == kind::task_end_last) {
      if (c.lane >= head_.workers) throw damaged("a task's record outside a worker's lane");
      if (k == kind::task_begin) ++task_begins_[c.lane];
      else if (task_begins_[c.lane] == 0) throw damaged("a task_end_last before any task_begin of its lane");
      else r.kind = static_cast<std::uint16_t>(kind::task_end);  // given as the task_end it stands for
      r.a = (std::uint64_t{c.lane} << 48) | task_begins_[c.lane];
    } else if (is_short_touch(k)) {  // given as the whole touch record it stands for
      r.b = r.index;
      r.index = short_touch_mode(k);
      r.kind = static_cast<std::uint16_t>(kind::touch);
    } else if (is_whole_rows(k)) {
      rows = &r;
    } else if (is_rows_same(k)) {  // given as the touch_rows record it stands for
      if (!rows) throw damaged("record " + std::to_string(i) + " repeats a touch_rows the chunk has not had");
      r.b = rows->b;
      r.index = rows->index;
      r.kind = static_cast<std::uint16_t>(rows_whole(k));
    }
  }
  if (ia != a.size() || ib != b.size() || ii != index.size())
    throw damaged("its kinds use " + std::to_string(ia) + ", " + std::to_string(ib) + ", " + std::to_string(ii) +
                  " values of a, b, index; it holds " + std::to_string(c.na) + ", " + std::to_string(c.nb) + ", " +
                  std::to_string(c.ni));
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

std::string encode_chunk(std::uint32_t lane, std::uint64_t ticks, std::uint64_t ns, const std::vector<record>& rs) {
  std::uint64_t base = rs.empty() ? 0 : rs.front().t_ns;
  for (const auto& r : rs) base = std::min(base, r.t_ns);
  std::vector<std::uint64_t> a, b;
  std::vector<std::uint32_t> dt, index;
  std::vector<std::uint8_t> kinds;
  std::uint64_t begins = 0;     // the lane's task_begins so far: the latest one's serial
  const record* rows = nullptr;  // the latest touch_rows
  for (const auto& r : rs) {
    if (r.t_ns - base > 0xffffffffull)
      throw std::invalid_argument("roost::trace::encode_chunk: the times span 2^32 ticks or more");
    auto k = static_cast<kind>(r.kind);
    std::uint32_t idx = r.index;
    if (k == kind::touch && r.b <= 0xffffffffull && r.index <= 2) {  // short, as the tracer writes it
      k = short_touch(r.index);
      idx = static_cast<std::uint32_t>(r.b);
    } else if (k == kind::task_begin) {
      ++begins;
    } else if (k == kind::task_end && lane < kRuntimeLane && begins > 0 &&
               r.a == ((std::uint64_t{lane} << 48) | begins)) {
      k = kind::task_end_last;
    } else if (is_whole_rows(k)) {
      if (rows && rows->b == r.b && rows->index == r.index) k = rows_same(k);
      rows = &r;
    }
    dt.push_back(static_cast<std::uint32_t>(r.t_ns - base));
    kinds.push_back(static_cast<std::uint8_t>(k));
    if (stores_a(k)) a.push_back(r.a);
    if (stores_b(k)) b.push_back(r.b);
    if (stores_index(k)) index.push_back(idx);
  }
  chunk_header h{lane, static_cast<std::uint32_t>(rs.size()), ticks, ns, base,
                 static_cast<std::uint32_t>(a.size()), static_cast<std::uint32_t>(b.size()),
                 static_cast<std::uint32_t>(index.size())};
  std::string out(reinterpret_cast<const char*>(&h), sizeof h);
  out.append(reinterpret_cast<const char*>(a.data()), a.size() * 8);
  out.append(reinterpret_cast<const char*>(b.data()), b.size() * 8);
  out.append(reinterpret_cast<const char*>(dt.data()), dt.size() * 4);
  out.append(reinterpret_cast<const char*>(index.data()), index.size() * 4);
  out.append(reinterpret_cast<const char*>(kinds.data()), kinds.size());
  out.resize(sizeof h + h.body_bytes(), '\0');
  return out;
}

void write_binary(const std::string& path, const trace_file& t) {
  std::ofstream o(path, std::ios::binary);
  if (!o) throw std::system_error(errno, std::generic_category(), "roost: cannot write trace file '" + path + "'");
  header h = t;
  h.start_ticks = 0;  // ticks are ns since the start
  std::string bytes = encode_header(h);
  std::map<std::uint16_t, std::vector<record>> lanes;
  std::uint64_t last = 0;
  for (const auto& r : t.records) {
    lanes[r.worker].push_back(r);
    last = std::max(last, r.t_ns);
  }
  for (const auto& [lane, rs] : lanes) bytes += encode_chunk(lane, last, t.start_ns + last, rs);
  if (t.complete) bytes += encode_chunk(kEndLane, last, t.start_ns + last, {});
  o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  o.close();  // a file system may report a write's failure only at the close
  if (o.fail()) throw std::system_error(errno, std::generic_category(), "roost: writing trace file '" + path + "'");
}

}  // namespace roost::trace
