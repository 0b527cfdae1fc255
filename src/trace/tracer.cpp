#include "trace/tracer.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <system_error>
#include <utility>

#include "platform/output_file.hpp"
#include "roost/errors.hpp"

namespace roost::trace {

namespace {
std::atomic<tracer*> g_installed_tracer{nullptr};

// Lanes whose buffer the constructor faults in; later ones fault on first use, so that a huge virtual
// topology does not populate gigabytes.
constexpr std::size_t kPrefaultedLanes = 64;
}  // namespace

tracer::lane tracer::make_lane(bool prefault) {
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (prefault ? MAP_POPULATE : 0);
  void* p = ::mmap(nullptr, kLaneBytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  lane l;
  l.buf = static_cast<char*>(p);
  return l;
}

tracer::tracer(std::string path, unsigned workers, std::string topology, caches c, bool adaptive, std::string source)
    : path_(std::move(path)), source_(std::move(source)), json_path_(path_ + ".json"), adaptive_(adaptive) {
  header_.workers = workers;
  header_.start_ns = platform::os::now_ns();
  header_.start_ticks = ticks();
  header_.topology = std::move(topology);
  header_.l2_bytes = c.l2_bytes;
  header_.llc_bytes = c.llc_bytes;
  header_.llc_domain = std::move(c.llc_domain);
  // Each lane's buffer now, before the workers start: made on a worker's first event, its zeroed pages were
  // faulted in on the scheduling path, and a traced heat2d 440x100's first iteration took 1.4-4.6 ms instead
  // of 0.25-0.3 (`make demo`'s locality section traces it from its first iteration).
  lanes_.reserve(workers);
  try {
    runtime_lane_ = make_lane(true);
    for (unsigned i = 0; i < workers; ++i) lanes_.push_back(make_lane(i < kPrefaultedLanes));
  } catch (...) {
    unmap_lanes();
    throw;
  }
  if (adaptive_) record_ticks_ = calibrate();
}

double tracer::calibrate() {
  // The runtime's lane is faulted in and unused until the first run. The fastest of a few rounds: a round
  // the thread lost its CPU in says nothing about a record.
  constexpr int kRecords = 256;
  lane& l = runtime_lane_;
  std::uint64_t best = ~std::uint64_t{0};
  for (int round = 0; round < 5; ++round) {
    const std::uint64_t t0 = ticks();
    for (int i = 0; i < kRecords; ++i) append<kind::touch>(l, kRuntimeLane, t0, static_cast<std::uint64_t>(i), 0);
    best = std::min(best, ticks() - t0);
    l.used = l.na = l.nb = l.ni = 0;
  }
  l.base = 0;
  return static_cast<double>(best) / kRecords;
}

std::uint32_t tracer::next_depth(std::uint32_t depth, std::uint32_t deepest, std::uint32_t records,
                                 std::uint32_t task_records, std::uint64_t span, double record_ticks,
                                 double budget) {
  constexpr std::uint32_t kFewest = 256;  // fewer records say too little about what they cost
  if (records < kFewest || task_records == 0) return depth;
  const double all = records * record_ticks, tasks = task_records * record_ticks;
  const double own = static_cast<double>(span) - all;  // what the worker did besides recording
  const double allowed = std::max(budget * own - (all - tasks), budget * own / 4);
  if (own <= 0 || tasks > allowed) {
    const double over = own > 0 ? tasks / allowed : 1e9;
    const auto levels = static_cast<std::uint32_t>(std::clamp(std::ceil(std::log2(over)), 1.0, 64.0));
    const std::uint32_t from = std::min(depth, deepest);
    return from > levels ? from - levels : 0;
  }
  if (4 * tasks < allowed && depth != kAllDepths && deepest >= depth) return depth + 1;
  return depth;
}

void tracer::adapt(lane& l, unsigned w) {
  // The chunk's records share its base (rebase writes the chunk out before it moves the base).
  const std::uint64_t span = l.used ? l.dt()[l.used - 1] - l.dt()[0] : 0;
  const std::uint32_t depth = next_depth(l.depth, l.deepest, l.used, l.task_records, span, record_ticks_, kAutoBudget);
  l.deepest = 0;
  l.task_records = 0;
  if (depth != l.depth) {
    l.depth = depth;
    set_recording_depth(w, depth);
  }
}

void tracer::unmap_lanes() {
  for (auto& l : lanes_) ::munmap(l.buf, kLaneBytes);
  lanes_.clear();
  if (runtime_lane_.buf) ::munmap(runtime_lane_.buf, kLaneBytes);
  runtime_lane_.buf = nullptr;
}

tracer::~tracer() {
  // Made but never finished: the runtime that owned it failed to start (its constructor threw after
  // open()), and nobody will read these files; a finished trace is the program's to keep.
  if (opened_ && !finished_) {
    ::unlink(trace_file_.c_str());
    ::unlink(json_file_.c_str());
  }
  unmap_lanes();
}

std::size_t tracer::buffer_bytes() const { return (lanes_.size() + 1) * kLaneBytes; }

namespace {
// Writes all of `bytes`; the errno of a failure, or 0.
int write_all(int fd, const char* bytes, std::size_t n) {
  while (n > 0) {
    const ssize_t done = ::write(fd, bytes, n);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) return done < 0 ? errno : EIO;
    bytes += done;
    n -= static_cast<std::size_t>(done);
  }
  return 0;
}

std::atomic<unsigned> g_next_temporary{0};
}  // namespace

void tracer::open() {
  auto fail = [this](const std::string& what, const std::string& why) {
    return config_error(source_ + "='" + path_ + "': " + what + " (" + why +
                        "); valid: a regular file's path in an existing directory this process may write to");
  };
  // Regular files only: the trace is read back at the end to make FILE.json (/dev/null was refused only
  // then), and opening a named pipe blocked the constructor for ever.
  if (std::string kind = platform::not_a_regular_file(path_); !kind.empty())
    throw fail("the trace file is not a regular file", kind);
  if (std::string kind = platform::not_a_regular_file(json_path_); !kind.empty())
    throw fail("its timeline '" + json_path_ + "' is not a regular file", kind);
  // Both files are written whole beside their paths and then renamed over them, so that a runtime that
  // cannot make them (a timeline's path that cannot be written, a full disk, a file size limit at the header)
  // leaves an earlier trace at the path as it was: it cut it to a header, or removed it. FILE.json is made
  // now, not only at the end, to find a path that cannot be written before the run; until the end it is a
  // timeline without events, which a viewer opens: a program that ends without destroying its runtime
  // (exit(), std::terminate) leaves that, not an empty file.
  // A link's target, dangling ones too: a link into a missing directory was replaced by a regular file
  // (an outside-user campaign); now the target's directory is the one that must exist.
  bool trace_loop = false, json_loop = false;
  const std::string trace_target = platform::write_target(path_, &trace_loop),
                    json_target = platform::write_target(json_path_, &json_loop);
  if (trace_loop) throw fail("cannot create the trace file", std::strerror(ELOOP));
  if (json_loop) throw fail("cannot create its timeline '" + json_path_ + "'", std::strerror(ELOOP));
  const std::string tag = ".roost-" + std::to_string(::getpid()) + "-" + std::to_string(g_next_temporary++);
  const std::string trace_tmp = trace_target + tag, json_tmp = json_target + tag;
  unique_fd trace(::open(trace_tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  // The file is made as a new one beside its path: a reason about that one (ENOENT for /proc/version, which
  // exists) names the directory, or it reads as if the path itself were missing.
  const auto in_directory = [](const std::string& target, int err) {
    const std::size_t slash = target.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
    return "no new file can be made in its directory '" + dir + "': " + std::strerror(err);
  };
  if (trace.fd < 0) throw fail("cannot create the trace file", in_directory(trace_target, errno));
  unique_fd json(::open(json_tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  auto drop = [&] {
    ::unlink(trace_tmp.c_str());
    if (json.fd >= 0) ::unlink(json_tmp.c_str());
  };
  if (json.fd < 0) {
    const int err = errno;
    drop();
    throw fail("cannot create its timeline '" + json_path_ + "'", in_directory(json_target, err));
  }
  const std::string head = encode_header(header_);
  static const char kNoEvents[] = "{\"traceEvents\":[]}\n";
  if (const int err = write_all(trace.fd, head.data(), head.size())) {
    drop();
    throw fail("cannot write the trace file", std::strerror(err));
  }
  if (const int err = write_all(json.fd, kNoEvents, sizeof kNoEvents - 1)) {
    drop();
    throw fail("cannot write its timeline '" + json_path_ + "'", std::strerror(err));
  }
  // The timeline first: if the trace's rename then failed, an earlier trace is still whole.
  if (::rename(json_tmp.c_str(), json_target.c_str()) != 0) {
    const int err = errno;
    drop();
    throw fail("cannot create its timeline '" + json_path_ + "'", std::strerror(err));
  }
  if (::rename(trace_tmp.c_str(), trace_target.c_str()) != 0) {
    const int err = errno;
    ::unlink(trace_tmp.c_str());
    ::unlink(json_target.c_str());  // the event-less timeline just made
    throw fail("cannot create the trace file", std::strerror(err));
  }
  struct stat js;
  if (::fstat(json.fd, &js) == 0) json_id_ = {static_cast<std::uint64_t>(js.st_dev), static_cast<std::uint64_t>(js.st_ino)};
  std::swap(file_.fd, trace.fd);
  trace_file_ = trace_target;
  json_file_ = json_target;
  opened_ = true;  // from here on ~tracer removes both if the runtime is not made
}

void tracer::write_locked(const void* bytes, std::size_t n) {
  if (write_errno_ != 0) return;  // the trace stopped at the first error: no chunk after a hole
  const char* p = static_cast<const char*>(bytes);
  while (n > 0) {
    ssize_t done = ::write(file_.fd, p, n);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) {
      write_errno_ = done < 0 ? errno : EIO;
      failed_.store(true, std::memory_order_release);
      return;
    }
    p += done;
    n -= static_cast<std::size_t>(done);
  }
}

void tracer::write_chunk_locked(const lane& l, std::uint16_t id) {
  // No file yet: calibrate()'s records, which a rebase may flush (a thread moved to a CPU whose clock is
  // behind), are not a trace's.
  if (write_errno_ != 0 || file_.fd < 0) return;
  // The clock pair read now: readers convert ticks to ns with the last chunk's pair (trace_format.hpp).
  chunk_header h{id, l.used, ticks(), platform::os::now_ns(), l.base, l.na, l.nb, l.ni};
  static const char zeros[8] = {};
  const std::size_t body = 8ull * l.na + 8ull * l.nb + 4ull * l.used + 4ull * l.ni + l.used;
  iovec parts[7] = {{&h, sizeof h}};
  if (l.used > 0) {  // the end chunk has no records, and no buffer
    parts[1] = {l.a(), 8ull * l.na};
    parts[2] = {l.b(), 8ull * l.nb};
    parts[3] = {l.dt(), 4ull * l.used};
    parts[4] = {l.index(), 4ull * l.ni};
    parts[5] = {l.kinds(), l.used};
    parts[6] = {const_cast<char*>(zeros), h.body_bytes() - body};
  }
  const int n_parts = l.used > 0 ? 7 : 1;
  const std::size_t total = sizeof h + h.body_bytes();
  reserve_locked(total);
  ssize_t done;
  do done = ::writev(file_.fd, parts, n_parts);
  while (done < 0 && errno == EINTR);
  if (done < 0) {
    write_errno_ = errno;
    failed_.store(true, std::memory_order_release);
  } else if (static_cast<std::size_t>(done) < total) {  // a short write: the rest, in order
    std::string all;
    for (int i = 0; i < n_parts; ++i) all.append(static_cast<const char*>(parts[i].iov_base), parts[i].iov_len);
    write_locked(all.data() + done, total - static_cast<std::size_t>(done));
  }
  if (write_errno_ == 0) chunks_written_.fetch_add(1, std::memory_order_relaxed);
}

void tracer::reserve_locked(std::size_t n) {
  if (!preallocating_) return;
  if (file_end_ == 0) {  // the first chunk: the header lies before it
    const off_t at = ::lseek(file_.fd, 0, SEEK_CUR);
    if (at < 0) {
      preallocating_ = false;
      return;
    }
    file_end_ = allocated_end_ = static_cast<std::uint64_t>(at);
  }
  const std::uint64_t end = file_end_ + n;
  file_end_ = end;  // a write that fails stops the trace: the count need not follow it
  if (end <= allocated_end_) return;
  // KEEP_SIZE: the file's size stays what was written, so a reader of a trace still being written, or of
  // one whose program died, sees no hole of zeros; and no RLIMIT_FSIZE signal for blocks past the end.
  // A file system that cannot (tmpfs before 2.6.x, NFS, FUSE) or a full disk: written as before, the
  // write itself then reporting what is wrong.
  if (::fallocate(file_.fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(allocated_end_),
                  static_cast<off_t>(kPreallocateBytes)) != 0) {
    preallocating_ = false;
    return;
  }
  allocated_end_ += kPreallocateBytes;
}

void tracer::flush(lane& l, std::uint16_t id) {
  if (adaptive_ && id < lanes_.size()) adapt(l, id);
  {
    std::lock_guard<std::mutex> lk(file_mutex_);
    write_chunk_locked(l, id);
  }
  l.used = l.na = l.nb = l.ni = 0;
  l.has_rows = false;
}

void tracer::rebase(lane& l, std::uint16_t id, std::uint64_t t) {
  if (l.used > 0) flush(l, id);
  l.base = t;
}

void tracer::iteration(bool begin) {
  std::lock_guard<std::mutex> lk(runtime_mutex_);
  if (begin) append<kind::iteration_begin>(runtime_lane_, kRuntimeLane, 0, 0, 0);
  else append<kind::iteration_end>(runtime_lane_, kRuntimeLane, 0, 0, 0);
}

// Reached only from this runtime's workers (engine_base::set_touch_sink): `worker` is one of them.
void tracer::on_touch(int worker, const void* base, std::size_t bytes, access mode) {
  const auto w = static_cast<unsigned>(worker);
  const auto a = reinterpret_cast<std::uintptr_t>(base);
  const auto m = static_cast<std::uint32_t>(mode);
  if (m > 2) [[unlikely]] return;  // not an access: no kind stands for it
  // An empty region names no byte and goes out as nothing, as in on_touch_rows_unpacked: recorded, it was an
  // access for KRD, which counted touch(nullptr, 0) of an empty vector as a reuse (an outside-user campaign).
  if (bytes == 0) [[unlikely]] return;
  if (bytes <= 0xffffffffu) [[likely]]  // short: the mode in the kind, the size in the index (trace_format.hpp)
    add<kind::touch_read>(w, a, 0, static_cast<std::uint32_t>(bytes), short_touch(m));
  else
    add<kind::touch>(w, a, bytes, m);
}

// A region whose sizes do not pack into one record (on_touch_rows). Apart: its recursion made every touch_rows
// save six registers (callgrind, a traced heat2d).
void tracer::on_touch_rows_unpacked(int worker, const void* base, std::size_t row_bytes, std::size_t rows,
                                    std::size_t stride, access mode) {
  // Does not pack into one record. Row by row, a touch of 2^32 rows of 64 bytes wrote 3 GB of trace in 8 s,
  // and one of 2^24 empty rows 285 MB (an outside-user campaign and a review). So: an empty region names
  // no byte and goes out as nothing; contiguous rows as one touch; else records of fewer rows each (row
  // by row where a row or the stride is 4 GiB or more), unless that makes more than kMostRecords, when
  // the rows' whole span goes out as one touch (a tile the trace widens: natively nothing checks that
  // such a span is memory, and no program's rows are that many).
  constexpr std::size_t kMostRecords = std::size_t{1} << 16;
  if (row_bytes == 0 || rows == 0) return;
  // The region ends inside the address space (api/touch.cpp): its span and its bytes fit a size_t.
  if (rows == 1 || stride == row_bytes) return on_touch(worker, base, rows * row_bytes, mode);
  const bool rows_pack = row_bytes < kPacks && stride < kPacks;
  const std::size_t records = rows_pack ? rows / (kPacks - 1) + (rows % (kPacks - 1) != 0) : rows;
  if (records > kMostRecords) return on_touch(worker, base, (rows - 1) * stride + row_bytes, mode);
  if (!rows_pack) return touch_consumer::on_touch_rows(worker, base, row_bytes, rows, stride, mode);
  const auto* p = static_cast<const char*>(base);
  for (std::size_t done = 0; done < rows;) {
    const std::size_t n = std::min(rows - done, kPacks - 1);
    on_touch_rows(worker, p + done * stride, row_bytes, n, stride, mode);
    done += n;
  }
}

void tracer::on_touch_rows(int worker, const void* base, std::size_t row_bytes, std::size_t rows,
                           std::size_t stride, access mode) {
  // `- 1` wraps an empty region (0 rows, or rows of 0 bytes) past kPacks: on_touch_rows_unpacked drops it,
  // at no cost to the common path.
  if (row_bytes - 1 >= kPacks - 1 || rows - 1 >= kPacks - 1 || stride >= kPacks) [[unlikely]]
    return on_touch_rows_unpacked(worker, base, row_bytes, rows, stride, mode);
  const auto w = static_cast<unsigned>(worker);
  // Not an access (a value cast to one) names no kind: dropped, as the switch it replaced did.
  if (w >= lanes_.size() || static_cast<unsigned>(mode) > 2) [[unlikely]] return;
  lane& l = lanes_[w];
  const auto id = static_cast<std::uint16_t>(w);
  const auto a = reinterpret_cast<std::uintptr_t>(base);
  const std::uint64_t b = (static_cast<std::uint64_t>(row_bytes) << 32) | rows;
  const auto s = static_cast<std::uint32_t>(stride);
  const kind whole = static_cast<kind>(static_cast<std::uint32_t>(kind::touch_rows_read) + static_cast<std::uint32_t>(mode));
  const std::uint32_t dt = stamp(l, id);  // first: it may start a chunk, which has no touch_rows yet
  if (l.has_rows && l.rows_b == b && l.rows_stride == s) {
    store<kind::touch_rows_read_same>(l, id, dt, a, 0, 0, rows_same(whole));  // the same columns for any mode
  } else {
    l.rows_b = b;  // before the store: a full chunk flushed by it clears them
    l.rows_stride = s;
    l.has_rows = true;
    store<kind::touch_rows_read>(l, id, dt, a, b, s, whole);
  }
}

namespace {
std::system_error write_error(int err, const std::string& named, const std::string& json_path) {
  return std::system_error(err, std::generic_category(),
                           "roost: " + named + ": writing the trace failed; the file keeps the events "
                           "written before, nothing after, and '" + json_path + "' is not made");
}
}  // namespace

void tracer::rethrow_write_error() {
  if (!failed_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lk(file_mutex_);
  if (error_reported_) return;
  error_reported_ = true;
  // The event-less timeline open() made goes now, as the message says, not only when the runtime is
  // destroyed: a program that ended on this exception kept it (an outside-user campaign).
  unlink_own_timeline();
  throw write_error(write_errno_, source_ + "='" + path_ + "'", json_path_);
}

// The timeline finish() wrote (or began): a kept copy's is this runtime's own; FILE.json only if still ours.
void tracer::drop_timeline() {
  if (replaced_) ::unlink(json_file_.c_str());
  else unlink_own_timeline();
}

// Removes the timeline open() made, unless the path names another file by now (another process's tracer
// renamed its own over it: see keep_if_replaced_locked).
void tracer::unlink_own_timeline() {
  struct stat st;
  if (::stat(json_file_.c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_dev) == json_id_.first &&
      static_cast<std::uint64_t>(st.st_ino) == json_id_.second)
    ::unlink(json_file_.c_str());
}

// Whether the path still names the file this runtime wrote: another process's runtime tracing to the same
// path renames its own file over it when it starts, and this one went on writing a file no directory held,
// said nothing, and made its timeline from the other's trace (an outside-user campaign). Whenever the path
// names another file, or none, or cannot be read, the trace is copied through /proc/self/fd (a file with no
// name cannot be linked again; on NFS one removed while open keeps a link under a hidden name) to
// FILE.pidPID.kept (.2, ... where that name or its timeline's is taken), its timeline made from that copy, and
// both named on stderr; its own event-less timeline at FILE.json is removed if it is still there. A copy that
// fails is said there with what failed, and nothing is thrown (a write error would place the trace at FILE).
void tracer::keep_if_replaced_locked() {
  struct stat mine, there;
  if (::fstat(file_.fd, &mine) != 0) return;
  const int looked = ::stat(trace_file_.c_str(), &there);
  const int look_errno = looked != 0 ? errno : 0;
  if (looked == 0 && there.st_dev == mine.st_dev && there.st_ino == mine.st_ino) return;
  const std::string what =
      look_errno == ENOENT || look_errno == ENOTDIR
          ? std::string("the trace file was removed or moved while this runtime wrote it")
      : look_errno != 0 ? "the trace file's path could not be looked at (" + std::string(std::strerror(look_errno)) + ")"
                        : std::string("another file (another process's runtime tracing there?) took the trace file's "
                                      "path while this runtime wrote it");
  replaced_ = true;
  const std::string proc = "/proc/self/fd/" + std::to_string(file_.fd);
  std::string kept = trace_file_ + ".pid" + std::to_string(static_cast<long>(::getpid())) + ".kept", failed_at;
  int err = 0;
  bool made = false;
  unique_fd in(::open(proc.c_str(), O_RDONLY | O_CLOEXEC)), out;
  if (in.fd < 0) {
    err = errno;
    failed_at = proc;
  }
  for (int n = 1; err == 0; ++n) {
    const std::string name = n == 1 ? kept : kept + "." + std::to_string(n);
    struct stat st;
    if (::stat((name + ".json").c_str(), &st) == 0) {  // its timeline's name is taken
      if (n < 1000) continue;
      err = EEXIST;
      failed_at = name + ".json";
      break;
    }
    out.fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (out.fd >= 0) {
      kept = name;
      made = true;
      break;
    }
    if (errno != EEXIST || n >= 1000) {
      err = errno;
      failed_at = name;
    }
  }
  // On the heap: a runtime may be destroyed on a task's stack, which may be small (ROOST_STACK_SIZE).
  constexpr std::size_t kCopyBytes = std::size_t{1} << 16;
  const std::unique_ptr<char[]> buf(err == 0 ? new (std::nothrow) char[kCopyBytes] : nullptr);
  if (err == 0 && !buf) err = ENOMEM, failed_at = kept;
  for (off_t at = 0; err == 0;) {
    const ssize_t got = ::pread(in.fd, buf.get(), kCopyBytes, at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got < 0) err = errno, failed_at = proc;
      break;
    }
    if ((err = write_all(out.fd, buf.get(), static_cast<std::size_t>(got))) != 0) failed_at = kept;
    at += got;
  }
  if (err == 0 && ::close(std::exchange(out.fd, -1)) != 0) err = errno, failed_at = kept;  // NFS, quotas
  if (err != 0) {
    if (made) ::unlink(kept.c_str());
    std::fprintf(stderr, "roost: %s='%s': %s, and its trace could not be kept elsewhere ('%s': %s)\n",
                 source_.c_str(), path_.c_str(), what.c_str(), failed_at.c_str(), std::strerror(err));
    unlink_own_timeline();
    write_errno_ = err;
    error_reported_ = true;  // said: nothing to throw
    failed_.store(true, std::memory_order_release);
    return;
  }
  std::fprintf(stderr, "roost: %s='%s': %s; this runtime's trace is kept at '%s' with its timeline '%s.json'\n",
               source_.c_str(), path_.c_str(), what.c_str(), kept.c_str(), kept.c_str());
  unlink_own_timeline();  // the event-less one open() made, where it is still there
  path_ = trace_file_ = kept;
  json_path_ = json_file_ = kept + ".json";
}

void tracer::finish() {
  if (finished_) return;
  finished_ = true;
  adaptive_ = false;  // the hooks are off: no recording depth to set any more (another runtime may trace)
  // A worker that stopped while it looked for work: its count, before the locks (a full lane writes itself).
  for (std::size_t w = 0; w < lanes_.size(); ++w) end_search(lanes_[w], static_cast<unsigned>(w));
  {
    std::lock_guard<std::mutex> runtime_lk(runtime_mutex_);  // in iteration()'s order: the runtime's lane first
    std::lock_guard<std::mutex> lk(file_mutex_);
    for (std::size_t w = 0; w < lanes_.size(); ++w)
      if (lanes_[w].used > 0) write_chunk_locked(lanes_[w], static_cast<std::uint16_t>(w));
    if (runtime_lane_.used > 0) write_chunk_locked(runtime_lane_, kRuntimeLane);
    write_chunk_locked(lane{}, kEndLane);  // no records: its columns are not read
    // The blocks reserved past the end go back: a truncation to the size the file has frees them.
    struct stat st;
    if (allocated_end_ > 0 && ::fstat(file_.fd, &st) == 0) (void)!::ftruncate(file_.fd, st.st_size);
    if (!failed_.load()) keep_if_replaced_locked();
    // close() reports what the file system kept back (NFS, quotas).
    if (::close(file_.fd) != 0 && write_errno_ == 0) {
      write_errno_ = errno;
      failed_.store(true, std::memory_order_release);
    }
    file_.fd = -1;
  }
  if (failed_.load()) {
    unlink_own_timeline();  // the event-less timeline open() made
    if (!error_reported_) {
      error_reported_ = true;
      throw write_error(write_errno_, source_ + "='" + path_ + "'", json_path_);
    }
    return;
  }
  // A timeline cut short is not JSON a viewer reads (a full disk left 12 KB of one): removed, and the error
  // names the setting. The trace itself is complete, and roost-analyze reads it.
  try {
    write_chrome_json(path_, json_path_);
  } catch (const std::system_error& e) {
    drop_timeline();
    throw std::system_error(e.code(), "roost: " + source_ + "='" + path_ + "': writing its timeline '" + json_path_ +
                                          "' failed, and it is removed; the trace is complete (roost-analyze "
                                          "reads it)");
  } catch (...) {  // the trace could not be read back (format_error): nothing to keep of the timeline either
    drop_timeline();
    throw;
  }
}

bool install_tracer(tracer* t) {
  if (t) {
    tracer* expected = nullptr;
    return g_installed_tracer.compare_exchange_strong(expected, t, std::memory_order_acq_rel);
  }
  g_installed_tracer.store(nullptr, std::memory_order_release);
  return true;
}

}  // namespace roost::trace
