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
// One caller thread: the simulated platform. The second host thread (the helper) only walks the odd shard of
// a region the caller posted, while the caller walks the even one; it is made at the first region long enough
// to be worth it, spins a while for the next one and then sleeps. If the helper has not taken the odd half by
// the time the caller is done with its own, the caller walks it too: a busy host never waits for the helper.
#pragma once
#include <atomic>
#include <cstdint>
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
  std::uint32_t home_of(std::uint64_t addr) const { return shards_[0].home_of(addr); }

  // Counters summed over the shards.
  cache_counters counters(std::size_t instance) const;
  memory_counters memory(unsigned pu) const;
  bool holds(std::size_t instance, line_addr line) const {
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
  // Walks the lines of ranges_[0 .. n) that belong to `shard`, in order, into halves_[shard].
  void walk(unsigned shard, unsigned pu, std::size_t n, bool is_write);
  void walk_two_threads(unsigned pu, std::size_t n, bool is_write);
  // ranges_[0 .. n) walked by both shards, out[i] for range i.
  void walk_shared(unsigned pu, std::size_t n, bool is_write, region_result* out);
  void place_first_touch(unsigned pu, line_addr first, line_addr last);
  void start_helper();
  void helper_main();

  host_vector<memory_model> shards_;
  line_addr shard_mask_ = 0;
  unsigned shard_shift_ = 0;
  unsigned page_line_shift_ = 0;  // log2(lines per page), in whole-model lines
  bool first_touch_ahead_ = false;
  bool first_touch_ = false;  // pages get their node at first touch (several nodes, numa_policy first_touch)
  std::uint64_t last_placed_page_ = ~std::uint64_t{0};
  unsigned host_threads_ = 1;
  // What a hand-over walks, one range a region ({1, 0}: an empty one); the caller writes it before posting.
  host_vector<line_range> ranges_;
  // What each shard's walk found: per range its lines' counts, and every line's latency in line order. Apart
  // (a cache line each) so that the two threads write no line in common.
  struct alignas(64) half_region {
    host_vector<region_result> counts;
    host_vector<double> latency_ns;
  };
  half_region halves_[2];
  std::unique_ptr<helper> helper_;
  bool no_helper_ = false;  // the OS refused the thread: the caller walks both shards
  bool helper_started_ = false;
  bool shardable_ = false;  // the geometry splits in two (memory_model::shardable), whatever host_threads says
  std::uint64_t regions_shared_ = 0, regions_taken_back_ = 0;
};

}  // namespace roost::sim
