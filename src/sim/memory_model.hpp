// The memory hierarchy of a simulated machine (DESIGN §6): every cache of the topology as a set-associative
// LRU array, private to a core or shared by the cores below it; write-invalidate coherence between them;
// NUMA memory with a page -> node map and latencies from the distance matrix. The simulated platform asks it,
// per cache line a kernel touches (roost::touch), which level served the line and at what latency; a region
// of consecutive lines is charged at bandwidth instead (region_cost_ns).
//
// The walk is pycachesim's (tools/tests/test_cachesim.py checks the counts agree exactly): a line missing at
// a level is fetched from the level below first, then filled here, and the line leaving this level goes to
// the next one if dirty (write-back, write-allocate). Every level keeps what it was filled with until it
// replaces it: an outer cache does not invalidate inner copies when it evicts its own (not strictly
// inclusive). src/sim/README.md lists what else is approximate.
//
// One thread: the simulated platform runs every worker on one OS thread.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/cache_array.hpp"
#include "sim/coherence_directory.hpp"
#include "sim/host_memory.hpp"
#include "sim/page_map.hpp"
#include "sim/sim_params.hpp"

namespace roost::topo {
class topology;
}

namespace roost::sim {

inline constexpr unsigned max_chain = 8;  // caches between a PU and memory

enum class access_kind : std::uint8_t { read, write, read_write };

// One cache instance.
struct cache_spec {
  std::string name;           // "L2"
  int level = 0;              // 1 .. max_cache_level: which parameters apply
  std::size_t bytes = 0;
  unsigned ways = 0;          // 0: the parameters' lN.ways
  std::vector<unsigned> pus;  // the PUs whose accesses go through it
};

// The geometry the model is built from: a topology's (from_topology), or one given directly (roost-cachesim
// --level). A PU's chain is the caches whose pus hold it, nearest (lowest level) first.
struct hierarchy_spec {
  std::string source;             // what errors name: "ROOST_TOPOLOGY='pack:2 ...'"
  std::size_t line_bytes = 64;
  unsigned num_pus = 1;
  std::vector<unsigned> core_of_pu;  // a cache whose PUs are all of one core is private to it
  std::vector<unsigned> numa_of_pu;
  unsigned num_numa = 1;
  std::vector<unsigned> distances;  // num_numa^2, row-major (ACPI SLIT convention: 10 local)
  std::vector<cache_spec> caches;

  // Throws roost::config_error naming ROOST_TOPOLOGY when the topology describes no data cache, or one
  // without a size: a synthetic level with no size= (hwloc would make one up), an XML cache of size 0.
  static hierarchy_spec from_topology(const topo::topology& tp);
};

struct access_result {
  double latency_ns = 0;
  int instance = -1;            // the cache instance that had the line; -1: memory
  std::uint8_t depth = 0;       // its position on the PU's chain; the chain's length for memory
  bool coherence_miss = false;  // a cache on the way missed because another core's write took the line
  bool remote = false;          // memory of another NUMA node served it
};

// What one region (roost::touch) cost: lines served per depth of the PU's chain, then memory.
struct region_result {
  unsigned pu = 0;
  std::uint64_t lines = 0;
  std::uint64_t coherence_misses = 0;
  std::uint64_t remote_lines = 0;  // = served[chain length + 1]: from another node's DRAM
  std::array<std::uint64_t, max_chain + 2> served{};  // [depth]; [chain length]: local memory, [+1]: remote
  double latency_sum_ns = 0;   // every line at its level's idle latency
  // The slowest line's latency: what the region waits for before its lines stream at their levels' bandwidths
  // (region_cost_ns). Not the first line's: a region whose first line hit a cache hid the memory latency of
  // all the others, and touching one cached line more made a touch cheaper (an outside-user campaign).
  double lead_latency_ns = 0;
};

// Counts one line's access into a region's result (`chain_len`: its PU's caches), all but its latency,
// which a caller sums in line order: the one order that keeps a double sum the same (sharded_model.hpp).
inline void count_line(region_result& r, const access_result& a, unsigned chain_len) {
  const bool remote = a.depth == chain_len && a.remote;
  ++r.served[a.depth + (remote ? 1 : 0)];
  r.remote_lines += remote;
  r.coherence_misses += a.coherence_miss;
}

struct memory_counters {
  std::uint64_t local = 0;       // lines fetched from the PU's own node
  std::uint64_t remote = 0;      // lines fetched from another node
  std::uint64_t writebacks = 0;  // dirty lines the last cache wrote back
};

// Aligned to a cache line: two shards (sharded_model.hpp) side by side are walked by two threads.
class alignas(64) memory_model {
 public:
  // Throws roost::config_error, naming spec.source or the parameter, for a geometry the model cannot build:
  // a line size that is not a power of two, a cache level outside 1..4, a size that is not ways x line size x
  // a whole number of sets, a page smaller than a line, more than max_chain caches on a PU's way to memory.
  // `shard_of` > 1 (a power of two) makes this model one of that many shards by line (sharded_model.hpp):
  // every cache has 1 / shard_of of its sets, and the lines it is given are line / shard_of; every cache's
  // set count and a page's lines must then be multiples of shard_of (shardable() says whether they are).
  // What it reports (instance(), summary()) is the whole cache's geometry.
  memory_model(const hierarchy_spec& spec, const sim_params& params, unsigned shard_of = 1);
  // Whether the geometry splits into `shards` shards: every cache's sets and a page's lines divide evenly.
  // False also for a geometry the constructor refuses, which then says why.
  static bool shardable(const hierarchy_spec& spec, const sim_params& params, unsigned shards);
  // The topology's hierarchy with the parameters the overrides resolve to (preset "auto": detected).
  static memory_model from_topology(const topo::topology& tp, const param_overrides& overrides = {});

  // One line, read or written by `pu`.
  access_result access(unsigned pu, line_addr line, bool is_write);
  // Whether access() takes a walk compiled for this geometry (access_fixed: the same walk, its chain's length
  // and each set's layout constants): made where one is compiled for it, which the model chooses. Turned off,
  // the general walk runs; both give the same results to the bit (tests/test_sim_memory.cpp), only at
  // another speed.
  bool fixed_walk() const { return fixed_walk_ != nullptr; }
  void use_fixed_walk(bool on) {
    const fixed_walks f = on ? fixed_walks_for_geometry() : fixed_walks{};
    fixed_walk_ = f.walk;
    fixed_run_ = f.run;
  }
  // The lines first, first + step, ... up to last (as the caller numbers them; this model's line is l >> shift),
  // each as access() walks it, counted into `counts` (count_line) and its latency written to latencies[i], in
  // order; with latencies null, summed into counts.latency_sum_ns and counts.lead_latency_ns as access_region
  // sums them. Returns the number of lines. One call a run: the walk compiled for the geometry then loops
  // without a call a line.
  std::uint64_t access_run(unsigned pu, line_addr first, line_addr last, line_addr step, unsigned shift, bool is_write,
                           region_result& counts, double* latencies);
  // Every line of [addr, addr + bytes); read_write lines are written (the read's fetch is the write's).
  region_result access_region(unsigned pu, std::uint64_t addr, std::size_t bytes, access_kind kind);
  // The time of a region as a stream (README "Bandwidth"): the first line at its latency, every other line
  // at the bandwidth of where it came from, shared limits divided among `concurrent_streams` cores; never
  // more than every line at idle latency. An approximation: no overlap with compute, one stream per region.
  // `memory_rate_cap`: the most bytes per ns the stream may draw from memory (shared_bandwidth.hpp).
  double region_cost_ns(const region_result& r, unsigned concurrent_streams = 1,
                        double memory_rate_cap = std::numeric_limits<double>::infinity()) const;
  // A floor under region_cost_ns(r) (one stream, no cap) for every region r of `lines` lines (at least one)
  // of any PU, whatever its lines' levels: every line at the fastest level's latency and bandwidth. What a
  // charge may be known to cost before its walk ends (sim_platform's lazy settlement).
  double region_cost_floor_ns(std::uint64_t lines) const;

  // Places the pages of [addr, addr + bytes) on `node` (a data-distribution allocator); they move if placed.
  void place(std::uint64_t addr, std::size_t bytes, unsigned node);
  // The node a byte's page lives on, or page_map::none when no access placed it yet.
  std::uint32_t home_of(std::uint64_t addr) const;
  // These pages (numbers of this model's page size) lose their node (their memory was freed): the next
  // access places them again, by first touch or by a rule (place).
  void unplace(const std::vector<std::uint64_t>& pages);
  std::size_t page_bytes() const { return std::size_t{1} << page_shift_; }
  // First touch ahead of the walk (sharded_model.hpp): puts page number `page` on `node` unless it has a node
  // already; returns whether it placed it. A page nobody has touched has no line in any cache, so the walk
  // would have placed it at its first line all the same.
  bool place_if_new(std::uint64_t page, unsigned node);

  struct instance_info {
    std::string name;
    int level = 0;
    std::size_t bytes = 0;
    unsigned ways = 0;
    std::uint64_t sets = 0;
    bool shared = false;  // its PUs span more than one core
    host_vector<unsigned> pus;
    double latency_ns = 0;
  };
  std::size_t num_instances() const { return info_.size(); }
  const instance_info& instance(std::size_t i) const { return info_[i]; }
  const cache_counters& counters(std::size_t i) const { return caches_[i].counts; }
  bool holds(std::size_t instance, line_addr line) const { return caches_[instance].find(line) >= 0; }
  const memory_counters& memory(unsigned pu) const { return memory_[pu]; }
  std::vector<unsigned> chain(unsigned pu) const;
  unsigned chain_length(unsigned pu) const { return chains_[pu].len; }
  unsigned num_pus() const { return static_cast<unsigned>(chains_.size()); }
  unsigned numa_of(unsigned pu) const { return numa_of_pu_[pu]; }
  unsigned num_numa() const { return num_numa_; }
  double memory_latency_ns(unsigned from_node, unsigned home_node) const { return mem_latency_[from_node * num_numa_ + home_node]; }
  std::size_t line_bytes() const { return std::size_t{1} << line_shift_; }
  const sim_params& params() const { return params_; }
  bool coherent() const { return coherent_; }
  void reset_counters();
  // "preset xeon-gold-6130; L1 32 KiB 8-way x 64, L2 ..., L3 ...; 4 NUMA nodes"
  std::string summary() const;

 private:
  struct chain_t {
    std::uint8_t len = 0;
    std::uint8_t unit_ends = 0;  // bit d: ids[d] is the last cache of its coherence unit on the chain
    std::array<std::uint32_t, max_chain> ids{};
  };

  access_result finish_walk(unsigned pu, line_addr line, bool is_write, unsigned depth, access_result& r);
  unsigned fetch(unsigned pu, unsigned depth, line_addr line, bool is_write, bool& coherence);
  void fill(unsigned pu, unsigned depth, line_addr line, bool dirty, bool fetched);
  void write_back(unsigned pu, unsigned depth, line_addr line);
  void read_memory(unsigned pu, line_addr line);
  // `mask`: the line's, from the directory.
  void directory_add(std::uint32_t instance, std::uint64_t* mask);
  void directory_remove(std::uint32_t instance, line_addr line);
  void invalidate_others(unsigned pu, line_addr line, std::uint64_t* mask);
  void invalidate_in(std::uint32_t instance, line_addr line);
  bool held_outside_chain(unsigned pu, const std::uint64_t* mask) const;

  // The walk for chains of sizeof...(V) caches whose sets have V[d] vectors at depth d (cache_array's fixed
  // operations).
  using walk_fn = access_result (memory_model::*)(unsigned, line_addr, bool);
  using run_fn = std::uint64_t (memory_model::*)(unsigned, line_addr, line_addr, line_addr, unsigned, bool,
                                                 region_result&, double*);
  struct fixed_walks {
    walk_fn walk = nullptr;
    run_fn run = nullptr;
  };
  fixed_walks fixed_walks_for_geometry() const;
  template <unsigned... V>
  static fixed_walks fixed_walks_of();
  template <unsigned N>
  struct fixed_walk_state;
  template <unsigned... V>
  access_result walk_fixed(unsigned pu, line_addr line, bool is_write);
  template <unsigned... V>
  access_result access_fixed(unsigned pu, line_addr line, bool is_write);
  template <unsigned... V>
  std::uint64_t access_run_fixed(unsigned pu, line_addr first, line_addr last, line_addr step, unsigned shift,
                                 bool is_write, region_result& counts, double* latencies);
  template <unsigned D, unsigned... V>
  unsigned fetch_fixed(fixed_walk_state<sizeof...(V)>& w, line_addr line, bool is_write, bool& coherence);
  template <unsigned D, unsigned... V>
  void fill_fixed(fixed_walk_state<sizeof...(V)>& w, line_addr line, bool dirty, bool fetched);
  template <unsigned D, unsigned... V>
  void write_back_fixed(fixed_walk_state<sizeof...(V)>& w, line_addr line);
  walk_fn fixed_walk_ = nullptr;
  run_fn fixed_run_ = nullptr;

  sim_params params_;
  bool lru_on_write_hit_ = true;
  bool fetch_on_writeback_miss_ = false;
  unsigned line_shift_ = 6;
  unsigned page_line_shift_ = 6;  // log2(lines per page), in the lines this model is given (a shard's: line / shards)
  unsigned page_shift_ = 12;      // log2(page bytes)
  host_vector<cache_array> caches_;
  host_vector<std::uint8_t> vectors_of_;  // per instance: its cache_array::fixed_vectors()
  host_vector<instance_info> info_;
  host_vector<double> latency_of_;  // per instance
  host_vector<chain_t> chains_;     // per PU

  // NUMA memory.
  unsigned num_numa_ = 1;
  host_vector<unsigned> numa_of_pu_;
  host_vector<double> mem_latency_;  // from node x home node
  page_map pages_;
  struct last_page {
    std::uint64_t page = ~std::uint64_t{0};
    std::uint32_t node = 0;
  };
  host_vector<last_page> last_page_;  // per PU: the page its last memory access went to, and its node
  host_vector<memory_counters> memory_;
  bool last_remote_ = false;
  double last_memory_ns_ = 0;
  mutable double floor_lead_ns_ = 0, floor_line_ns_ = 0;  // region_cost_floor_ns's, made at its first call

  // Coherence (only when PUs have different chains).
  bool coherent_ = false;
  host_vector<std::uint32_t> unit_of_;                // per instance
  host_vector<std::uint32_t> unit_first_, unit_members_;  // per unit, flat (constructor)
  host_vector<std::uint64_t> chain_units_;            // per PU: directory words() bits of the units on its chain
  coherence_directory directory_{1};
  line_addr walk_line_ = ~line_addr{0};  // access(): its line, and ...
  std::uint64_t* walk_mask_ = nullptr;   // ... that line's directory mask once the walk looked it up
};

}  // namespace roost::sim
