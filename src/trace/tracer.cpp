#include "trace/tracer.hpp"

#include <sys/mman.h>

#include <new>

#include "platform/platform.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define ROOST_HAVE_TSC 1
#endif

namespace roost::trace {

namespace {
std::atomic<tracer*> g_tracer{nullptr};
}

tracer* current_tracer() { return g_tracer.load(std::memory_order_acquire); }

tracer::tracer(std::string path, unsigned workers, std::string topology, caches c)
    : path_(std::move(path)),
      topology_(std::move(topology)),
      caches_(std::move(c)),
      start_ns_(platform::os::now_ns()),
      start_ticks_(ticks()),
      lanes_(workers) {
  // Each lane's first chunk now, before the workers start: made on a worker's first event, its 2 MiB of
  // zeroed pages were faulted in on the scheduling path, and a traced heat2d 440x100's first iteration took
  // 1.4-4.6 ms instead of 0.25-0.3 (`make demo`'s locality section traces it from its first iteration).
  // Bounded, so that a huge virtual topology does not populate gigabytes; later lanes start lazily.
  for (std::size_t i = 0; i < lanes_.size() && i < kPrefaultedLanes; ++i) grow(lanes_[i]);
}

tracer::~tracer() {
  for (auto& l : lanes_)
    for (record* c : l.chunks) ::munmap(c, kChunkRecords * sizeof(record));
}

record* tracer::grow(lane& l) {
  void* p = ::mmap(nullptr, kChunkRecords * sizeof(record), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  l.chunks.push_back(static_cast<record*>(p));
  l.cur = static_cast<record*>(p);
  l.used = 0;
  return l.cur;
}

std::uint64_t tracer::ticks() {
#ifdef ROOST_HAVE_TSC
  return __rdtsc();  // invariant TSC on the machines roost targets (constant_tsc, nonstop_tsc)
#else
  return platform::os::now_ns();
#endif
}

void tracer::add(unsigned w, kind k, std::uint64_t a, std::uint64_t b, std::uint32_t index) {
  if (w >= lanes_.size()) return;
  lane& l = lanes_[w];
  if (l.used == kChunkRecords) [[unlikely]] grow(l);
  l.cur[l.used++] = record{ticks(), a, b, index, static_cast<std::uint16_t>(k), static_cast<std::uint16_t>(w)};
}

void tracer::task_begin(unsigned w, detail::task_id& id) {
  if (w >= lanes_.size()) return;
  id.serial = (static_cast<std::uint64_t>(w) << 48) | lanes_[w].next_serial++;
  add(w, kind::task_begin, id.serial, id.parent ? id.parent->serial : 0, id.index);
}

void tracer::iteration(bool begin) {
  std::lock_guard<std::mutex> lk(runtime_mutex_);
  runtime_lane_.push_back(record{ticks(), 0, 0, 0,
                                 static_cast<std::uint16_t>(begin ? kind::iteration_begin : kind::iteration_end),
                                 kRuntimeBlock});
}

void tracer::on_touch(int worker, const void* base, std::size_t bytes, access mode) {
  if (worker < 0) return;
  add(static_cast<unsigned>(worker), kind::touch, reinterpret_cast<std::uintptr_t>(base), bytes,
      static_cast<std::uint32_t>(mode));
}

void tracer::on_touch_rows(int worker, const void* base, std::size_t row_bytes, std::size_t rows,
                           std::size_t stride, access mode) {
  if (worker < 0) return;
  if (row_bytes >= (1ull << 32) || rows >= (1ull << 32) || stride >= (1ull << 32)) {  // does not pack: row by row
    touch_consumer::on_touch_rows(worker, base, row_bytes, rows, stride, mode);
    return;
  }
  add(static_cast<unsigned>(worker), static_cast<kind>(static_cast<unsigned>(kind::touch_rows_read) + static_cast<unsigned>(mode)),
      reinterpret_cast<std::uintptr_t>(base), (static_cast<std::uint64_t>(row_bytes) << 32) | rows,
      static_cast<std::uint32_t>(stride));
}

void tracer::write() const {
  trace_file t;
  t.workers = static_cast<std::uint32_t>(lanes_.size());
  t.start_ns = start_ns_;
  t.topology = topology_;
  t.l2_bytes = caches_.l2_bytes;
  t.llc_bytes = caches_.llc_bytes;
  t.llc_domain = caches_.llc_domain;
  for (const auto& l : lanes_)
    for (std::size_t c = 0; c < l.chunks.size(); ++c) {
      std::size_t n = c + 1 == l.chunks.size() ? l.used : kChunkRecords;
      t.records.insert(t.records.end(), l.chunks[c], l.chunks[c] + n);
    }
  {
    std::lock_guard<std::mutex> lk(runtime_mutex_);
    t.records.insert(t.records.end(), runtime_lane_.begin(), runtime_lane_.end());
  }
  // Ticks to nanoseconds since the start, from the calibration points taken at start and now.
  const std::uint64_t end_ns = platform::os::now_ns(), end_ticks = ticks();
  const double ns_per_tick = end_ticks > start_ticks_
                                 ? static_cast<double>(end_ns - start_ns_) / static_cast<double>(end_ticks - start_ticks_)
                                 : 1.0;
  for (auto& r : t.records)
    r.t_ns = r.t_ns > start_ticks_ ? static_cast<std::uint64_t>((r.t_ns - start_ticks_) * ns_per_tick) : 0;
  write_binary(path_, t);
  write_chrome_json(path_ + ".json", t);
}

bool install_tracer(tracer* t) {
  if (t) {
    tracer* expected = nullptr;
    return g_tracer.compare_exchange_strong(expected, t, std::memory_order_acq_rel);
  }
  g_tracer.store(nullptr, std::memory_order_release);
  return true;
}

}  // namespace roost::trace
