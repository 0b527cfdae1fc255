#include "sim/sharded_model.hpp"

#include <pthread.h>

#include <algorithm>
#include <system_error>

#include "platform/platform.hpp"

namespace roost::sim {

using platform::native_platform;

// The helper thread. It sleeps on post_word_ when it has found nothing to walk for a while: Dekker's pattern
// (its flag seq_cst, then the word read again before the futex wait; a post stores the word, then reads the
// flag), so a wake is never lost.
struct sharded_model::helper {
  std::atomic<std::uint32_t> asleep{0};
  std::atomic<bool> stop{false};
  unsigned spin_idle = 1, spin_wait = 1;  // cpu_relax() counts: the helper's wait for a walk, the caller's for a result
  native_platform::thread_handle thread = 0;
};

sharded_model::sharded_model(const hierarchy_spec& spec, sim_params params) {
  unsigned host_threads = params.host_threads;
  if (host_threads == 0) host_threads = native_platform::allowed_cpus().size() >= 2 ? 2 : 1;
  // One thread walks one shard: two cost it 10% (two half-size set arrays per cache in the host's caches),
  // for the same results.
  shardable_ = memory_model::shardable(spec, params, 2);
  const unsigned n = host_threads >= 2 && shardable_ ? kMaxShards : 1;
  // What the shards keep is host memory, and their construction allocates on the malloc heap only the first
  // shard's copy of the parameters' names (host_memory.hpp): one shard's and two's leave the program's heap
  // alike.
  shards_.reserve(n);
  shards_.emplace_back(spec, params, n);
  for (unsigned k = 1; k < n; ++k) {
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
  shard_shift_ = static_cast<unsigned>(__builtin_ctz(n));
  page_line_shift_ = static_cast<unsigned>(__builtin_ctzll(params.page_bytes) - __builtin_ctzll(spec.line_bytes));
  first_touch_ = shards_[0].num_numa() > 1 && params.numa == numa_policy::first_touch;
  first_touch_ahead_ = n > 1 && first_touch_;
  host_threads_ = n;
}

sharded_model sharded_model::from_topology(const topo::topology& tp, const param_overrides& overrides) {
  return sharded_model(hierarchy_spec::from_topology(tp), overrides.resolve(&tp));
}

sharded_model::~sharded_model() {
  if (helper_) {
    helper& h = *helper_;
    h.stop.store(true, std::memory_order_seq_cst);
    post_word_.fetch_add(1, std::memory_order_seq_cst);  // a change the helper wakes for
    native_platform::wake_one(post_word_);
    native_platform::join_thread(h.thread);
  }
  for (posted_walk* w : slots_) {
    w->~posted_walk();
    host_memory_free(w, sizeof(posted_walk));
  }
}

void sharded_model::place(std::uint64_t addr, std::size_t bytes, unsigned node) {
  drain();
  for (memory_model& m : shards_) m.place(addr, bytes, node);
  if (bytes == 0 || node >= num_numa()) return;  // refused (memory_model::place threw) or nothing placed
  const unsigned page_shift = static_cast<unsigned>(__builtin_ctzll(page_bytes()));
  for (std::uint64_t p = addr >> page_shift; p <= (addr + bytes - 1) >> page_shift; ++p) mark_placed(p);
}

void sharded_model::unplace(const std::vector<std::uint64_t>& pages) {
  drain();
  for (memory_model& m : shards_) m.unplace(pages);
  for (std::uint64_t p : pages)
    if (p < placed_.size()) placed_[p] = 0;
  last_placed_page_ = ~std::uint64_t{0};
}

void sharded_model::place_reused(unsigned pu, std::uint64_t addr) {
  if (first_touch_) place(addr, 1, shards_[0].numa_of(pu));
}

void sharded_model::mark_placed(std::uint64_t page) {
  if (page >= std::uint64_t{1} << 32) return;  // not a simulated platform's dense page numbers: not kept
  if (page >= placed_.size()) placed_.resize(std::max<std::size_t>(placed_.size() * 2, std::max<std::size_t>(page + 1, 4096)));
  placed_[page] = 1;
}

// Only the caller's thread, and with no walk under way that reads the page map where it changes: a page the
// caller does not know to be placed is placed after draining.
void sharded_model::place_first_touch(unsigned pu, line_addr first, line_addr last) {
  const unsigned node = shards_[0].numa_of(pu);
  for (std::uint64_t p = first >> page_line_shift_; p <= last >> page_line_shift_; ++p) {
    if (p == last_placed_page_ || known_placed(p)) continue;  // a page once placed keeps a node
    last_placed_page_ = p;
    drain();
    if (shards_[0].place_if_new(p, node))
      for (std::size_t s = 1; s < shards_.size(); ++s) shards_[s].place_if_new(p, node);
    mark_placed(p);
  }
}

access_result sharded_model::access(unsigned pu, line_addr line, bool is_write) {
  drain();
  if (first_touch_ahead_) place_first_touch(pu, line, line);
  return shards_[line & shard_mask_].access(pu, line >> shard_shift_, is_write);
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
    // The helper as two shards would make it (start_helper).
    if (shardable_ && !helper_started_ && lines_of(regions, n) >= kMinSharedLines) start_helper();
    for (std::size_t i = 0; i < n; ++i) out[i] = shards_[0].access_region(pu, regions[i].addr, regions[i].bytes, kind);
    return;
  }
  const std::uint64_t lines = lines_of(regions, n);
  if (lines >= kMinSharedLines && can_post(lines)) {  // shard by shard, each in one pass over its consecutive sets
    const walk_ticket t = post(pu, regions, n, kind);
    collect(t, out);
    return;
  }
  drain();
  const unsigned shift = static_cast<unsigned>(__builtin_ctzll(line_bytes()));
  const bool is_write = kind != access_kind::read;
  const unsigned len = shards_[0].chain_length(pu);
  for (std::size_t i = 0; i < n; ++i) {
    region_result& r = out[i];
    r = region_result{};
    r.pu = pu;
    if (regions[i].bytes == 0) continue;
    const line_addr first = regions[i].addr >> shift, last = (regions[i].addr + regions[i].bytes - 1) >> shift;
    if (first_touch_ahead_) place_first_touch(pu, first, last);
    r.lines = last + 1 - first;
    for (line_addr l = first; l <= last; ++l) {
      const access_result a = shards_[l & shard_mask_].access(pu, l >> shard_shift_, is_write);
      count_line(r, a, len);
      r.latency_sum_ns += a.latency_ns;
      r.lead_latency_ns = std::max(r.lead_latency_ns, a.latency_ns);
    }
  }
}

// ---------------------------------------------------------------- posted walks

bool sharded_model::can_post(std::uint64_t lines) {
  if (shards_.size() < 2) return false;
  if (!helper_started_) {
    if (lines < kMinSharedLines) return false;  // the helper is made where one shard would make it
    start_helper();
  }
  return !no_helper_;
}

sharded_model::walk_ticket sharded_model::post(unsigned pu, const byte_range* regions, std::size_t n, access_kind kind) {
  const unsigned shift = static_cast<unsigned>(__builtin_ctzll(line_bytes()));
  const std::uint64_t seq = posted_.load(std::memory_order_relaxed) + 1;  // only the caller posts
  // The order ring's entry for seq is free once every shard walked seq - kOrder.
  if (seq > kOrder)
    caller_wait(seq - kOrder, [&] {
      for (unsigned s = 0; s < shards_.size(); ++s)
        if (queues_[s].walked.load(std::memory_order_acquire) < seq - kOrder) return false;
      return true;
    });
  if (free_slots_.empty()) {
    void* mem = host_memory_alloc(sizeof(posted_walk));
    slots_.push_back(new (mem) posted_walk());
    free_slots_.push_back(static_cast<std::uint32_t>(slots_.size() - 1));
  }
  const std::uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  posted_walk& w = *slots_[slot];
  w.pu = pu;
  w.is_write = kind != access_kind::read;
  w.helper_walked = false;
  w.ranges.clear();
  std::uint64_t lines = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (regions[i].bytes == 0) {
      w.ranges.push_back({1, 0});  // no lines: walks nothing
      continue;
    }
    const line_addr first = regions[i].addr >> shift, last = (regions[i].addr + regions[i].bytes - 1) >> shift;
    if (first_touch_ahead_) place_first_touch(pu, first, last);
    w.ranges.push_back({first, last});
    lines += last + 1 - first;
  }
  std::size_t most = n;  // a shard's lines: at most half of each range, rounded up
  for (const line_range& r : w.ranges) most += (r.last + 1 - r.first) / 2;
  for (unsigned s = 0; s < shards_.size(); ++s) {
    half_region& h = w.halves[s];
    if (h.latency_ns.size() < most) h.latency_ns.resize(most);
    if (h.counts.size() < n) h.counts.resize(n);
  }
  if (w.results.size() < n) w.results.resize(n);
  w.shards_done.store(0, std::memory_order_relaxed);
  w.combined.store(0, std::memory_order_relaxed);
  order_[(seq - 1) % kOrder] = &w;
  // The walk's fields, its slot's place in the order, and (through the walks before it) the pages placed
  // above are published by this release store; a walker acquires posted_ before reading them.
  posted_.store(seq, std::memory_order_release);
  post_word_.fetch_add(1, std::memory_order_seq_cst);
  if (helper_->asleep.load(std::memory_order_seq_cst)) native_platform::wake_one(post_word_);
  return {seq, slot, lines};
}

void sharded_model::collect(const walk_ticket& t, region_result* out) {
  posted_walk& w = *slots_[t.slot];
  caller_wait(t.seq, [&] { return w.combined.load(std::memory_order_acquire) != 0; });
  for (std::size_t i = 0; i < w.ranges.size(); ++i) out[i] = w.results[i];
  ++(w.helper_walked ? regions_shared_ : regions_taken_back_);
  free_slots_.push_back(t.slot);
}

void sharded_model::drain() const {
  // Finishing the walks already posted changes nothing a caller could see before or after: every call that
  // reads the model's state sees what they leave, as if they had been walked at their post.
  if (shards_.size() > 1) const_cast<sharded_model*>(this)->drain_walks();
}

void sharded_model::drain_walks() {
  const std::uint64_t all = posted_.load(std::memory_order_relaxed);
  caller_wait(all, [&] {
    for (unsigned s = 0; s < shards_.size(); ++s)
      if (queues_[s].walked.load(std::memory_order_acquire) < all) return false;
    return true;
  });
}

bool sharded_model::try_claim(unsigned s) {
  std::uint32_t free = 0;
  return queues_[s].claimed.load(std::memory_order_relaxed) == 0 &&
         queues_[s].claimed.compare_exchange_strong(free, 1, std::memory_order_acquire);
}

// The release orders this thread's walks of the shard (its caches' and directory's state) before the next
// claimer's, which acquires.
void sharded_model::unclaim(unsigned s) { queues_[s].claimed.store(0, std::memory_order_release); }

template <class Done>
void sharded_model::caller_wait(std::uint64_t upto, Done done) {
  for (unsigned spins = 0; !done();) {
    bool walked = false;
    for (unsigned s = 0; s < shards_.size(); ++s) {  // shard 0 first, the helper's is the last
      if (queues_[s].walked.load(std::memory_order_acquire) >= upto || !try_claim(s)) continue;
      walk_shard(s, upto, false);
      unclaim(s);
      walked = true;
    }
    if (walked) continue;
    // The helper walks what is left (it holds the shard's claim). It runs: spin, then give up the CPU now
    // and then, in case this host has given it to the caller's thread.
    if (++spins < (helper_ ? helper_->spin_wait : 1)) {
      native_platform::cpu_relax();
    } else {
      native_platform::yield_cpu();
      spins = 0;
    }
  }
}

void sharded_model::walk_shard(unsigned s, std::uint64_t upto, bool by_helper) {
  shard_queue& q = queues_[s];
  std::uint64_t done = q.walked.load(std::memory_order_relaxed);  // ours while claimed
  for (;;) {
    const std::uint64_t end = std::min(upto, posted_.load(std::memory_order_acquire));
    if (done >= end) return;
    walk_posted(s, *order_[done % kOrder], by_helper);
    q.walked.store(++done, std::memory_order_release);
  }
}

void sharded_model::walk_posted(unsigned s, posted_walk& w, bool by_helper) {
  memory_model& m = shards_[s];
  half_region& out = w.halves[s];
  double* latency = out.latency_ns.data();
  const line_addr step = shard_mask_ + 1;
  for (std::size_t i = 0; i < w.ranges.size(); ++i) {
    region_result& counts = out.counts[i];
    counts = region_result{};
    const line_range r = w.ranges[i];
    // Its lines: every shards_.size()-th from its first in the range.
    latency += m.access_run(w.pu, r.first + ((s - r.first) & shard_mask_), r.last, step, shard_shift_, w.is_write,
                            counts, latency);
  }
  if (by_helper) w.helper_walked = true;  // read by the caller after `combined`, which orders it
  // The last shard's walker combines; the acq_rel read-modify-write orders every shard's half before it.
  if (w.shards_done.fetch_add(1, std::memory_order_acq_rel) + 1 != shards_.size()) return;
  combine(w);
  w.combined.store(1, std::memory_order_release);
}

// The counts add up in any order; the latencies (doubles) are summed in line order, as one model sums them.
void sharded_model::combine(posted_walk& w) {
  const double* next[kMaxShards] = {};
  for (unsigned s = 0; s < shards_.size(); ++s) next[s] = w.halves[s].latency_ns.data();
  for (std::size_t i = 0; i < w.ranges.size(); ++i) {
    region_result& r = w.results[i];
    r = region_result{};
    r.pu = w.pu;
    const line_range lr = w.ranges[i];
    r.lines = lr.last + 1 - lr.first;
    if (r.lines == 0) continue;
    for (unsigned s = 0; s < shards_.size(); ++s) {
      const region_result& h = w.halves[s].counts[i];
      for (std::size_t d = 0; d < r.served.size(); ++d) r.served[d] += h.served[d];
      r.remote_lines += h.remote_lines;
      r.coherence_misses += h.coherence_misses;
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

// Made at the first region long enough to share (kMinSharedLines) or the first post, whether two threads will
// walk or one: making a thread allocates on the caller's heap (the thread's TLS vector, the closure), and a
// program's heap objects are simulated at their offsets inside their pages, so that allocation, had
// host_threads decided it, would have moved the program's later buffers and changed its report. With
// host_threads=1 the helper is never given a region; it sleeps.
void sharded_model::start_helper() {
  helper_started_ = true;
  order_.resize(kOrder);
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

// Walks whatever a free shard has not walked, the last shard first (the caller starts with the first), until
// told to stop.
void sharded_model::helper_main() {
  helper& h = *helper_;
  const unsigned n = static_cast<unsigned>(shards_.size());
  for (unsigned idle = 0;;) {
    if (h.stop.load(std::memory_order_acquire)) return;
    // The word before the look: a post after it changes the word, so the sleep below cannot miss it.
    const std::uint32_t word = post_word_.load(std::memory_order_seq_cst);
    bool walked = false;
    const std::uint64_t posted = posted_.load(std::memory_order_acquire);
    // One walk of the shard furthest behind that is free: the walks are then done in both shards in the
    // order posted, so that the caller, which needs the oldest, finds them whole.
    unsigned pick = n;
    std::uint64_t least = posted;
    for (unsigned i = n; i-- > 0;) {
      const std::uint64_t w = queues_[i].walked.load(std::memory_order_relaxed);
      if (w < least && queues_[i].claimed.load(std::memory_order_relaxed) == 0) {
        least = w;
        pick = i;
      }
    }
    if (pick < n && try_claim(pick)) {
      walk_shard(pick, queues_[pick].walked.load(std::memory_order_relaxed) + 1, true);
      unclaim(pick);
      walked = true;
    }
    if (walked) {
      idle = 0;
      continue;
    }
    if (++idle < h.spin_idle) {
      native_platform::cpu_relax();
      continue;
    }
    h.asleep.store(1, std::memory_order_seq_cst);
    if (post_word_.load(std::memory_order_seq_cst) == word && !h.stop.load(std::memory_order_seq_cst))
      native_platform::wait_on(post_word_, word);
    h.asleep.store(0, std::memory_order_relaxed);
    idle = 0;
  }
}

cache_counters sharded_model::counters(std::size_t instance) const {
  drain();
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
  drain();
  memory_counters sum;
  for (const memory_model& m : shards_) {
    sum.local += m.memory(pu).local;
    sum.remote += m.memory(pu).remote;
    sum.writebacks += m.memory(pu).writebacks;
  }
  return sum;
}

void sharded_model::reset_counters() {
  drain();
  for (memory_model& m : shards_) m.reset_counters();
}

}  // namespace roost::sim
