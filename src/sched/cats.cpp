#include "sched/cats.hpp"

#include <algorithm>
#include <sstream>
#include <utility>

#include "roost/errors.hpp"
#include "platform/platform.hpp"
#include "roost/touch.hpp"
#include "topology/topology.hpp"

namespace roost::sched {

using profile::tier;

// A task's touched address intervals, kept (in its task_id's sched_node, unused while profiling) from its
// first touch to its end, when their union becomes its own footprint.
struct cats_policy::touched {
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> spans;
};

// Annotations attribute each roost::touch to the task running on the calling worker; only that worker
// touches the task's record.
class cats_policy::touch_meter final : public touch_consumer {
 public:
  void on_touch(int, const void* base, std::size_t bytes, access) override { add(base, bytes, 1, 0); }
  void on_touch_rows(int, const void* base, std::size_t row_bytes, std::size_t rows, std::size_t stride,
                     access) override {
    add(base, row_bytes, rows, stride);
  }

 private:
  static void add(const void* base, std::size_t bytes, std::size_t rows, std::size_t stride) {
    engine::worker* w = engine::current_worker();
    if (!w || !w->current_task || bytes == 0) return;
    detail::task_id& id = *w->current_task;
    if (!id.sched_node) id.sched_node = new touched;
    auto& spans = static_cast<touched*>(id.sched_node)->spans;
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    for (std::size_t r = 0; r < rows; ++r) spans.emplace_back(b + r * stride, b + r * stride + bytes);
  }
};

// Eq. 1 wants the bytes a task touches, not the sum of its annotations: the union of its intervals.
void cats_policy::add_distinct_touched_bytes(detail::task_id& id) {
  auto* t = static_cast<touched*>(id.sched_node);
  if (!t) return;
  id.sched_node = nullptr;
  auto& v = t->spans;
  std::sort(v.begin(), v.end());
  std::uint64_t total = 0;
  std::uintptr_t lo = v[0].first, hi = v[0].second;
  for (const auto& [a, b] : v) {
    if (a > hi) {
      total += hi - lo;
      lo = a;
      hi = b;
    } else if (b > hi) {
      hi = b;
    }
  }
  total += hi - lo;
  delete t;
  id.own_bytes += total;
}

void cats_policy::meter_switch(engine::worker& w, detail::task_id* now_running) {
  counter_slot& c = counters_[w.id];
  if (!c.opened) {  // on the worker's own thread: a perf_event counter counts the thread that opened it
    c.opened = true;
    std::string why;
    c.reader = profile::open_counter(why);
    c.meter = profile::segment_meter(static_cast<double>(eng_.topology().line_size()));
  }
  std::uint64_t v = 0;
  if (c.reader && c.reader->read(v)) c.meter.begin(now_running, v);
}

cats_policy::cats_policy(engine::engine_base& e)
    : cab_policy(e, 0, true), min_intensity_(e.config().cats_min_intensity) {
  cache_bytes_ = e.topology().package_cache_bytes(e.placement().pu_of_worker[0]);
  // Hardware counters where the machine has them (probed here, opened per worker thread when profiling),
  // else kernel annotations.
  if (auto probe = profile::open_counter(why_no_counters_)) {
    use_counters_ = true;
    counters_ = std::vector<counter_slot>(e.num_workers());
    source_ = profile::counter_source_name() + " x " + std::to_string(e.topology().line_size()) +
              "-byte lines, per task between switches";
  } else {
    source_ = "annotations (roost::touch); no hardware counters: " + why_no_counters_;
  }
  annotations_ = std::make_unique<touch_meter>();
}

cats_policy::~cats_policy() {
  // Never leave the runtime's meter installed past its life (a profiling iteration that threw).
  touch_consumer* mine = annotations_.get();
  if (touch_consumer* prev = set_touch_consumer(nullptr); prev != mine) set_touch_consumer(prev);
}

void cats_policy::iteration_begin() {
  ++iterations_;
  if (reprofile_.exchange(false, std::memory_order_acq_rel)) mode_.store(mode::profiling, std::memory_order_release);
  if (mode_.load(std::memory_order_relaxed) == mode::profiling) {
    table_.clear();
    root_soid_ = 0;
    if (!use_counters_) previous_consumer_ = set_touch_consumer(annotations_.get());  // a tracer resumes afterwards
    iteration_start_ns_ = platform::os::now_ns();
  }
}

void cats_policy::iteration_end() {
  if (mode_.load(std::memory_order_relaxed) != mode::profiling) return;
  if (!use_counters_) set_touch_consumer(previous_consumer_);
  const std::uint64_t ns = platform::os::now_ns() - iteration_start_ns_;
  const double intensity = ns ? static_cast<double>(root_soid_) / static_cast<double>(ns) : 0.0;
  std::ostringstream why;
  why.precision(3);
  if (cache_bytes_ == 0) {
    why << "the topology describes no shared cache";
    mode_.store(mode::as_ws, std::memory_order_release);
  } else if (root_soid_ == 0) {
    why << (use_counters_ ? "no footprint measured (the counters read nothing)" : "no footprint measured (no roost::touch annotations)");
    mode_.store(mode::as_ws, std::memory_order_release);
  } else if (intensity < min_intensity_) {
    why << "CPU-bound: " << intensity << " bytes/ns < ROOST_CATS_MIN_INTENSITY " << min_intensity_;
    mode_.store(mode::as_ws, std::memory_order_release);
  } else {
    const auto tiers = table_.partition(cache_bytes_);
    std::size_t leaves = 0, intra = 0;
    for (const auto& [p, t] : tiers) {
      leaves += t == tier::leaf;
      intra += t == tier::intra;
    }
    why << tiers.size() << " tasks profiled, " << leaves << " leaf inter-socket tasks for a "
        << topo::format_bytes(cache_bytes_) << " socket cache, " << intensity << " bytes/ns";
    if (intra < leaves) {
      // Seed 000 §3.2's second constraint fails: an intra-socket subtree must be large enough to keep its
      // socket's cores busy. Here most leaf inter-socket tasks have no children (a flat task set, e.g.
      // sparselu's one task per block), and under bi-tier stealing only head cores run inter-socket tasks,
      // one subtree per socket at a time (§3.3): one core per socket would do all the work (sparselu ran
      // at the serial time on 2 cores). There is no socket-local work to keep together, so run as ws.
      why << "; only " << intra << " intra-socket tasks: too flat for bi-tier stealing (seed 000 §3.2's second "
          << "constraint)";
      mode_.store(mode::as_ws, std::memory_order_release);
    } else {
      build_trie(tiers);
      mode_.store(mode::bi_tier, std::memory_order_release);
    }
  }
  decision_ = why.str();
  if (mode_.load(std::memory_order_relaxed) == mode::as_ws) name_own_deques();
}

// Between iterations no task runs (runtime::run holds its iteration lock and the root has ended), and a
// worker reads its join_queue only in a task it got, through the queues, from the next iteration's root:
// the worker's own thread need not write it.
void cats_policy::name_own_deques() {
  for (unsigned i = 0; i < eng_.num_workers(); ++i) {
    engine::worker& w = eng_.worker_at(i);
    w.join_queue = &w.deque;
  }
}

void cats_policy::build_trie(const std::unordered_map<std::string, profile::tier>& tiers) {
  trie_ = profile_node{};
  for (const auto& [path, t] : tiers) {
    profile_node* n = nullptr;
    std::size_t pos = 0;
    while (pos <= path.size()) {
      std::size_t dot = path.find('.', pos);
      std::size_t idx = std::stoul(path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos));
      if (!n) {
        n = &trie_;  // the root's own index is 0
      } else {
        if (n->children.size() <= idx) n->children.resize(idx + 1);
        if (!n->children[idx]) n->children[idx] = std::make_unique<profile_node>();
        n = n->children[idx].get();
      }
      if (dot == std::string::npos) break;
      pos = dot + 1;
    }
    n->t = t;
  }
}

tier cats_policy::tier_of_child(const detail::task_id& parent, detail::task_id& child) const {
  if (parent.tier == static_cast<std::uint8_t>(tier::intra) || parent.tier == static_cast<std::uint8_t>(tier::leaf))
    return tier::intra;
  auto* pn = static_cast<const profile_node*>(parent.sched_node);
  const profile_node* cn =
      pn && child.index < pn->children.size() ? pn->children[child.index].get() : nullptr;
  child.sched_node = const_cast<profile_node*>(cn);
  // Unprofiled below an inter-socket task (the shape changed): inter-socket (see the header).
  return cn && cn->t != tier::unknown ? cn->t : tier::inter;
}

spawn_order cats_policy::order_slow(engine::worker& w, detail::task_frame& f) {
  switch (mode_.load(std::memory_order_relaxed)) {
    case mode::profiling: return spawn_order::parent_first;  // §3.3: convenient for collecting SOIDs
    case mode::as_ws: return spawn_order::child_first;
    case mode::bi_tier: break;
  }
  tier t = tier_of_child(*w.current_task, f.id);
  f.id.tier = static_cast<std::uint8_t>(t);
  return t == tier::intra ? spawn_order::child_first : spawn_order::parent_first;
}

void cats_policy::place(engine::worker& w, detail::task_frame* f) {
  if (mode_.load(std::memory_order_relaxed) == mode::bi_tier) cab_policy::place(w, f);
  else policy_base::place(w, f);
}

detail::job* cats_policy::steal(engine::worker& w) {
  if (mode_.load(std::memory_order_relaxed) == mode::bi_tier) return cab_policy::steal(w);
  const unsigned n = eng_.num_workers();  // random work stealing
  for (unsigned i = 1; i < n; ++i)
    if (detail::job* j = steal_one_of(w, n, [](unsigned k) { return k; })) return j;
  return nullptr;
}

bool cats_policy::has_visible_work(engine::worker& w) const {
  return mode_.load(std::memory_order_relaxed) == mode::bi_tier && cab_policy::has_visible_work(w);
}

void cats_policy::on_task_start_slow(engine::worker& w, detail::task_id& id) {
  mode m = mode_.load(std::memory_order_relaxed);
  if (m == mode::profiling) {
    id.own_bytes = 0;
    id.children_soid = 0;
    id.sched_node = nullptr;
    if (use_counters_) meter_switch(w, &id);
    return;
  }
  if (m != mode::bi_tier) return;
  if (!id.parent) {  // the root: its own profiled tier
    id.sched_node = &trie_;
    id.tier = static_cast<std::uint8_t>(trie_.t == tier::unknown ? tier::inter : trie_.t);
  }
  if (id.tier == static_cast<std::uint8_t>(tier::leaf)) subtree_started_on(w);
}

void cats_policy::on_task_end_slow(engine::worker& w, detail::task_id& id) {
  // The mode changes only between iterations, so a task ends in the mode it started in.
  mode m = mode_.load(std::memory_order_relaxed);
  if (m == mode::profiling && use_counters_) meter_switch(w, nullptr);
  if (m == mode::profiling) {
    add_distinct_touched_bytes(id);
    // Eq. 1: SOID = own footprint + the children's SOIDs (they all ended before this task).
    std::uint64_t soid = std::atomic_ref<std::uint64_t>(id.own_bytes).load(std::memory_order_acquire) +
                         std::atomic_ref<std::uint64_t>(id.children_soid).load(std::memory_order_acquire);
    table_.record(profile::path_of(id), soid);
    if (id.parent)
      std::atomic_ref<std::uint64_t>(const_cast<detail::task_id*>(id.parent)->children_soid)
          .fetch_add(soid, std::memory_order_acq_rel);
    else
      root_soid_ = soid;
    return;
  }
  if (m == mode::bi_tier && id.tier == static_cast<std::uint8_t>(tier::leaf)) subtree_ended_on(w, id);
}

std::string cats_policy::notes() const {
  std::string m = current_mode() == mode::profiling ? "profiling next iteration"
                  : current_mode() == mode::bi_tier ? "bi-tier"
                                                    : "running as ws";
  return "footprint source: " + source_ + "; " + m + (decision_.empty() ? "" : " (" + decision_ + ")");
}

}  // namespace roost::sched
