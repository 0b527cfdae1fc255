#include "sim/memory_model.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <iomanip>
#include <map>
#include <tuple>
#include <utility>
#include <sstream>
#include <stdexcept>

#include "roost/errors.hpp"
#include "topology/synthetic.hpp"
#include "topology/topology.hpp"

namespace roost::sim {

namespace {

bool is_pow2(std::uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// access_run's loop for either walk (`walk(l)`: line l's access_result): each line counted, its latency
// written to latencies[n] or summed in order as access_region sums it. Returns the number of lines.
template <class Walk>
[[gnu::always_inline]] inline std::uint64_t walk_run(line_addr first, line_addr last, line_addr step, unsigned chain_len,
                                                     region_result& counts, double* latencies, Walk&& walk) {
  std::uint64_t n = 0;
  for (line_addr l = first; l <= last; l += step, ++n) {
    const access_result a = walk(l);
    count_line(counts, a, chain_len);
    if (latencies) {
      latencies[n] = a.latency_ns;
    } else {
      counts.latency_sum_ns += a.latency_ns;
      counts.lead_latency_ns = std::max(counts.lead_latency_ns, a.latency_ns);
    }
  }
  return n;
}

unsigned log2_of(std::uint64_t x) {
  unsigned s = 0;
  while ((std::uint64_t{1} << s) < x) ++s;
  return s;
}

// hwloc makes up a size for a synthetic cache level without size= (4 MiB, 16 MiB, ...): the model would
// simulate a cache nobody described, so it refuses the description instead (natively it is a warning:
// api/runtime.cpp).
void check_synthetic_sizes(const std::string& description, const std::string& named) {
  const std::vector<std::string> unsized = topo::caches_without_size(description);
  if (unsized.empty()) return;
  const std::string& level = unsized.front();
  throw config_error(named + ": cache level '" + level +
                     "' has no size; the simulator's memory model needs every cache's size, e.g. '" +
                     level.substr(0, level.find('(')) + "(size=1MiB)'");
}

std::string bytes_text(std::size_t b) { return topo::format_bytes(b); }

// A cache's ways: its description's, else its level's parameter (levels outside the table read the nearest).
unsigned ways_of(const cache_spec& c, const sim_params& params) {
  return c.ways ? c.ways : params.level[std::clamp(c.level, 1, max_cache_level)].ways;
}

bool overridden(const sim_params& params, const std::string& name) {
  return std::find(params.overridden.begin(), params.overridden.end(), name) != params.overridden.end();
}

// Where a cache's ways (parameter `ways_name`, "l3.ways") came from, for an error about them.
std::string ways_source(const cache_spec& c, const sim_params& params, const std::string& ways_name) {
  if (c.ways) return "the cache's description";
  if (overridden(params, ways_name)) return params.overrides_source;
  std::string from = "preset " + params.preset;
  if (overridden(params, "preset")) from += ", which " + params.overrides_source + " names";
  return from;
}

}  // namespace

// ---- Geometry --------------------------------------------------------------------------------------------

hierarchy_spec hierarchy_spec::from_topology(const topo::topology& tp) {
  hierarchy_spec s;
  s.source = tp.is_virtual() ? tp.named() : "the machine's topology (hwloc)";
  if (tp.is_virtual() && !tp.from_file())
    check_synthetic_sizes(tp.description(), s.source);
  s.line_bytes = tp.line_size();
  // One line size for every cache: an XML file whose L2 had 128 B lines and L3 64 B was modelled with 128 B
  // lines everywhere, without a word (an outside-user campaign).
  std::map<std::size_t, int> line_of;  // line size -> a cache level that has it
  for (const topo::node& n : tp.nodes())
    if (n.kind == topo::node_kind::cache && n.cache_line_bytes) line_of.emplace(n.cache_line_bytes, n.cache_level);
  if (line_of.size() > 1) {
    std::ostringstream os;
    os << s.source << ": its caches have lines of ";
    const char* sep = "";
    for (const auto& [bytes, level] : line_of) {
      os << sep << bytes << " B (L" << level << ")";
      sep = " and ";
    }
    os << "; the simulated memory hierarchy has one line size for every cache: give them all the same";
    throw config_error(os.str());
  }
  s.num_pus = tp.num_pus();
  for (unsigned p = 0; p < s.num_pus; ++p) {
    s.core_of_pu.push_back(tp.pu(p).core);
    s.numa_of_pu.push_back(tp.pu(p).numa);
  }
  s.num_numa = tp.num_numa_nodes();
  s.distances = tp.numa_distances();
  std::map<int, unsigned> index_at_level;
  for (const topo::node& n : tp.nodes()) {
    if (n.kind != topo::node_kind::cache || n.pu_count == 0) continue;
    cache_spec c;
    c.level = n.cache_level;
    c.name = topo::cache_level_name(static_cast<unsigned>(n.cache_level));
    c.bytes = n.cache_bytes;
    if (c.bytes == 0)
      throw config_error(s.source + ": L" + std::to_string(n.cache_level) + " cache #" +
                         std::to_string(index_at_level[n.cache_level]) +
                         " has no size (0); the simulator's memory model needs every cache's size");
    ++index_at_level[n.cache_level];
    for (unsigned p = n.first_pu; p < n.first_pu + n.pu_count; ++p) c.pus.push_back(p);
    s.caches.push_back(std::move(c));
  }
  if (s.caches.empty())
    throw config_error(s.source + ": describes no data cache; the simulator's memory model needs the caches and their "
                                  "sizes, e.g. 'pack:2 l3:1(size=1MiB) core:1 pu:1'");
  return s;
}

memory_model memory_model::from_topology(const topo::topology& tp, const param_overrides& overrides) {
  return memory_model(hierarchy_spec::from_topology(tp), overrides.resolve(&tp));
}

bool memory_model::shardable(const hierarchy_spec& spec, const sim_params& params, unsigned shards) {
  if (!is_pow2(shards) || !is_pow2(spec.line_bytes) || spec.line_bytes > 4096 ||
      params.page_bytes < spec.line_bytes * shards)
    return false;
  for (const cache_spec& c : spec.caches) {
    if (c.level < 1 || c.level > max_cache_level) return false;
    const std::size_t set_bytes = std::size_t{ways_of(c, params)} * spec.line_bytes;
    if (set_bytes == 0 || c.bytes % set_bytes != 0 || (c.bytes / set_bytes) % shards != 0) return false;
  }
  return true;
}

memory_model::memory_model(const hierarchy_spec& spec, const sim_params& params, unsigned shard_of) : params_(params) {
  const std::string& src = spec.source;
  if (!is_pow2(spec.line_bytes) || spec.line_bytes > 4096)
    throw config_error(src + ": line size " + std::to_string(spec.line_bytes) +
                       " bytes; must be a power of two from 1 to 4096 bytes");
  if (params.page_bytes < spec.line_bytes)
    // Named as every parameter's error is: where the value came from, and the topology whose line it is.
    throw config_error((params.overrides_source.empty() ? std::string("sim parameters") : params.overrides_source) +
                       ": page_size=" + std::to_string(params.page_bytes) + " is smaller than the line size of " + src +
                       " (" + std::to_string(spec.line_bytes) + " bytes); valid: a page of at least one line");
  if (shard_of > 1 && !shardable(spec, params, shard_of))
    throw std::logic_error("memory_model: the geometry does not split into " + std::to_string(shard_of) + " shards");
  line_shift_ = log2_of(spec.line_bytes);
  page_shift_ = log2_of(params.page_bytes);
  page_line_shift_ = page_shift_ - line_shift_ - log2_of(shard_of);
  lru_on_write_hit_ = params.mode == replacement_mode::roost;
  fetch_on_writeback_miss_ = params.mode == replacement_mode::pycachesim;

  // What the arrays will take of this machine's memory, before any is made: a simulated cache of 1 TiB
  // (the documented limit of a size) asked for more than the host had and ended in a bare std::bad_alloc
  // (an outside-user campaign). Caches the loop below refuses are left to it.
  {
    double host = 0, lines = 0;
    for (const cache_spec& c : spec.caches) {
      const unsigned ways = ways_of(c, params);
      const std::size_t set_bytes = std::size_t{ways} * spec.line_bytes;
      if (ways == 0 || ways > 1024 || set_bytes == 0 || c.bytes % set_bytes != 0) continue;
      host += static_cast<double>(c.bytes / set_bytes) * static_cast<double>(cache_array::set_block_bytes(ways));
      lines += static_cast<double>(c.bytes / spec.line_bytes);
    }
    const double phys = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
    if (phys > 0 && host > phys / 2) {
      const double gib = double(1 << 30);
      std::ostringstream os;
      os << std::fixed << std::setprecision(1) << src << ": the simulated caches hold "
         << static_cast<std::uint64_t>(lines) << " lines in all, which the model keeps in " << host / gib
         << " GiB of this machine's memory (" << host / lines << " bytes a line); it may take at most half of "
         << "this machine's " << phys / gib << " GiB: give smaller caches (at most about "
         << phys / 2 / (host / lines) * static_cast<double>(spec.line_bytes) / gib << " GiB of simulated cache in all here)";
      throw config_error(os.str());
    }
  }

  // The arrays. Nothing below allocates on the malloc heap but to say what is wrong: a program's heap
  // objects are simulated at their offsets in their pages, and one shard's construction and two's
  // (host_threads) would leave that heap in different states (host_memory.hpp).
  std::array<unsigned, max_cache_level + 2> index_at_level{};  // levels beyond the model's share the last
  for (const cache_spec& c : spec.caches) {
    const unsigned index = index_at_level[static_cast<std::size_t>(std::clamp(c.level, 0, max_cache_level + 1))]++;
    const auto what = [&] { return src + ": " + c.name + " cache #" + std::to_string(index); };
    if (c.level < 1 || c.level > max_cache_level)
      throw config_error(what() + " is at level " + std::to_string(c.level) + "; the model has parameters for levels 1 to " +
                         std::to_string(max_cache_level));
    if (c.bytes == 0) throw config_error(what() + " has size 0; must be at least one line");
    const unsigned ways = ways_of(c, params);
    std::string ways_name(1, 'l');  // "l3.ways" (not "l" + std::to_string(...): topology.hpp, cache_level_name)
    ways_name += std::to_string(c.level);
    ways_name += ".ways";
    const std::size_t set_bytes = std::size_t{ways} * spec.line_bytes;
    if (c.bytes >= spec.line_bytes && c.bytes % spec.line_bytes != 0)  // no number of ways mends that
      throw config_error(what() + " has " + bytes_text(c.bytes) + ", not a whole number of " +
                         std::to_string(spec.line_bytes) + " B lines; make its size a multiple of the line size");
    if (c.bytes % set_bytes != 0 || c.bytes / set_bytes == 0) {
      std::ostringstream os;
      os << what() << " has " << bytes_text(c.bytes) << ", not a whole number of sets of " << ways << " ways x "
         << spec.line_bytes << " B lines (" << ways_name << "=" << ways << " from "
         << ways_source(c, params, ways_name) << "); the size must be a multiple of ways x line size: ";
      if (c.bytes < spec.line_bytes)
        os << "it is smaller than one line; make it at least " << spec.line_bytes << " B or the line smaller";
      else
        os << "set " << ways_name << " to a divisor of " << c.bytes / spec.line_bytes << " (lines in the cache)";
      throw config_error(os.str());
    }
    for (unsigned p : c.pus)
      if (p >= spec.num_pus) throw config_error(what() + " lists PU " + std::to_string(p) + ", past the last PU");
    caches_.emplace_back(c.bytes / set_bytes / shard_of, ways);
    vectors_of_.push_back(static_cast<std::uint8_t>(caches_.back().fixed_vectors()));
    instance_info in;
    in.name = c.name;
    in.level = c.level;
    in.bytes = c.bytes;
    in.ways = ways;
    in.sets = c.bytes / set_bytes;
    in.pus.assign(c.pus.begin(), c.pus.end());
    for (unsigned p : c.pus)
      in.shared |= spec.core_of_pu.empty() ? c.pus.size() > 1 : spec.core_of_pu[p] != spec.core_of_pu[c.pus[0]];
    in.latency_ns = params.level[c.level].latency_ns;
    info_.push_back(in);
    latency_of_.push_back(in.latency_ns);
  }

  // A shared limit given for a level none of whose caches is shared would change nothing (as an lN.* pair for a
  // level the machine lacks, sim_params.cpp): it was taken without a word (an outside-user campaign).
  for (int l = 1; l <= max_cache_level; ++l) {
    std::string name(1, 'l');  // not "l" + std::to_string(l): GCC 12's -Wrestrict false positive (topology.hpp)
    name += std::to_string(l);
    name += ".shared_bw";
    if (!overridden(params, name) || params.level[static_cast<std::size_t>(l)].shared_bw <= 0) continue;
    bool any_shared = false;
    for (const instance_info& in : info_) any_shared |= in.level == l && in.shared;
    if (!any_shared)
      throw config_error(params.overrides_source + ": " + name + ": no L" + std::to_string(l) + " cache of " + src +
                         " is shared by several cores, so nothing would read it (a private cache's rate is l" +
                         std::to_string(l) + ".bw)");
  }

  // Each PU's chain: its caches by level, nearest first.
  chains_.resize(spec.num_pus);
  for (unsigned p = 0; p < spec.num_pus; ++p) {
    host_vector<std::uint32_t> ids;
    for (std::uint32_t i = 0; i < info_.size(); ++i)
      if (std::find(info_[i].pus.begin(), info_[i].pus.end(), p) != info_[i].pus.end()) ids.push_back(i);
    // By level, and in index order within one (what a stable sort gives; std::stable_sort takes a buffer on
    // the heap).
    std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) {
      return info_[a].level != info_[b].level ? info_[a].level < info_[b].level : a < b;
    });
    if (ids.size() > max_chain)
      throw config_error(src + ": PU " + std::to_string(p) + " has " + std::to_string(ids.size()) +
                         " caches on its way to memory; the model takes at most " + std::to_string(max_chain));
    chains_[p].len = static_cast<std::uint8_t>(ids.size());
    std::copy(ids.begin(), ids.end(), chains_[p].ids.begin());
  }

  // NUMA: latency from node i to home j, linear in the distance between the local one and the largest.
  num_numa_ = std::max(1u, spec.num_numa);
  numa_of_pu_.assign(spec.numa_of_pu.begin(), spec.numa_of_pu.end());
  numa_of_pu_.resize(spec.num_pus, 0);
  for (unsigned& n : numa_of_pu_) n = std::min(n, num_numa_ - 1);
  host_vector<unsigned> dist(spec.distances.begin(), spec.distances.end());
  if (dist.size() != std::size_t{num_numa_} * num_numa_) {
    dist.assign(std::size_t{num_numa_} * num_numa_, 20);
    for (unsigned i = 0; i < num_numa_; ++i) dist[i * num_numa_ + i] = 10;
  }
  // No node nearer another than itself: a remote distance below the local one was read as local latency
  // while its lines counted as remote (an outside-user campaign; ACPI's SLIT has 10 on the diagonal, more
  // elsewhere). Equal is allowed (a flat matrix: remote memory as near as local).
  for (unsigned i = 0; i < num_numa_; ++i)
    for (unsigned j = 0; j < num_numa_; ++j)
      if (i != j && dist[i * num_numa_ + j] < dist[i * num_numa_ + i])
        throw config_error(src + ": the distance from NUMA node " + std::to_string(i) + " to node " + std::to_string(j) +
                           " is " + std::to_string(dist[i * num_numa_ + j]) + ", below node " + std::to_string(i) +
                           "'s own " + std::to_string(dist[i * num_numa_ + i]) +
                           "; valid: every node's distance to another node at least its distance to itself");
  const unsigned dmax = *std::max_element(dist.begin(), dist.end());
  mem_latency_.resize(dist.size());
  for (unsigned i = 0; i < num_numa_; ++i) {
    for (unsigned j = 0; j < num_numa_; ++j) {
      const double own = dist[i * num_numa_ + i], d = dist[i * num_numa_ + j];
      const double f = (i == j || dmax <= own) ? 0.0 : std::clamp((d - own) / (dmax - own), 0.0, 1.0);
      mem_latency_[i * num_numa_ + j] = params.dram_local_ns + f * (params.dram_remote_ns - params.dram_local_ns);
    }
  }
  memory_.resize(spec.num_pus);
  last_page_.assign(spec.num_pus, last_page{});

  // Coherence units: the private caches of one core as one unit, each shared instance as its own.
  host_vector<host_vector<std::uint32_t>> distinct;
  for (const chain_t& c : chains_) {
    host_vector<std::uint32_t> ids(c.ids.begin(), c.ids.begin() + c.len);
    if (std::find(distinct.begin(), distinct.end(), ids) == distinct.end()) distinct.push_back(ids);
  }
  coherent_ = distinct.size() > 1;
  unit_of_.assign(info_.size(), 0);
  std::map<unsigned, std::uint32_t, std::less<>, host_allocator<std::pair<const unsigned, std::uint32_t>>> unit_of_core;
  host_vector<host_vector<std::uint32_t>> instances_of_unit;
  for (std::uint32_t i = 0; i < info_.size(); ++i) {
    std::uint32_t u;
    if (!info_[i].shared) {
      const unsigned core = spec.core_of_pu.empty() ? info_[i].pus[0] : spec.core_of_pu[info_[i].pus[0]];
      auto it = unit_of_core.find(core);
      if (it == unit_of_core.end()) {
        it = unit_of_core.emplace(core, static_cast<std::uint32_t>(instances_of_unit.size())).first;
        instances_of_unit.emplace_back();
      }
      u = it->second;
    } else {
      u = static_cast<std::uint32_t>(instances_of_unit.size());
      instances_of_unit.emplace_back();
    }
    unit_of_[i] = u;
    instances_of_unit[u].push_back(i);
  }
  // The units' instances, flat: unit u's are unit_members_[unit_first_[u] .. unit_first_[u + 1]).
  unit_first_.assign(1, 0);
  for (const host_vector<std::uint32_t>& members : instances_of_unit) {
    unit_members_.insert(unit_members_.end(), members.begin(), members.end());
    unit_first_.push_back(static_cast<std::uint32_t>(unit_members_.size()));
  }
  for (chain_t& c : chains_)
    for (unsigned d = 0; d < c.len; ++d)
      if (d + 1 == c.len || unit_of_[c.ids[d + 1]] != unit_of_[c.ids[d]]) c.unit_ends |= static_cast<std::uint8_t>(1u << d);
  directory_ = coherence_directory(static_cast<unsigned>(std::max<std::size_t>(1, instances_of_unit.size())));
  const unsigned w = directory_.words();
  chain_units_.assign(std::size_t{spec.num_pus} * w, 0);
  for (unsigned p = 0; p < spec.num_pus; ++p)
    for (unsigned d = 0; d < chains_[p].len; ++d) {
      const std::uint32_t u = unit_of_[chains_[p].ids[d]];
      chain_units_[std::size_t{p} * w + u / 64] |= std::uint64_t{1} << (u % 64);
    }
  use_fixed_walk(true);
}

// ---- The walk ----------------------------------------------------------------------------------------------

access_result memory_model::access(unsigned pu, line_addr line, bool is_write) {
  if (fixed_walk_) return (this->*fixed_walk_)(pu, line, is_write);
  access_result r;
  walk_line_ = line;
  walk_mask_ = nullptr;
  const unsigned depth = fetch(pu, 0, line, is_write, r.coherence_miss);
  return finish_walk(pu, line, is_write, depth, r);
}

// What both walks do once the line was found at `depth` (the chain's length: memory) and filled above it.
[[gnu::always_inline]] inline access_result memory_model::finish_walk(unsigned pu, line_addr line, bool is_write,
                                                                      unsigned depth, access_result& r) {
  const chain_t& ch = chains_[pu];
  r.depth = static_cast<std::uint8_t>(depth);
  if (depth < ch.len) {
    r.instance = static_cast<int>(ch.ids[depth]);
    r.latency_ns = latency_of_[ch.ids[depth]];
  } else {
    r.remote = last_remote_;
    r.latency_ns = last_memory_ns_;
  }
  if (!coherent_ || !is_write) return r;
  // Write-invalidate. A walk that filled a cache has the line's mask already; a hit asks the directory (there
  // is no exclusive bit in the caches: MESI's E state is the mask holding nothing off the chain, and asking is
  // cheaper than keeping bits in every holder's sets exact).
  std::uint64_t* mask = walk_mask_ ? walk_mask_ : directory_.find(line);
  if (mask && held_outside_chain(pu, mask)) invalidate_others(pu, line, mask);
  return r;
}

// Looks for the line at `depth` of pu's chain and below; fills it into every cache that missed, the level
// below before this one (pycachesim's order: Cache__load, then Cache__inject). Returns the depth that had it.
// A loop down and one back up rather than a recursion: no call per level on the miss path.
// Inlined into access(): a hit in the nearest cache costs no call.
[[gnu::always_inline]] inline unsigned memory_model::fetch(unsigned pu, unsigned depth, line_addr line, bool is_write,
                                                           bool& coherence) {
  const chain_t& ch = chains_[pu];
  unsigned d = depth;
  for (bool write = is_write; d < ch.len; ++d, write = false) {
    cache_array& c = caches_[ch.ids[d]];
    const int way = c.lookup(line, write, !write || lru_on_write_hit_);
    if (way >= 0) {
      if (write) c.set_dirty(line, way);
      break;
    }
    coherence |= way == cache_array::coherence_miss;
    // The level below serves a read: a write allocates here after fetching the line (write-allocate).
  }
  const unsigned served = d;
  if (d == ch.len) read_memory(pu, line);
  while (d > depth) {
    --d;
    fill(pu, d, line, d == depth && is_write, true);
  }
  return served;
}

// `fetched`: the line came from the level below on the chain, which holds it. Inlined into the walk and the
// write-back: a miss-heavy walk makes one to three fills.
[[gnu::always_inline]] inline void memory_model::fill(unsigned pu, unsigned depth, line_addr line, bool dirty, bool fetched) {
  const chain_t& ch = chains_[pu];
  const std::uint32_t id = ch.ids[depth];
  const cache_array::victim v = caches_[id].insert(line, dirty);
  if (coherent_) {
    if (!fetched || line != walk_line_) {  // a write-back, or what pycachesim mode fetches for one
      directory_add(id, directory_.find_or_insert(line));
    } else if (ch.unit_ends & (1u << depth)) {
      // (A level below of the same unit holds the line: its unit's bit is set, nothing to add.) The walk looks
      // the line up in the directory once, and access() uses what it found.
      if (!walk_mask_) walk_mask_ = directory_.find_or_insert(line);
      directory_add(id, walk_mask_);
    }
  }
  if (!v.valid) return;
  if (coherent_) directory_remove(id, v.line);
  if (v.dirty) write_back(pu, depth + 1, v.line);
}

// A dirty line leaving the level above: marked dirty here when present (not reordered, as pycachesim's
// Cache__store), else allocated here; pycachesim mode fetches it from below first, as a load.
void memory_model::write_back(unsigned pu, unsigned depth, line_addr line) {
  const chain_t& ch = chains_[pu];
  if (depth == ch.len) {
    ++memory_[pu].writebacks;
    return;
  }
  cache_array& c = caches_[ch.ids[depth]];
  if (c.set_dirty_if_present(line)) return;
  if (fetch_on_writeback_miss_) {
    c.lookup(line, false, true);  // counted as the load pycachesim makes of it
    bool coherence = false;
    fetch(pu, depth + 1, line, false, coherence);
  }
  fill(pu, depth, line, true, false);
}

// ---- The walk compiled for a geometry -----------------------------------------------------------------------
//
// The walk above, step for step, for a chain whose length and set layouts are known at compile time: the
// loops over the chain unrolled, each cache's operations with their rows at constant offsets
// (cache_array's V). The general walk reads the layout of every set it looks at and dispatches each set
// operation on its vectors, and with its stores through byte pointers the compiler reloads all of that after
// every store; here nothing is read but the set itself. heat 1024 x 512 x 10 on the 4 x Opteron 8380 (its
// L2 16-way, L3 48-way): src/sim/README.md, "Speed".

namespace {
template <unsigned D, unsigned... V>
constexpr unsigned vectors_at() {
  constexpr unsigned v[] = {V...};
  return v[D];
}
}  // namespace

// What one fixed walk reads of the model, copied into locals once: the chain's caches and their coherence
// units, which the compiler then keeps in registers (the stores into a set's byte rows may alias any member).
template <unsigned N>
struct memory_model::fixed_walk_state {
  unsigned pu;
  line_addr line;                   // the walk's line (walk_line_)
  std::uint64_t* mask;              // its directory mask once looked up (walk_mask_)
  std::uint8_t unit_ends;
  std::array<cache_array*, N> cache;
  std::array<std::uint32_t, N> id;
};

template <unsigned... V>
[[gnu::always_inline]] inline access_result memory_model::walk_fixed(unsigned pu, line_addr line, bool is_write) {
  constexpr unsigned n = sizeof...(V);
  const chain_t& ch = chains_[pu];
  fixed_walk_state<n> w;
  w.pu = pu;
  w.line = line;
  w.mask = nullptr;
  w.unit_ends = ch.unit_ends;
  for (unsigned d = 0; d < n; ++d) {
    w.id[d] = ch.ids[d];
    w.cache[d] = &caches_[ch.ids[d]];
  }
  access_result r;
  const unsigned depth = fetch_fixed<0, V...>(w, line, is_write, r.coherence_miss);
  walk_mask_ = w.mask;
  return finish_walk(pu, line, is_write, depth, r);
}

template <unsigned... V>
access_result memory_model::access_fixed(unsigned pu, line_addr line, bool is_write) {
  return walk_fixed<V...>(pu, line, is_write);
}

template <unsigned... V>
std::uint64_t memory_model::access_run_fixed(unsigned pu, line_addr first, line_addr last, line_addr step,
                                             unsigned shift, bool is_write, region_result& counts, double* latencies) {
  // The lambda inlined too: left to GCC it was a call a line, 36 instructions more (heat, callgrind).
  const auto walk = [&](line_addr l) __attribute__((always_inline)) { return walk_fixed<V...>(pu, l >> shift, is_write); };
  return walk_run(first, last, step, sizeof...(V), counts, latencies, walk);
}

// fetch() from depth D: looks here, else below (memory past the chain), then fills here.
template <unsigned D, unsigned... V>
[[gnu::always_inline]] inline unsigned memory_model::fetch_fixed(fixed_walk_state<sizeof...(V)>& w, line_addr line,
                                                                 bool is_write, bool& coherence) {
  if constexpr (D == sizeof...(V)) {
    read_memory(w.pu, line);
    return D;
  } else {
    constexpr unsigned vd = vectors_at<D, V...>();
    cache_array& c = *w.cache[D];
    const int way = c.lookup<vd>(line, is_write, !is_write || lru_on_write_hit_);
    if (way >= 0) {
      if (is_write) c.set_dirty<vd>(line, way);
      return D;
    }
    coherence |= way == cache_array::coherence_miss;
    // The level below serves a read; a write allocates here after fetching the line (is_write only at D 0).
    const unsigned served = fetch_fixed<D + 1, V...>(w, line, false, coherence);
    fill_fixed<D, V...>(w, line, is_write, true);
    return served;
  }
}

// fill() at depth D.
template <unsigned D, unsigned... V>
[[gnu::always_inline]] inline void memory_model::fill_fixed(fixed_walk_state<sizeof...(V)>& w, line_addr line,
                                                            bool dirty, bool fetched) {
  const std::uint32_t id = w.id[D];
  const cache_array::victim v = w.cache[D]->template insert<vectors_at<D, V...>()>(line, dirty);
  if (coherent_) {
    if (!fetched || line != w.line) {
      directory_add(id, directory_.find_or_insert(line));
    } else if (w.unit_ends & (1u << D)) {
      if (!w.mask) w.mask = directory_.find_or_insert(line);
      directory_add(id, w.mask);
    }
  }
  if (!v.valid) return;
  if (coherent_) directory_remove(id, v.line);
  if (v.dirty) write_back_fixed<D + 1, V...>(w, v.line);
}

// write_back() to depth D.
template <unsigned D, unsigned... V>
[[gnu::always_inline]] inline void memory_model::write_back_fixed(fixed_walk_state<sizeof...(V)>& w, line_addr line) {
  if constexpr (D == sizeof...(V)) {
    ++memory_[w.pu].writebacks;
  } else {
    constexpr unsigned vd = vectors_at<D, V...>();
    cache_array& c = *w.cache[D];
    if (c.set_dirty_if_present<vd>(line)) return;
    if (fetch_on_writeback_miss_) {
      c.lookup<vd>(line, false, true);
      bool coherence = false;
      fetch_fixed<D + 1, V...>(w, line, false, coherence);
    }
    fill_fixed<D, V...>(w, line, true, false);
  }
}

// The geometries a walk is compiled for: chains of one to three caches, each with a power-of-two count of
// sets, the last of 5 to 64 ways, a middle one of 5 to 16, the first of 1 to 16; every PU's chain with the
// same layouts. DESIGN §4's machines with or without their L1s: the Opterons' 2-way L1, 16-way L2 and 48- or
// 40-way L3, the Xeon Gold 6130's 8-, 16- and 11-way L1, L2 and L3. Either replacement mode.
template <unsigned... V>
memory_model::fixed_walks memory_model::fixed_walks_of() {
  return {&memory_model::access_fixed<V...>, &memory_model::access_run_fixed<V...>};
}

memory_model::fixed_walks memory_model::fixed_walks_for_geometry() const {
  if (chains_.empty()) return {};
  const unsigned len = chains_[0].len;
  std::array<unsigned, max_chain> v{};
  for (const chain_t& ch : chains_) {
    if (ch.len != len) return {};
    for (unsigned d = 0; d < len; ++d) {
      const unsigned here = caches_[ch.ids[d]].fixed_vectors();
      if (here == 0 || (&ch != &chains_[0] && here != v[d])) return {};
      v[d] = here;
    }
  }
  // The last cache's layout, for chains whose nearer caches are `Near...`.
  const auto last = [&](auto near) -> fixed_walks {
    return [&]<unsigned... Near>(std::integer_sequence<unsigned, Near...>) -> fixed_walks {
      switch (v[len - 1]) {
        case 1: return fixed_walks_of<Near..., 1>();
        case 2: return fixed_walks_of<Near..., 2>();
        case 3: return fixed_walks_of<Near..., 3>();
        case 4: return fixed_walks_of<Near..., 4>();
        default: return {};
      }
    }(near);
  };
  constexpr unsigned small = cache_array::kSmallSet;
  if (len == 1) return last(std::integer_sequence<unsigned>{});
  if (len == 2 && v[0] == 1) return last(std::integer_sequence<unsigned, 1>{});
  if (len == 2 && v[0] == small) return last(std::integer_sequence<unsigned, small>{});
  if (len == 3 && v[0] == 1 && v[1] == 1) return last(std::integer_sequence<unsigned, 1, 1>{});
  if (len == 3 && v[0] == small && v[1] == 1) return last(std::integer_sequence<unsigned, small, 1>{});
  return {};
}

[[gnu::always_inline]] inline void memory_model::read_memory(unsigned pu, line_addr line) {
  const unsigned here = numa_of_pu_[pu];
  unsigned home = here;
  if (num_numa_ > 1) {
    const std::uint64_t page = line >> page_line_shift_;
    last_page& last = last_page_[pu];
    if (last.page != page) {  // a stream asks the map once per page, not once per line
      std::uint32_t placed = pages_.node_of(page);
      if (placed == page_map::none) {
        if (params_.numa == numa_policy::interleave) {
          placed = static_cast<std::uint32_t>(page % num_numa_);
        } else {
          placed = here;  // first touch
          pages_.place(page, placed);
        }
      }
      last = {page, placed};
    }
    home = last.node;
  }
  last_remote_ = home != here;
  last_memory_ns_ = mem_latency_[here * num_numa_ + home];
  if (last_remote_) ++memory_[pu].remote;
  else ++memory_[pu].local;
}

// ---- Coherence ---------------------------------------------------------------------------------------------

inline void memory_model::directory_add(std::uint32_t instance, std::uint64_t* mask) {
  const std::uint32_t u = unit_of_[instance];
  mask[u / 64] |= std::uint64_t{1} << (u % 64);
}

[[gnu::always_inline]] inline void memory_model::directory_remove(std::uint32_t instance, line_addr line) {
  const std::uint32_t u = unit_of_[instance];
  if (unit_first_[u + 1] - unit_first_[u] > 1)  // another private level of the core may still hold it
    for (std::uint32_t k = unit_first_[u]; k < unit_first_[u + 1]; ++k)
      if (unit_members_[k] != instance && caches_[unit_members_[k]].find(line) >= 0) return;
  if (std::uint64_t* mask = directory_.find(line)) mask[u / 64] &= ~(std::uint64_t{1} << (u % 64));
}

[[gnu::always_inline]] inline bool memory_model::held_outside_chain(unsigned pu, const std::uint64_t* mask) const {
  const unsigned words = directory_.words();
  const std::uint64_t* mine = &chain_units_[std::size_t{pu} * words];
  for (unsigned w = 0; w < words; ++w)
    if (mask[w] & ~mine[w]) return true;
  return false;
}

// With the cache's layout constants where it has them (cache_array's V), as the walks look up lines.
[[gnu::always_inline]] inline void memory_model::invalidate_in(std::uint32_t instance, line_addr line) {
  cache_array& c = caches_[instance];
  switch (vectors_of_[instance]) {
    case 1: c.invalidate<1>(line); return;
    case 2: c.invalidate<2>(line); return;
    case 3: c.invalidate<3>(line); return;
    case 4: c.invalidate<4>(line); return;
    case cache_array::kSmallSet: c.invalidate<cache_array::kSmallSet>(line); return;
    default: c.invalidate(line); return;
  }
}

// A write by pu: every copy outside its chain goes (write-invalidate); their next miss is a coherence miss.
[[gnu::always_inline]] inline void memory_model::invalidate_others(unsigned pu, line_addr line, std::uint64_t* mask) {
  const unsigned words = directory_.words();
  const std::uint64_t* mine = &chain_units_[std::size_t{pu} * words];
  for (unsigned w = 0; w < words; ++w) {
    const std::uint64_t others = mask[w] & ~mine[w];
    mask[w] &= mine[w];
    for (std::uint64_t bits = others; bits; bits &= bits - 1) {
      const unsigned v = w * 64 + static_cast<unsigned>(__builtin_ctzll(bits));
      for (std::uint32_t k = unit_first_[v]; k < unit_first_[v + 1]; ++k) invalidate_in(unit_members_[k], line);
    }
  }
}

// ---- Regions, placement, reports ---------------------------------------------------------------------------

region_result memory_model::access_region(unsigned pu, std::uint64_t addr, std::size_t bytes, access_kind kind) {
  region_result r;
  r.pu = pu;
  if (bytes == 0) return r;
  const bool is_write = kind != access_kind::read;
  const line_addr first = addr >> line_shift_, last = (addr + bytes - 1) >> line_shift_;
  access_run(pu, first, last, 1, 0, is_write, r, nullptr);
  r.lines = last - first + 1;
  return r;
}

std::uint64_t memory_model::access_run(unsigned pu, line_addr first, line_addr last, line_addr step, unsigned shift,
                                       bool is_write, region_result& counts, double* latencies) {
  if (fixed_run_) return (this->*fixed_run_)(pu, first, last, step, shift, is_write, counts, latencies);
  return walk_run(first, last, step, chains_[pu].len, counts, latencies,
                  [&](line_addr l) { return access(pu, l >> shift, is_write); });
}

double memory_model::region_cost_ns(const region_result& r, unsigned concurrent_streams, double memory_rate_cap) const {
  if (r.lines == 0) return 0;
  const chain_t& ch = chains_[r.pu];
  const double streams = std::max(1u, concurrent_streams);
  const double line = static_cast<double>(line_bytes());
  double t = r.lead_latency_ns;
  for (unsigned d = 0; d < ch.len; ++d) {
    if (!r.served[d]) continue;
    const instance_info& in = info_[ch.ids[d]];
    double bw = params_.level[in.level].bw;
    const double shared = params_.level[in.level].shared_bw;
    if (in.shared && shared > 0) bw = std::min(bw, shared / streams);
    t += static_cast<double>(r.served[d]) * line / bw;
  }
  const double node_share = std::min(params_.dram_node_bw / streams, memory_rate_cap);
  const double local_bw = std::min(params_.dram_core_bw, node_share);
  // Little's law: as many lines in flight per core, each waiting the remote latency.
  const double remote_bw = std::min(params_.dram_core_bw * params_.dram_local_ns / params_.dram_remote_ns, node_share);
  t += static_cast<double>(r.served[ch.len]) * line / local_bw;
  t += static_cast<double>(r.served[ch.len + 1]) * line / remote_bw;
  return std::min(t, r.latency_sum_ns);
}

// region_cost_ns is at least its lead latency, which is some line's, plus each level's lines at its bandwidth,
// and at most the sum of its lines' latencies: each term is at least the fastest level's. The 0.99 leaves room
// for the rounding of the double sums (relative errors of about lines x 1e-16).
double memory_model::region_cost_floor_ns(std::uint64_t lines) const {
  if (!(floor_line_ns_ > 0)) {  // once: the geometry and parameters never change
    double fastest_ns = std::numeric_limits<double>::infinity(), widest_bw = params_.dram_core_bw;
    for (double ns : latency_of_) fastest_ns = std::min(fastest_ns, ns);
    for (double ns : mem_latency_) fastest_ns = std::min(fastest_ns, ns);
    for (const instance_info& in : info_) widest_bw = std::max(widest_bw, params_.level[in.level].bw);
    floor_lead_ns_ = fastest_ns;
    floor_line_ns_ = static_cast<double>(line_bytes()) / widest_bw;
  }
  const double n = static_cast<double>(lines);
  return 0.99 * std::min(floor_lead_ns_ + n * floor_line_ns_, n * floor_lead_ns_);
}

void memory_model::place(std::uint64_t addr, std::size_t bytes, unsigned node) {
  if (bytes == 0) return;
  if (node >= num_numa_)
    throw config_error("memory_model::place: node " + std::to_string(node) + "; the topology has NUMA nodes 0 to " +
                       std::to_string(num_numa_ - 1));
  bool moved = params_.numa == numa_policy::interleave;  // a PU's last page holds an unplaced page's node there
  for (std::uint64_t p = addr >> page_shift_; p <= (addr + bytes - 1) >> page_shift_; ++p) {
    moved |= pages_.node_of(p) != page_map::none;
    pages_.place(p, node);
  }
  // A PU's last page may name a page that moved; under first touch one that had no node is no PU's last
  // page (unplace forgets them all), so placing new pages, one per fresh page touched, costs no pass over
  // the PUs.
  if (moved) last_page_.assign(last_page_.size(), last_page{});
}

void memory_model::unplace(const std::vector<std::uint64_t>& pages) {
  for (std::uint64_t p : pages) pages_.unplace(p);
  last_page_.assign(last_page_.size(), last_page{});
}

std::uint32_t memory_model::home_of(std::uint64_t addr) const {
  const std::uint64_t page = addr >> page_shift_;
  if (num_numa_ == 1) return 0;
  const std::uint32_t n = pages_.node_of(page);
  if (n == page_map::none && params_.numa == numa_policy::interleave) return static_cast<std::uint32_t>(page % num_numa_);
  return n;
}

bool memory_model::place_if_new(std::uint64_t page, unsigned node) {
  if (pages_.node_of(page) != page_map::none) return false;
  pages_.place(page, node);  // no PU's last page can be this one: it had no node
  return true;
}

std::vector<unsigned> memory_model::chain(unsigned pu) const {
  return std::vector<unsigned>(chains_[pu].ids.begin(), chains_[pu].ids.begin() + chains_[pu].len);
}

void memory_model::reset_counters() {
  for (cache_array& c : caches_) c.counts = cache_counters{};
  for (memory_counters& m : memory_) m = memory_counters{};
}

std::string memory_model::summary() const {
  std::ostringstream os;
  os << "preset " << params_.preset << ";";
  // One entry per kind of cache: a level whose instances differ (an XML topology may give one core a smaller
  // L2) lists each kind with its count; grouped by name alone, it gave all of them the last one's geometry.
  std::map<std::tuple<std::string, std::uint64_t, unsigned, bool>, unsigned> kinds;
  for (const instance_info& in : info_) ++kinds[{in.name, in.bytes, in.ways, in.shared}];
  for (const auto& [kind, count] : kinds)
    os << " " << count << " x " << std::get<0>(kind) << " " << bytes_text(std::get<1>(kind)) << " "
       << std::get<2>(kind) << "-way" << (std::get<3>(kind) ? " shared" : "") << ",";
  os << " " << line_bytes() << " B lines; " << num_numa_ << (num_numa_ == 1 ? " NUMA node" : " NUMA nodes");
  return os.str();
}

}  // namespace roost::sim
