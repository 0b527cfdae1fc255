#include "sim/sim_params.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

#include "api/closest_name.hpp"
#include "platform/parse_decimal.hpp"
#include "roost/errors.hpp"
#include "topology/topology.hpp"

namespace roost::sim {

namespace {

// ---- The presets ---------------------------------------------------------------------------------------
// Every number's source is in src/sim/README.md ("Where the defaults come from"); the short form is here.
// Latencies in cycles are converted at the machine's nominal clock. Bandwidths are estimates (README).

level_params lv(unsigned ways, double latency_ns, double bw, double shared_bw) {
  return level_params{ways, latency_ns, bw, shared_bw};
}

// Seed 003's machine: 4 x Intel Xeon Gold 6130 (Skylake-SP, 16 cores, 2.1 GHz), 32 KiB L1D and 1 MiB L2 per
// core, 22 MiB L3 per socket (1.375 MiB x 16 slices).
sim_params xeon_gold_6130() {
  sim_params p;
  p.preset = "xeon-gold-6130";
  constexpr double ghz = 2.1;
  p.level[1] = lv(8, 4 / ghz, 64 * ghz, 0);     // 8-way [Intel OptRef]; 4 cycles [AnandTech 11544]
  p.level[2] = lv(16, 14 / ghz, 32 * ghz, 0);   // 16-way [Intel OptRef]; 14 cycles [AnandTech 11544]
  p.level[3] = lv(11, 26, 15 * ghz, 0);         // 11-way [Intel OptRef]; 25-27 ns [AnandTech 11544]; sliced: no shared limit
  p.level[4] = lv(16, 40, 8, 0);                // no L4: the generic value
  p.dram_local_ns = 89;                         // 2-socket Xeon SP, local node [qdpma]
  p.dram_remote_ns = 139;                       // same, remote node; 4 sockets on 3 UPI links are all one hop
  p.dram_core_bw = 12;                          // estimate: ~10 line fill buffers x 64 B / 89 ns + prefetch
  p.dram_node_bw = 100;                         // estimate: 6 x DDR4-2666 = 128 GB/s peak, ~80% sustained
  p.link_bw = 44;                               // estimate: 3 UPI links x 20.8 GB/s each way [Intel Xeon SP], ~70%
  return p;
}

// Seed 000's machine: 4 x AMD Opteron 8380 ("Shanghai", K10, 4 cores, 2.5 GHz), 64 KiB L1D and 512 KiB L2
// per core, 6 MiB L3 per socket.
sim_params opteron_8380() {
  sim_params p;
  p.preset = "opteron-8380";
  constexpr double ghz = 2.5;
  p.level[1] = lv(2, 3 / ghz, 32 * ghz, 0);      // 2-way, 3 cycles [AMD SOG 10h]
  p.level[2] = lv(16, 16 / ghz, 16 * ghz, 0);    // 16-way [AMD SOG 10h]; 16 cycles [AnandTech 2978, K10 Opteron 2435]
  p.level[3] = lv(48, 56 / ghz, 8 * ghz, 16 * ghz);  // 48-way [AMD SOG 10h]; 56 cycles [AnandTech 2978]
  p.level[4] = lv(16, 40, 8, 0);
  p.dram_local_ns = 100;                         // 4-socket Family 10h [McCalpin 2010]
  p.dram_remote_ns = 130;                        // 2 hops: 130% of local [AMD 40555, Fig. 4]
  p.dram_core_bw = 5;                            // estimate: 8 outstanding misses x 64 B / 100 ns
  p.dram_node_bw = 9;                            // estimate: 2 x DDR2-800 = 12.8 GB/s peak, ~70% sustained
  p.link_bw = 17;                                // estimate: 3 coherent HT links x 8.8 GB/s each way (HT 3.0, 4.4 GT/s x 16 bits), ~65%
  return p;
}

// Seed 002's machine: 4 x AMD Opteron 6172 ("Magny-Cours", two 6-core K10 dies per package = 8 NUMA nodes,
// 2.1 GHz), 64 KiB L1D and 512 KiB L2 per core, 6 MiB L3 per die of which 1 MiB holds the HT Assist probe
// filter: 5 MiB and 40 of 48 ways visible (seed 002, Fig. 1).
sim_params opteron_6172() {
  sim_params p;
  p.preset = "opteron-6172";
  constexpr double ghz = 2.1;
  p.level[1] = lv(2, 3 / ghz, 32 * ghz, 0);      // [AMD SOG 10h]; 3 cycles [AnandTech 2978, Opteron 6174]
  p.level[2] = lv(16, 16 / ghz, 16 * ghz, 0);    // 16 cycles [AnandTech 2978, Opteron 6174]
  p.level[3] = lv(40, 57 / ghz, 8 * ghz, 16 * ghz);  // 57 cycles [AnandTech 2978, Opteron 6174]
  p.level[4] = lv(16, 40, 8, 0);
  p.dram_local_ns = 98;                          // [AnandTech 2978, Opteron 6174]
  p.dram_remote_ns = 127;                        // 2 hops: 130% of local [AMD 40555]; average ~1.19 [Conway 2010]
  p.dram_core_bw = 6;                            // estimate: 8 outstanding misses x 64 B / 98 ns, DDR3
  p.dram_node_bw = 14;                           // estimate: 2 x DDR3-1333 = 21.3 GB/s peak per die, ~65%
  p.link_bw = 10;                                // estimate: a die's HT 3.0 links (6.4 GT/s: one x16, two x8 = 25.6 GB/s each way), ~40% left to data after probes and 2-hop forwarding
  return p;
}

// Any other machine: the Skylake-SP figures with power-of-two associativities, so that the usual cache sizes
// (1 MiB, 32 MiB, ...) divide into sets.
sim_params generic() {
  sim_params p = xeon_gold_6130();
  p.preset = "generic";
  p.level[3].ways = 16;
  return p;
}

struct preset_entry {
  const char* name;
  sim_params (*make)();
  std::size_t l2_bytes, l3_bytes;  // what detect_preset matches
};

const preset_entry kPresets[] = {
    {"generic", generic, 0, 0},
    {"opteron-8380", opteron_8380, 512 * 1024, 6 * 1024 * 1024},
    {"xeon-gold-6130", xeon_gold_6130, 1024 * 1024, 22 * 1024 * 1024},
    {"opteron-6172", opteron_6172, 512 * 1024, 5 * 1024 * 1024},
};

// ---- Parsing ---------------------------------------------------------------------------------------------

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

enum class kind { preset, mode, numa, page_size, ways, latency, bw, shared_bw, threads, sharing, settle };

struct param_name {
  std::string name;
  kind k;
  int level;  // 1..4 for cache parameters, 0 for dram.* and the others
  const char* valid;
};

const char* kNumber = "a number in (0, 1e6]";

const std::vector<param_name>& names() {
  // Never destroyed: a simulated runtime may be made or destroyed during static destruction.
  static const std::vector<param_name>& all = *new std::vector<param_name>([] {
    std::vector<param_name> v;
    v.push_back({"preset", kind::preset, 0, "auto, generic, opteron-8380, xeon-gold-6130 or opteron-6172"});
    v.push_back({"mode", kind::mode, 0, "roost or pycachesim"});
    v.push_back({"numa_policy", kind::numa, 0, "first_touch or interleave"});
    v.push_back({"page_size", kind::page_size, 0,
                 "a power of two from 64 B to 1 GiB, in bytes or with a unit KiB, MiB or GiB (K, M, G)"});
    for (int l = 1; l <= max_cache_level; ++l) {
      std::string p(1, 'l');  // "l3." (not "l" + std::to_string(...): topology.hpp, cache_level_name)
      p += std::to_string(l);
      p += '.';
      v.push_back({p + "ways", kind::ways, l, "an integer in [1, 1024]"});
      v.push_back({p + "latency_ns", kind::latency, l, kNumber});
      v.push_back({p + "bw", kind::bw, l, kNumber});
      v.push_back({p + "shared_bw", kind::shared_bw, l, "a number in [0, 1e6] (0: no shared limit)"});
    }
    v.push_back({"dram.local_ns", kind::latency, 0, kNumber});
    v.push_back({"dram.remote_ns", kind::latency, 0, kNumber});
    v.push_back({"dram.core_bw", kind::bw, 0, kNumber});
    v.push_back({"dram.node_bw", kind::bw, 0, kNumber});
    v.push_back({"dram.sharing", kind::sharing, 0,
                 "off (each touch is the only stream) or nodes (concurrent streams share the controllers and links)"});
    v.push_back({"link.bw", kind::shared_bw, 0, "a number in [0, 1e6] (0: no link limit)"});
    v.push_back({"host_threads", kind::threads, 0, "auto, 1 or 2 (the host threads that walk the model; results do not depend on it)"});
    v.push_back({"settle", kind::settle, 0,
                 "lazy or at_touch (when a touch's cost is waited for; results do not depend on it)"});
    return v;
  }());
  return all;
}

const param_name* find_name(const std::string& n) {
  for (const param_name& p : names())
    if (p.name == n) return &p;
  return nullptr;
}

bool parse_double(const std::string& s, double& out) {
  const char* b = s.data();
  const char* e = b + s.size();
  auto [ptr, ec] = platform::parse_decimal(b, e, out);
  // "-0" is refused: no parameter here takes a negative value (as every setting refuses it, options.cpp).
  return ec == std::errc() && ptr == e && std::isfinite(out) && !std::signbit(out);
}

bool parse_unsigned(const std::string& s, unsigned long long& out) {
  const char* b = s.data();
  const char* e = b + s.size();
  auto [ptr, ec] = std::from_chars(b, e, out);
  return ec == std::errc() && ptr == e;
}

// Bytes with an optional unit (KiB/K, MiB/M, GiB/G, any case); 0 when not valid.
std::size_t parse_bytes(const std::string& s) {
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  unsigned long long x = 0;
  if (digits == 0 || !parse_unsigned(s.substr(0, digits), x)) return 0;
  std::string unit = lower(s.substr(digits));
  unsigned shift = 0;
  if (unit.empty() || unit == "b") shift = 0;
  else if (unit == "k" || unit == "kib") shift = 10;
  else if (unit == "m" || unit == "mib") shift = 20;
  else if (unit == "g" || unit == "gib") shift = 30;
  else return 0;
  if (x > (std::size_t{1} << 40) >> shift) return 0;
  return static_cast<std::size_t>(x) << shift;
}

// Checks `value` for `p`; throws naming the source, the name, the value and what is valid.
void check_value(const std::string& source, const param_name& p, const std::string& value) {
  auto bad = [&]() {
    throw config_error(source + ": '" + p.name + "=" + value + "': " + p.name + " must be " + p.valid);
  };
  double d = 0;
  unsigned long long u = 0;
  switch (p.k) {
    case kind::preset: {
      std::string v = lower(value);
      if (v == "auto") return;
      for (const auto& e : kPresets)
        if (v == e.name) return;
      bad();
      return;
    }
    case kind::mode:
      if (lower(value) != "roost" && lower(value) != "pycachesim") bad();
      return;
    case kind::numa:
      if (lower(value) != "first_touch" && lower(value) != "interleave") bad();
      return;
    case kind::page_size: {
      std::size_t b = parse_bytes(value);
      if (b < 64 || b > (std::size_t{1} << 30) || (b & (b - 1)) != 0) bad();
      return;
    }
    case kind::ways:
      if (!parse_unsigned(value, u) || u < 1 || u > 1024) bad();
      return;
    case kind::latency:
    case kind::bw:
      if (!parse_double(value, d) || !(d > 0) || d > 1e6) bad();
      return;
    case kind::shared_bw:
      if (!parse_double(value, d) || d < 0 || d > 1e6) bad();
      return;
    case kind::threads:
      if (lower(value) != "auto" && value != "1" && value != "2") bad();
      return;
    case kind::sharing:
      if (lower(value) != "off" && lower(value) != "nodes") bad();
      return;
    case kind::settle:
      if (lower(value) != "lazy" && lower(value) != "at_touch") bad();
      return;
  }
}

void set_value(sim_params& s, const param_name& p, const std::string& value) {
  double d = 0;
  unsigned long long u = 0;
  const std::string& n = p.name;
  switch (p.k) {
    case kind::preset:
      return;  // chosen before the values are applied
    case kind::mode:
      s.mode = lower(value) == "pycachesim" ? replacement_mode::pycachesim : replacement_mode::roost;
      return;
    case kind::numa:
      s.numa = lower(value) == "interleave" ? numa_policy::interleave : numa_policy::first_touch;
      return;
    case kind::page_size:
      s.page_bytes = parse_bytes(value);
      return;
    case kind::threads:
      s.host_threads = lower(value) == "auto" ? 0 : static_cast<unsigned>(value[0] - '0');
      return;
    case kind::sharing:
      s.dram_sharing = lower(value) == "nodes";
      return;
    case kind::settle:
      s.lazy_settle = lower(value) == "lazy";
      return;
    case kind::ways:
      parse_unsigned(value, u);
      s.level[p.level].ways = static_cast<unsigned>(u);
      return;
    case kind::latency:
    case kind::bw:
    case kind::shared_bw:
      parse_double(value, d);
      if (p.level > 0) {
        level_params& l = s.level[p.level];
        (p.k == kind::latency ? l.latency_ns : p.k == kind::bw ? l.bw : l.shared_bw) = d;
      } else if (n == "dram.local_ns") {
        s.dram_local_ns = d;
      } else if (n == "dram.remote_ns") {
        s.dram_remote_ns = d;
      } else if (n == "dram.core_bw") {
        s.dram_core_bw = d;
      } else if (n == "link.bw") {
        s.link_bw = d;
      } else {
        s.dram_node_bw = d;
      }
      return;
  }
}

}  // namespace

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string>& v = *new std::vector<std::string>([] {  // never destroyed
    std::vector<std::string> r{"auto"};
    for (const auto& e : kPresets) r.push_back(e.name);
    return r;
  }());
  return v;
}

sim_params preset_params(const std::string& name) {
  std::string n = lower(name);
  for (const auto& e : kPresets)
    if (n == e.name) return e.make();
  throw config_error("sim preset '" + name + "': must be one of generic, opteron-8380, xeon-gold-6130, opteron-6172");
}

std::string detect_preset(const topo::topology& tp) {
  std::size_t l2 = 0, l3 = 0;
  for (const topo::node& n : tp.nodes()) {
    if (n.kind != topo::node_kind::cache) continue;
    if (n.cache_level == 2) l2 = n.cache_bytes;
    if (n.cache_level == 3) l3 = n.cache_bytes;
  }
  for (const auto& e : kPresets)
    if (e.l2_bytes != 0 && e.l2_bytes == l2 && e.l3_bytes == l3) return e.name;
  return "generic";
}

bool is_param_name(const std::string& name) { return find_name(lower(name)) != nullptr; }

std::vector<std::string> param_names() {
  std::vector<std::string> v;
  for (const param_name& p : names()) v.push_back(p.name);
  return v;
}

std::string describe_param_names() {
  std::ostringstream os;
  for (const param_name& p : names()) os << "  " << p.name << ": " << p.valid << "\n";
  return os.str();
}

param_overrides param_overrides::parse(const std::string& text, const std::string& source) {
  param_overrides o;
  o.source_ = source;
  std::string token;
  std::set<std::string> seen;
  auto flush = [&]() {
    if (token.empty()) return;
    std::size_t eq = token.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == token.size())
      throw config_error(source + ": '" + token + "': must be name=value; valid names:\n" + describe_param_names());
    std::string name = lower(token.substr(0, eq));
    std::string value = token.substr(eq + 1);
    const param_name* p = find_name(name);
    if (!p)
      throw config_error(source + ": unknown parameter '" + token.substr(0, eq) + "' in '" + token + "'; " +
                         roost::detail::did_you_mean(name, names(), &param_name::name) + "valid names:\n" +
                         describe_param_names());
    // Twice, the last one won without a word (roost-cachesim --params; ROOST_SIM_PARAMS refuses it first).
    if (!seen.insert(name).second)
      throw config_error(source + ": '" + token.substr(0, eq) + "' is given twice; give each parameter once");
    check_value(source, *p, value);
    if (p->k == kind::preset) o.preset_ = lower(value);
    else o.values_.emplace_back(name, value);
    token.clear();
  };
  // Spaces and commas separate pairs; a comma with no pair on one side of it names nothing, and is refused
  // as ROOST_SIM_PARAMS refuses it: a pair may have been lost there.
  bool pair_since_comma = false, comma_open = false;
  auto empty_pair = [&] {
    throw config_error(source + ": '" + text + "': an empty pair (a comma with nothing between it and the next "
                       "comma or the end of the list); must be name=value pairs separated by commas or spaces");
  };
  for (char c : text) {
    if (c == ' ' || c == ',' || c == '\n' || c == '\t' || c == '\r') {
      if (!token.empty()) pair_since_comma = true;
      flush();
      if (c == ',') {
        if (!pair_since_comma) empty_pair();
        pair_since_comma = false;
        comma_open = true;
      }
    } else {
      token += c;
      comma_open = false;
    }
  }
  flush();
  if (comma_open) empty_pair();
  return o;
}

bool param_overrides::has(const std::string& name) const {
  const std::string n = lower(name);
  if (n == "preset") return preset_ != "auto";
  return std::any_of(values_.begin(), values_.end(), [&](const auto& v) { return v.first == n; });
}

void param_overrides::apply(sim_params& p) const {
  for (const auto& [name, value] : values_) {
    set_value(p, *find_name(name), value);
    p.overridden.push_back(name);
  }
  if (!values_.empty()) p.overrides_source = source_or("the sim parameters");
  if (p.dram_remote_ns < p.dram_local_ns) {
    auto given = [&](const char* n) {
      for (const auto& v : values_)
        if (v.first == n) return true;
      return false;
    };
    auto from = [&](const char* n) { return given(n) ? "" : " (the preset's)"; };
    std::ostringstream os;
    os << source_or("sim parameters") << ": dram.remote_ns=" << p.dram_remote_ns
       << from("dram.remote_ns") << " is below dram.local_ns=" << p.dram_local_ns << from("dram.local_ns")
       << "; the remote latency must be at least the local one";
    throw config_error(os.str());
  }
}

void param_overrides::check_without_topology() const {
  if (preset_ != "auto") {
    (void)resolve(nullptr);
    return;
  }
  int dram_given = 0;
  for (const auto& v : values_) dram_given += v.first == "dram.local_ns" || v.first == "dram.remote_ns";
  if (dram_given == 2) {
    sim_params p = preset_params("generic");
    apply(p);  // both latencies are the given ones
  }
}

void param_overrides::check_levels(const std::vector<int>& levels, const std::string& machine) const {
  for (const auto& v : values_) {
    if (v.first.size() < 3 || v.first[0] != 'l' || v.first[2] != '.') continue;
    const int level = v.first[1] - '0';
    if (std::find(levels.begin(), levels.end(), level) != levels.end()) continue;
    std::ostringstream have;
    for (int l : levels) have << (have.tellp() > 0 ? ", " : "") << "L" << l;
    throw config_error(source_or("sim parameters") + ": " + v.first + "=" +
                       v.second + ": " + machine + " has no L" + std::to_string(level) +
                       " cache, so nothing would read it; its caches: " + have.str());
  }
}

sim_params param_overrides::resolve(const topo::topology* tp) const {
  if (tp) {  // the machine's cache levels: an lN.* pair for another level would change nothing
    std::vector<int> levels;
    for (const auto& n : tp->nodes())
      if (n.kind == topo::node_kind::cache && std::find(levels.begin(), levels.end(), n.cache_level) == levels.end())
        levels.push_back(n.cache_level);
    std::sort(levels.begin(), levels.end());
    check_levels(levels, tp->named());
  }
  std::string name = preset_;
  if (name == "auto") name = tp ? detect_preset(*tp) : "generic";
  sim_params p = preset_params(name);
  apply(p);
  if (preset_ != "auto") {  // named by the parameters, not detected: an error about its values says where
    p.overridden.push_back("preset");
    p.overrides_source = source_or("the sim parameters");
  }
  return p;
}

std::string params_json(const sim_params& p) {
  std::ostringstream os;
  os.precision(17);
  os << "{\"preset\": \"" << p.preset << "\"";
  for (int l = 1; l <= max_cache_level; ++l) {
    const level_params& v = p.level[static_cast<std::size_t>(l)];
    os << ", \"l" << l << ".ways\": " << v.ways << ", \"l" << l << ".latency_ns\": " << v.latency_ns << ", \"l" << l
       << ".bw\": " << v.bw << ", \"l" << l << ".shared_bw\": " << v.shared_bw;
  }
  os << ", \"dram.local_ns\": " << p.dram_local_ns << ", \"dram.remote_ns\": " << p.dram_remote_ns
     << ", \"dram.core_bw\": " << p.dram_core_bw << ", \"dram.node_bw\": " << p.dram_node_bw
     << ", \"dram.sharing\": \"" << (p.dram_sharing ? "nodes" : "off") << "\", \"link.bw\": " << p.link_bw
     << ", \"page_size\": " << p.page_bytes << ", \"numa_policy\": \""
     << (p.numa == numa_policy::interleave ? "interleave" : "first_touch") << "\", \"mode\": \""
     << (p.mode == replacement_mode::pycachesim ? "pycachesim" : "roost") << "\"}";
  return os.str();
}

}  // namespace roost::sim
