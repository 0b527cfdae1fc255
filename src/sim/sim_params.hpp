// The parameter table of the memory-hierarchy model (DESIGN §6): per cache level its associativity,
// load-to-use latency and bandwidths; DRAM latency (local, and remote at the topology's largest NUMA
// distance) and bandwidths; the page size and page placement policy; the replacement semantics.
//
// Cache sizes and sharing come from the topology (ROOST_TOPOLOGY); everything else comes from a preset, one
// per machine of DESIGN §4 with published figures (sources in sim_params.cpp and src/sim/README.md), and is
// overridden by a "name=value" list such as "preset=opteron-8380 l3.ways=32 dram.remote_ns=150".
#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace roost::topo {
class topology;
}

namespace roost::sim {

inline constexpr int max_cache_level = 4;  // parameters exist for L1 .. L4

struct level_params {
  unsigned ways = 0;
  double latency_ns = 0;   // load-to-use latency of a hit at this level, as a pointer chase measures it
  double bw = 0;           // bytes per ns one core sustains reading a stream out of this level
  double shared_bw = 0;    // bytes per ns one instance of a shared cache sustains for all its cores; 0: no limit
};

// What a hit, a miss and a write-back do. `roost` is the model the simulator uses; `pycachesim` exists only
// to compare with pycachesim 0.3 exactly (tools/tests/test_cachesim.py): there a write that hits neither
// moves its line to most-recently-used nor counts as a hit, and a dirty victim that misses the next level
// is fetched into it from below as a load would be (pycachesim's Cache__store with write-allocate).
enum class replacement_mode { roost, pycachesim };

// Where a page's memory lives: on the node of the PU that touches it first (Linux's default), or
// round-robin over the nodes page by page (numactl --interleave).
enum class numa_policy { first_touch, interleave };

struct sim_params {
  std::string preset;  // the preset these values started from ("xeon-gold-6130", ...)
  std::array<level_params, max_cache_level + 1> level{};  // index: cache level 1..4; [0] unused
  double dram_local_ns = 0;   // latency of a line from the PU's own NUMA node
  double dram_remote_ns = 0;  // latency at the largest distance of the topology's matrix; between: linear
  double dram_core_bw = 0;    // bytes per ns one core streams from its local node
  double dram_node_bw = 0;    // bytes per ns one node's memory controller delivers to all cores
  // Whether concurrent streams share the controllers and the interconnect (shared_bandwidth.hpp); off: each
  // touch is charged as the only stream (README "Bandwidth").
  bool dram_sharing = false;
  double link_bw = 0;  // bytes per ns one node's interconnect port carries each way, its links together; 0: no limit
  std::size_t page_bytes = 4096;
  numa_policy numa = numa_policy::first_touch;
  replacement_mode mode = replacement_mode::roost;
  // Host threads that walk the model (sharded_model.hpp): 1 or 2; 0 (auto): 2 where the process may run on
  // two CPUs. Speed only: every result is the same with either.
  unsigned host_threads = 0;
  // Whether the simulated platform settles a touch's charge lazily (sim_platform::on_touch_deferred: the walk
  // goes on while other simulated workers run) or at the touch. Speed only, as host_threads. Off by default:
  // on the 2-vCPU host it was measured on, it was as often slower as faster (src/sim/README.md).
  bool lazy_settle = false;
  // Where the values the preset's table did not give came from (ROOST_SIM_PARAMS, options::sim_params,
  // --params) and their names, lower case: what an error about one of them names (param_overrides::apply).
  // A field that allocates (these and `preset`) is left out of a second shard's copy (sharded_model.cpp).
  std::string overrides_source;
  std::vector<std::string> overridden;
};

// The memory model's resolved parameters as one JSON object (the simulated report's memory_params): with the
// cost table (params), what a report needs to be made again. host_threads is left out: speed only.
std::string params_json(const sim_params& p);

// The presets: "generic" and the machines of DESIGN §4. "auto" (the default) is resolved against a topology
// by detect_preset.
const std::vector<std::string>& preset_names();
// The table of a preset; throws roost::config_error for an unknown name.
sim_params preset_params(const std::string& name);
// The machine of DESIGN §4 whose cache sizes the topology has (L2 and L3 per instance), else "generic".
std::string detect_preset(const topo::topology& tp);

// A parsed "name=value" list (separated by spaces, commas or newlines). Every name and value is checked
// when parsed: an unknown name, or a value that is not valid for its name, throws roost::config_error
// naming `source` (e.g. "ROOST_SIM_PARAMS"), the name, the value and what is valid.
class param_overrides {
 public:
  param_overrides() = default;
  static param_overrides parse(const std::string& text, const std::string& source);

  const std::string& preset() const { return preset_; }  // "auto" unless set
  // Whether the text named parameter `name` (any case; "preset" too).
  bool has(const std::string& name) const;
  // The preset's table (auto: detected from tp, or "generic" without one) with the overrides applied.
  sim_params resolve(const topo::topology* tp) const;
  void apply(sim_params& p) const;
  // What can be checked without a machine (ROOST_SIM_PARAMS is checked on every platform): dram.remote_ns
  // at least dram.local_ns where both are given, or a named preset gives the other. Throws config_error.
  void check_without_topology() const;
  // Each lN.* given names a cache level of the machine (`levels`: those it has; `machine`: what errors call
  // it), or a config_error says which levels it has: a parameter no cache reads would change nothing.
  void check_levels(const std::vector<int>& levels, const std::string& machine) const;

 private:
  // What errors name: the variable or option the text came from; `fallback` for text no source was given.
  std::string source_or(const char* fallback) const { return source_.empty() ? std::string(fallback) : source_; }

  std::string source_;
  std::string preset_ = "auto";
  std::vector<std::pair<std::string, std::string>> values_;  // validated, in order
};

// Every parameter name with what it takes, one per line: the list an unknown-name error shows.
std::string describe_param_names();
// Whether `name` (any case) is one of this table's names: lets a caller that reads one list for several
// tables (ROOST_SIM_PARAMS also holds the platform's cost table) hand each pair to the table that knows it.
bool is_param_name(const std::string& name);
// Every parameter name, lower case: what a misspelt name is compared with ("did you mean ...?").
std::vector<std::string> param_names();

}  // namespace roost::sim
