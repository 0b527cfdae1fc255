#include "trace/tracer.hpp"

#include "platform/platform.hpp"

namespace roost::trace {

namespace {
std::atomic<tracer*> g_tracer{nullptr};
}

tracer* current_tracer() { return g_tracer.load(std::memory_order_acquire); }

tracer::tracer(std::string path, unsigned workers, std::string topology)
    : path_(std::move(path)), topology_(std::move(topology)), start_ns_(platform::os::now_ns()), lanes_(workers) {
  for (auto& l : lanes_) l.recs.reserve(1 << 14);
}

std::uint64_t tracer::now() const { return platform::os::now_ns() - start_ns_; }

void tracer::add(unsigned w, kind k, std::uint64_t a, std::uint64_t b, std::uint32_t index) {
  if (w >= lanes_.size()) return;
  lanes_[w].recs.push_back(record{now(), a, b, index, static_cast<std::uint16_t>(k), static_cast<std::uint16_t>(w)});
}

void tracer::task_begin(unsigned w, detail::task_id& id) {
  if (w >= lanes_.size()) return;
  id.serial = (static_cast<std::uint64_t>(w) << 48) | lanes_[w].next_serial++;
  add(w, kind::task_begin, id.serial, id.parent ? id.parent->serial : 0, id.index);
}

void tracer::iteration(bool begin) {
  std::lock_guard<std::mutex> lk(runtime_mutex_);
  runtime_lane_.push_back(record{now(), 0, 0, 0,
                                 static_cast<std::uint16_t>(begin ? kind::iteration_begin : kind::iteration_end),
                                 kRuntimeBlock});
}

void tracer::on_touch(int worker, const void* base, std::size_t bytes, access mode) {
  if (worker < 0) return;
  add(static_cast<unsigned>(worker), kind::touch, reinterpret_cast<std::uintptr_t>(base), bytes,
      static_cast<std::uint32_t>(mode));
}

void tracer::write() const {
  trace_file t;
  t.workers = static_cast<std::uint32_t>(lanes_.size());
  t.start_ns = start_ns_;
  t.topology = topology_;
  for (const auto& l : lanes_) t.records.insert(t.records.end(), l.recs.begin(), l.recs.end());
  {
    std::lock_guard<std::mutex> lk(runtime_mutex_);
    t.records.insert(t.records.end(), runtime_lane_.begin(), runtime_lane_.end());
  }
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
