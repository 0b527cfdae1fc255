// The memory model as two shards by line, walked by two host threads at once: the simulator's speed
// (DESIGN §6, src/sim/README.md "Two shards").
//
// Why it is exact. A line's set in a cache is `line mod sets`. When every cache has an even number of sets,
// the even lines meet only even lines in every set they visit, and so do the odd ones: their LRU orders,
// fills, victims, write-backs and the coherence directory's masks (one per line) never mix. So the hierarchy
// is two independent hierarchies of half the sets each, one fed the even lines and one the odd lines
// (as line / 2; memory_model's shard_of). Each line's walk gives what one model gives, because each shard
// sees its lines in the order one model sees them. The one thing lines of both parities share is a page's
// node under first touch: this class places a region's new pages on the touching PU's node in both shards
// before the walk. That is where the walk would have placed them too: no cache holds a line of a page that
// was never read from memory, so a page's first touched line always goes to memory.
//
// A region's lines are summed in line order, as memory_model::access_region sums them, so every result
// (and every simulated run) is bit-identical with one shard or two.
//
// One caller thread: the simulated platform. Walks are posted in order to a queue (post) and walked shard by
// shard, each shard's walks in the order posted, by whichever host thread claims the shard: the second host
// thread (the helper) whenever a walk waits, the caller when it needs a result (collect) and the shard is
// free. So a posted walk may go on while the caller runs the engine and the program, and its result is
// waited for only where the simulated platform needs it (its charge, lazily: sim_platform.hpp). Every other
// call that reads or changes the model's state first finishes every posted walk (drain), so it sees what
// walking at once would have left. The helper is made at the first walk long enough to be worth it, spins a
// while for the next one and then sleeps. A walk's result is combined (its lines' latencies summed in line
// order) by the thread that finishes its last shard.
#pragma once
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "sim/memory_model.hpp"

namespace roost::sim {

class sharded_model {
 public:
  // Host threads: params.host_threads (0: 2 where this process may run on two CPUs or more). Two threads walk
  // two shards where the geometry splits (memory_model::shardable); else one thread walks one shard, the model
  // as it is. Throws as memory_model's constructor does.
  sharded_model(const hierarchy_spec& spec, sim_params params);
  static sharded_model from_topology(const topo::topology& tp, const param_overrides& overrides = {});
  // Not movable: the helper thread walks this object's shards (a factory's result is not moved: C++17).
  sharded_model(sharded_model&&) = delete;
  sharded_model& operator=(sharded_model&&) = delete;
  ~sharded_model();

  // As memory_model's.
  access_result access(unsigned pu, line_addr line, bool is_write);
  region_result access_region(unsigned pu, std::uint64_t addr, std::size_t bytes, access_kind kind);
  // Several regions of one PU (a strided touch's rows, a touch's page runs), walked as access_region walks
  // them one after the other, with the same results (out[i] for regions[i]); the two host threads share them
  // when they hold kMinSharedLines lines together.
  struct byte_range {
    std::uint64_t addr = 0;
    std::size_t bytes = 0;
  };
  void access_regions(unsigned pu, const byte_range* regions, std::size_t n, access_kind kind, region_result* out);
  // The same in two steps: post() queues the regions' walk behind every walk posted before it and returns at
  // once (the helper may walk it meanwhile); collect() waits for it, walking a shard itself where none is
  // walking it, and writes out[i] for regions[i]: what access_regions would have written at the post. Every
  // posted walk must be collected, each once. Only where can_post(lines of the regions): two shards and a
  // helper thread, made at the first walk of kMinSharedLines lines or more, as one shard makes it (below);
  // the regions' first touches are placed at the post, as access_regions places them.
  struct walk_ticket {
    std::uint64_t seq = 0;   // 1, 2, ...: its place in the order walks are posted
    std::uint32_t slot = 0;  // where its regions and results are kept until collected
    std::uint64_t lines = 0;  // the lines its regions hold
  };
  bool can_post(std::uint64_t lines);
  walk_ticket post(unsigned pu, const byte_range* regions, std::size_t n, access_kind kind);
  void collect(const walk_ticket& t, region_result* out);
  std::size_t regions_of(const walk_ticket& t) const { return slots_[t.slot]->ranges.size(); }
  // Finishes every posted walk. Every call below that reads or changes the model's state does it first.
  void drain() const;
  double region_cost_ns(const region_result& r, unsigned concurrent_streams = 1,
                        double memory_rate_cap = std::numeric_limits<double>::infinity()) const {
    return shards_[0].region_cost_ns(r, concurrent_streams, memory_rate_cap);
  }
  void place(std::uint64_t addr, std::size_t bytes, unsigned node);
  void unplace(const std::vector<std::uint64_t>& pages);  // memory_model::unplace, in every shard
  std::size_t page_bytes() const { return shards_[0].page_bytes(); }
  // A page whose memory was freed and is used again, first touched now by `pu`: placed at once on pu's node
  // in every shard when pages go by first touch. Its old lines may still be cached, so the walk might not
  // read memory before another PU's miss places it elsewhere, and one shard and two would differ.
  void place_reused(unsigned pu, std::uint64_t addr);
  std::uint32_t home_of(std::uint64_t addr) const {
    drain();
    return shards_[0].home_of(addr);
  }

  // Counters summed over the shards.
  cache_counters counters(std::size_t instance) const;
  memory_counters memory(unsigned pu) const;
  bool holds(std::size_t instance, line_addr line) const {
    drain();
    return shards_[line & shard_mask_].holds(instance, line >> shard_shift_);
  }
  void reset_counters();

  // The geometry, the same in every shard.
  const memory_model& geometry() const { return shards_[0]; }
  std::size_t num_instances() const { return shards_[0].num_instances(); }
  const memory_model::instance_info& instance(std::size_t i) const { return shards_[0].instance(i); }
  unsigned num_pus() const { return shards_[0].num_pus(); }
  unsigned num_numa() const { return shards_[0].num_numa(); }
  unsigned numa_of(unsigned pu) const { return shards_[0].numa_of(pu); }
  unsigned chain_length(unsigned pu) const { return shards_[0].chain_length(pu); }
  std::size_t line_bytes() const { return shards_[0].line_bytes(); }
  // The lines the n regions touch, each counted once per region (a region of no bytes touches none).
  std::uint64_t lines_of(const byte_range* regions, std::size_t n) const {
    const unsigned shift = static_cast<unsigned>(__builtin_ctzll(line_bytes()));
    std::uint64_t lines = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (regions[i].bytes) lines += ((regions[i].addr + regions[i].bytes - 1) >> shift) - (regions[i].addr >> shift) + 1;
    return lines;
  }
  const sim_params& params() const { return shards_[0].params(); }
  std::string summary() const { return shards_[0].summary(); }

  unsigned shards() const { return static_cast<unsigned>(shards_.size()); }
  unsigned host_threads() const { return host_threads_; }
  // Hand-overs (one or several regions each) the helper walked half of, and those the caller walked whole
  // although it posted them.
  std::uint64_t regions_shared() const { return regions_shared_; }
  std::uint64_t regions_taken_back() const { return regions_taken_back_; }

  // Regions shorter than this are walked on the caller's thread alone: a hand-over costs about a cache line's
  // round trip between two cores each way (~0.1-0.3 us), a line's walk ~0.05-0.1 us.
  static constexpr std::uint64_t kMinSharedLines = 32;


 private:
  struct helper;
  struct line_range {
    line_addr first = 0, last = 0;
  };
  // What one shard's walk of a posted walk found: per range its lines' counts, and every line's latency in
  // line order.
  struct half_region {
    host_vector<region_result> counts;
    host_vector<double> latency_ns;
  };
  // Two: four and eight shards were tried (the helper and the caller then split a walk's last part more
  // finely) and were slower, their sets spread over more of the host's caches.
  static constexpr unsigned kMaxShards = 2;
  // A posted walk: written by the caller before the post publishes it, walked shard by shard, combined by
  // the thread that walks its last shard, read back by the caller once `combined` is set.
  struct alignas(64) posted_walk {
    unsigned pu = 0;
    bool is_write = false;
    bool helper_walked = false;  // the helper walked a shard of it (regions_shared)
    host_vector<line_range> ranges;  // one a region ({1, 0}: an empty one)
    host_vector<region_result> results;
    half_region halves[kMaxShards];
    alignas(64) std::atomic<std::uint32_t> shards_done{0};
    std::atomic<std::uint32_t> combined{0};
  };
  // Per shard, who walks it now and how far the posted walks have been walked in it. A cache line each.
  struct alignas(64) shard_queue {
    std::atomic<std::uint64_t> walked{0};  // posted walks 1 .. walked are done in this shard
    std::atomic<std::uint32_t> claimed{0};  // a thread walks this shard now
  };
  // The posted walks' slots in the order posted, seq 1, 2, ... at [(seq - 1) % kOrder]: a post waits while
  // the oldest walk a shard has not finished is kOrder behind.
  static constexpr std::uint64_t kOrder = 256;

  // Walks shard `s` of one posted walk (its lines, in order, into its half), and combines the walk when this
  // was its last shard. `by_helper`: which thread, for the counts.
  void walk_posted(unsigned s, posted_walk& w, bool by_helper);
  // Walks shard `s`'s posted walks up to seq `upto` (or as far as posted, whichever comes first); the
  // caller holds its claim.
  void walk_shard(unsigned s, std::uint64_t upto, bool by_helper);
  void combine(posted_walk& w);
  bool try_claim(unsigned s);
  void unclaim(unsigned s);
  // The caller, until `done()`: walks what a free shard has not walked up to `upto`, else waits a little.
  template <class Done>
  void caller_wait(std::uint64_t upto, Done done);
  void drain_walks();
  void place_first_touch(unsigned pu, line_addr first, line_addr last);
  void start_helper();
  void helper_main();
  // Pages the caller knows to have a node, so that a post places only new ones, and reads the page map
  // (which the walks read) only after draining them. Indexed by page number; grows with the largest one.
  bool known_placed(std::uint64_t page) const { return page < placed_.size() && placed_[page]; }
  void mark_placed(std::uint64_t page);

  host_vector<memory_model> shards_;
  line_addr shard_mask_ = 0;
  unsigned shard_shift_ = 0;
  unsigned page_line_shift_ = 0;  // log2(lines per page), in whole-model lines
  bool first_touch_ahead_ = false;
  bool first_touch_ = false;  // pages get their node at first touch (several nodes, numa_policy first_touch)
  std::uint64_t last_placed_page_ = ~std::uint64_t{0};
  host_vector<std::uint8_t> placed_;
  unsigned host_threads_ = 1;

  // The posted walks. Slots are made as needed and kept (their vectors keep their capacity); slots_ and
  // free_slots_ are the caller's alone (slots_ grows while walks are under way), the walkers find a walk
  // through order_.
  host_vector<posted_walk*> slots_;
  host_vector<std::uint32_t> free_slots_;
  host_vector<posted_walk*> order_;  // kOrder entries, by seq
  alignas(64) std::atomic<std::uint64_t> posted_{0};  // walks 1 .. posted_ are posted
  std::atomic<std::uint32_t> post_word_{0};           // moves at every post: what an idle helper sleeps on
  shard_queue queues_[kMaxShards];

  std::unique_ptr<helper> helper_;
  bool no_helper_ = false;  // the OS refused the thread: the caller walks both shards
  bool helper_started_ = false;
  bool shardable_ = false;  // the geometry splits in two (memory_model::shardable), whatever host_threads says
  std::uint64_t regions_shared_ = 0, regions_taken_back_ = 0;
};

}  // namespace roost::sim
