#include "sim/sharded_model.hpp"

#include <pthread.h>

#include <algorithm>
#include <system_error>

#include "platform/platform.hpp"

namespace roost::sim {

using platform::native_platform;

// The hand-over of one region's odd half. The caller writes the job, then posts it in `word`, whose two low
// bits say who has it: a release store and an acquire compare-exchange order the job's fields, and the done
// store and the caller's acquire load order the helper's results, so the job's fields and the results need no
// atomics. The upper bits number the jobs, so a word is never mistaken for an earlier job's.
// Sleeping is Dekker's pattern on each side (seq_cst flag, then the word read again before the futex wait;
// the other side stores the word, then reads the flag), so a wake is never lost.
struct sharded_model::helper {
  static constexpr std::uint32_t kPosted = 0, kTaken = 1, kTakenBack = 2, kDone = 3;
  alignas(64) std::atomic<std::uint32_t> word{kDone};
  std::atomic<std::uint32_t> helper_asleep{0};
  std::atomic<std::uint32_t> caller_asleep{0};
  std::atomic<bool> stop{false};
  std::uint32_t job = 0;
  unsigned pu = 0;
  std::size_t ranges = 0;  // ranges_[0 .. ranges)
  bool is_write = false;
  unsigned spin_idle = 1, spin_wait = 1;  // cpu_relax() counts: the helper's wait for a job, the caller's for a result
  native_platform::thread_handle thread = 0;
};

sharded_model::sharded_model(const hierarchy_spec& spec, sim_params params) {
  unsigned host_threads = params.host_threads;
  if (host_threads == 0) host_threads = native_platform::allowed_cpus().size() >= 2 ? 2 : 1;
  // One thread walks one shard: two cost it 10% (two half-size set arrays per cache in the host's caches),
  // for the same results.
  shardable_ = memory_model::shardable(spec, params, 2);
  const unsigned n = host_threads >= 2 && shardable_ ? 2 : 1;
  // What the shards keep is host memory, and their construction allocates on the malloc heap only the first
  // shard's copy of the parameters' names (host_memory.hpp): one shard's and two's leave the program's heap
  // alike.
  shards_.reserve(n);
  shards_.emplace_back(spec, params, n);
  if (n == 2) {
    // A model's copy of the parameters copies their names (the preset, where the overrides came from,
    // which were given): strings on the malloc heap, the one thing a shard's construction allocated there,
    // so two shards left the program's heap unlike one (SimShards.HostThreadsDoNotMoveTheProgramsHeapData
    // failed now and then: a buffer 32 bytes on). The second shard is made without them, swapped out and
    // back (no allocation, no free): params() is the first shard's.
    std::string preset, overrides_source;
    std::vector<std::string> overridden;
    params.preset.swap(preset);
    params.overrides_source.swap(overrides_source);
    params.overridden.swap(overridden);
    shards_.emplace_back(spec, params, n);
    params.preset.swap(preset);
    params.overrides_source.swap(overrides_source);
    params.overridden.swap(overridden);
  }
  shard_mask_ = n - 1;
  shard_shift_ = n == 2 ? 1 : 0;
  page_line_shift_ = static_cast<unsigned>(__builtin_ctzll(params.page_bytes) - __builtin_ctzll(spec.line_bytes));
  first_touch_ = shards_[0].num_numa() > 1 && params.numa == numa_policy::first_touch;
  first_touch_ahead_ = n > 1 && first_touch_;
  host_threads_ = n;
}

sharded_model sharded_model::from_topology(const topo::topology& tp, const param_overrides& overrides) {
  return sharded_model(hierarchy_spec::from_topology(tp), overrides.resolve(&tp));
}

sharded_model::~sharded_model() {
  if (!helper_) return;
  helper& h = *helper_;
  h.stop.store(true, std::memory_order_seq_cst);
  h.word.store(((h.job + 1) << 2) | helper::kDone, std::memory_order_seq_cst);  // a change the helper wakes for
  native_platform::wake_one(h.word);
  native_platform::join_thread(h.thread);
}

void sharded_model::place(std::uint64_t addr, std::size_t bytes, unsigned node) {
  for (memory_model& m : shards_) m.place(addr, bytes, node);
}

void sharded_model::unplace(const std::vector<std::uint64_t>& pages) {
  for (memory_model& m : shards_) m.unplace(pages);
  last_placed_page_ = ~std::uint64_t{0};
}

void sharded_model::place_reused(unsigned pu, std::uint64_t addr) {
  if (first_touch_) place(addr, 1, shards_[0].numa_of(pu));
}

void sharded_model::place_first_touch(unsigned pu, line_addr first, line_addr last) {
  const unsigned node = shards_[0].numa_of(pu);
  for (std::uint64_t p = first >> page_line_shift_; p <= last >> page_line_shift_; ++p) {
    if (p == last_placed_page_) continue;  // a page once placed keeps a node
    last_placed_page_ = p;
    if (shards_[0].place_if_new(p, node))
      for (std::size_t s = 1; s < shards_.size(); ++s) shards_[s].place_if_new(p, node);
  }
}

access_result sharded_model::access(unsigned pu, line_addr line, bool is_write) {
  if (first_touch_ahead_) place_first_touch(pu, line, line);
  return shards_[line & shard_mask_].access(pu, line >> shard_shift_, is_write);
}

void sharded_model::walk(unsigned shard, unsigned pu, std::size_t n, bool is_write) {
  memory_model& m = shards_[shard];
  half_region& out = halves_[shard];
  double* latency = out.latency_ns.data();
  const unsigned len = m.chain_length(pu);
  const line_addr step = shard_mask_ + 1;
  for (std::size_t i = 0; i < n; ++i) {
    region_result& counts = out.counts[i];
    counts = region_result{};
    const line_range r = ranges_[i];
    for (line_addr l = r.first + ((shard - r.first) & shard_mask_); l <= r.last; l += step) {  // its lines
      const access_result a = m.access(pu, l >> shard_shift_, is_write);
      count_line(counts, a, len);
      *latency++ = a.latency_ns;
    }
  }
}

region_result sharded_model::access_region(unsigned pu, std::uint64_t addr, std::size_t bytes, access_kind kind) {
  const byte_range one{addr, bytes};
  region_result r;
  access_regions(pu, &one, 1, kind, &r);
  return r;
}

void sharded_model::access_regions(unsigned pu, const byte_range* regions, std::size_t n, access_kind kind,
                                   region_result* out) {
  if (shards_.size() == 1) {
    if (shardable_ && !helper_started_) {  // the helper as two shards would make it (start_helper)
      const unsigned shift = static_cast<unsigned>(__builtin_ctzll(line_bytes()));
      std::uint64_t lines = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (regions[i].bytes) lines += ((regions[i].addr + regions[i].bytes - 1) >> shift) - (regions[i].addr >> shift) + 1;
      if (lines >= kMinSharedLines) start_helper();
    }
    for (std::size_t i = 0; i < n; ++i) out[i] = shards_[0].access_region(pu, regions[i].addr, regions[i].bytes, kind);
    return;
  }
  const bool is_write = kind != access_kind::read;
  const unsigned shift = static_cast<unsigned>(__builtin_ctzll(line_bytes()));
  ranges_.clear();
  std::uint64_t lines = 0;
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = region_result{};
    out[i].pu = pu;
    if (regions[i].bytes == 0) {
      ranges_.push_back({1, 0});  // no lines: walks nothing
      continue;
    }
    const line_addr first = regions[i].addr >> shift, last = (regions[i].addr + regions[i].bytes - 1) >> shift;
    if (first_touch_ahead_) place_first_touch(pu, first, last);
    ranges_.push_back({first, last});
    lines += last + 1 - first;
  }
  if (lines >= kMinSharedLines) {
    walk_shared(pu, n, is_write, out);  // shard by shard, each in one pass over its consecutive sets
    return;
  }
  const unsigned len = shards_[0].chain_length(pu);
  for (std::size_t i = 0; i < n; ++i) {
    region_result& r = out[i];
    const line_range lr = ranges_[i];
    r.lines = lr.last + 1 - lr.first;
    for (line_addr l = lr.first; l <= lr.last; ++l) {
      const access_result a = shards_[l & shard_mask_].access(pu, l >> shard_shift_, is_write);
      count_line(r, a, len);
      r.latency_sum_ns += a.latency_ns;
      r.lead_latency_ns = std::max(r.lead_latency_ns, a.latency_ns);
    }
  }
}

// The counts add up in any order; the latencies (doubles) are summed in line order, as one model sums them.
// out[0 .. n): zeroed, with their PU.
void sharded_model::walk_shared(unsigned pu, std::size_t n, bool is_write, region_result* out) {
  std::size_t most = n;  // a shard's lines: at most half of each range, rounded up
  for (std::size_t i = 0; i < n; ++i) most += (ranges_[i].last + 1 - ranges_[i].first) / 2;
  for (half_region& h : halves_) {
    if (h.latency_ns.size() < most) h.latency_ns.resize(most);
    if (h.counts.size() < n) h.counts.resize(n);
  }
  walk_two_threads(pu, n, is_write);
  const double* next[2] = {halves_[0].latency_ns.data(), halves_[1].latency_ns.data()};
  for (std::size_t i = 0; i < n; ++i) {
    region_result& r = out[i];
    const line_range lr = ranges_[i];
    r.lines = lr.last + 1 - lr.first;
    if (r.lines == 0) continue;
    for (const half_region& h : halves_) {
      for (std::size_t d = 0; d < r.served.size(); ++d) r.served[d] += h.counts[i].served[d];
      r.remote_lines += h.counts[i].remote_lines;
      r.coherence_misses += h.counts[i].coherence_misses;
    }
    double sum = 0, lead = 0;
    for (line_addr l = lr.first; l <= lr.last; ++l) {
      const double ns = *next[l & shard_mask_]++;
      sum += ns;
      lead = std::max(lead, ns);
    }
    r.latency_sum_ns = sum;
    r.lead_latency_ns = lead;
  }
}

// The odd shard to the helper, the even one here; the caller walks the odd one too if the helper has not taken
// it by then.
// Made at the first region long enough to share (kMinSharedLines), whether two threads will walk or one:
// making a thread allocates on the caller's heap (the thread's TLS vector, the closure), and a program's
// heap objects are simulated at their offsets inside their pages, so that allocation, had host_threads
// decided it, would have moved the program's later buffers and changed its report. With host_threads=1 the
// helper is never given a region; it sleeps.
void sharded_model::start_helper() {
  helper_started_ = true;
  helper_ = std::make_unique<helper>();
  helper_->spin_idle = native_platform::relax_count_for_ns(50'000);
  helper_->spin_wait = native_platform::relax_count_for_ns(200'000);
  try {
    helper_->thread = native_platform::start_thread([this] { helper_main(); });
    (void)pthread_setname_np(static_cast<pthread_t>(helper_->thread), "roost-simmodel");  // top -H, gdb, the tests
  } catch (const std::system_error&) {  // no thread to be had: the same results on this one
    helper_.reset();
    no_helper_ = true;
  }
}

void sharded_model::walk_two_threads(unsigned pu, std::size_t n, bool is_write) {
  if (!helper_started_) start_helper();
  if (no_helper_) {
    walk(0, pu, n, is_write);
    walk(1, pu, n, is_write);
    return;
  }
  helper& h = *helper_;
  h.pu = pu;
  h.ranges = n;
  h.is_write = is_write;
  const std::uint32_t job = ++h.job;
  std::uint32_t posted = (job << 2) | helper::kPosted;
  h.word.store(posted, std::memory_order_seq_cst);
  if (h.helper_asleep.load(std::memory_order_seq_cst)) native_platform::wake_one(h.word);
  walk(0, pu, n, is_write);
  if (h.word.compare_exchange_strong(posted, (job << 2) | helper::kTakenBack, std::memory_order_acq_rel)) {
    walk(1, pu, n, is_write);  // the helper was late: no waiting for it
    ++regions_taken_back_;
    return;
  }
  const std::uint32_t done = (job << 2) | helper::kDone;
  for (unsigned spins = 0; h.word.load(std::memory_order_acquire) != done;) {
    if (++spins < h.spin_wait) {
      native_platform::cpu_relax();
      continue;
    }
    h.caller_asleep.store(1, std::memory_order_seq_cst);
    const std::uint32_t now = h.word.load(std::memory_order_seq_cst);
    if (now != done) native_platform::wait_on(h.word, now);
    h.caller_asleep.store(0, std::memory_order_relaxed);
    spins = 0;
  }
  ++regions_shared_;
}

void sharded_model::helper_main() {
  helper& h = *helper_;
  // The word as it was made, not as it is now: a helper that starts late must still see the posts, and the
  // stop, that came before it started (it may start after the last post, even after the stop).
  std::uint32_t seen = helper::kDone;
  for (;;) {
    std::uint32_t w;
    for (unsigned spins = 0; (w = h.word.load(std::memory_order_acquire)) == seen;) {
      if (++spins < h.spin_idle) {
        native_platform::cpu_relax();
        continue;
      }
      h.helper_asleep.store(1, std::memory_order_seq_cst);
      if (h.word.load(std::memory_order_seq_cst) == seen) native_platform::wait_on(h.word, seen);
      h.helper_asleep.store(0, std::memory_order_relaxed);
      spins = 0;
    }
    if (h.stop.load(std::memory_order_acquire)) return;
    seen = w;
    if ((w & 3) != helper::kPosted) continue;
    if (!h.word.compare_exchange_strong(w, (w & ~3u) | helper::kTaken, std::memory_order_acq_rel)) {
      seen = w;  // the caller took it back
      continue;
    }
    walk(1, h.pu, h.ranges, h.is_write);
    seen = (w & ~3u) | helper::kDone;
    h.word.store(seen, std::memory_order_seq_cst);
    if (h.caller_asleep.load(std::memory_order_seq_cst)) native_platform::wake_one(h.word);
  }
}

cache_counters sharded_model::counters(std::size_t instance) const {
  cache_counters sum;
  for (const memory_model& m : shards_) {
    const cache_counters& c = m.counters(instance);
    sum.accesses += c.accesses;
    sum.hits += c.hits;
    sum.write_hits += c.write_hits;
    sum.misses += c.misses;
    sum.coherence_misses += c.coherence_misses;
    sum.evictions += c.evictions;
    sum.writebacks += c.writebacks;
    sum.invalidations += c.invalidations;
  }
  return sum;
}

memory_counters sharded_model::memory(unsigned pu) const {
  memory_counters sum;
  for (const memory_model& m : shards_) {
    sum.local += m.memory(pu).local;
    sum.remote += m.memory(pu).remote;
    sum.writebacks += m.memory(pu).writebacks;
  }
  return sum;
}

void sharded_model::reset_counters() {
  for (memory_model& m : shards_) m.reset_counters();
}

}  // namespace roost::sim
