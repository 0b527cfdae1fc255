// roost-cachesim: replays an access trace through the simulator's memory model (src/sim) and prints per-cache
// hits, misses and evictions as JSON with the replay speed. The geometry is a topology (ROOST_TOPOLOGY's
// syntax) or explicit levels, nearest first. tools/tests/test_cachesim.py compares it with pycachesim.
//
//   roost-cachesim --level size=32KiB,ways=8 --level size=1MiB,ways=16 --mode pycachesim --trace t.txt
//   roost-cachesim --topology "pack:4 l3:1(size=22MiB) l2:16(size=1MiB) l1d:1(size=32KiB) core:1 pu:1"
//                  --generate random --count 50000000 --footprint 1GiB --pus 64
//
// Trace: one access per line, "R|W ADDRESS SIZE [PU]" (L and S are read as R and W; the address decimal
// or 0x-hex; '#' starts a comment). An access covering several lines accesses each of them.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "platform/parse_decimal.hpp"
#include "roost/errors.hpp"
#include "sim/sharded_model.hpp"
#include "topology/topology.hpp"

namespace {

using roost::config_error;
using namespace roost::sim;

struct record {
  std::uint64_t addr;
  std::uint32_t size;
  std::uint16_t pu;
  bool write;
};

const char* kUsage =
    "usage: roost-cachesim (--topology DESC | --level size=BYTES,ways=N [--level ...] [--line BYTES])\n"
    "                      [--params 'name=value ...'] [--mode roost|pycachesim] [--pu N]\n"
    "                      (--trace FILE|- | --generate random|stream --count N [--footprint BYTES]\n"
    "                       [--write-fraction F] [--seed S] [--pus N])\n"
    "  --topology   an hwloc synthetic description or XML file, as ROOST_TOPOLOGY; '' for this machine\n"
    "  --level      one private cache, nearest first: size (bytes, or with KiB/MiB/GiB) and ways; a machine of\n"
    "               one PU (--topology for several); its ways win over --params, which may not set them too\n"
    "  --params     the memory model's parameters (src/sim/README.md); --mode sets mode=; may be given more\n"
    "               than once (the lists add up); every other option once\n"
    "  --trace      lines 'R|W ADDRESS SIZE [PU]'; PU defaults to --pu (0)\n"
    "  --generate   random: SIZE-8 accesses at random 8-byte-aligned addresses of the footprint (default 1GiB);\n"
    "               stream: one access per line, round-robin over --pus PUs, each PU in order through its own\n"
    "               part of the footprint (its lines split evenly, a remainder unused), wrapping within it;\n"
    "               --write-fraction of them writes (default 0.3), --seed the generator's seed (default 1)\n";

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "roost-cachesim: %s\n%s", why.c_str(), kUsage);
  std::exit(2);
}
// What a trace file holds is not a usage mistake: the one line, without the usage text.
[[noreturn]] void trace_error(const std::string& why) {
  std::fprintf(stderr, "roost-cachesim: %s\n", why.c_str());
  std::exit(2);
}

// `in_trace`: a field of a trace's line, whose mistake is the file's (trace_error), not the command's.
std::uint64_t parse_u64(const std::string& s, const std::string& what, bool in_trace = false) {
  auto fail = [in_trace](const std::string& why) { in_trace ? trace_error(why) : usage_error(why); };
  if (s.empty()) fail(what + "='': must be a non-negative integer");
  char* end = nullptr;
  errno = 0;
  // Decimal, or hex after 0x: base 0 also read a leading 0 as octal (0200 was 128, and 09 an error).
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const unsigned long long x = std::strtoull(s.c_str() + (hex ? 2 : 0), &end, hex ? 16 : 10);
  if (*end == '\0' && errno == ERANGE && s[0] != '-')
    fail(what + "='" + s + "': too large; must be an integer in [0, 18446744073709551615] (decimal or 0x-hex)");
  if (*end != '\0' || errno == ERANGE || s[0] == '-' || s[0] == '+' || s[0] == ' ')
    fail(what + "='" + s + "': must be a non-negative integer (decimal or 0x-hex)");
  return x;
}

// Bytes, with an optional unit B, KiB, MiB, GiB (or K, M, G).
std::uint64_t parse_bytes(const std::string& s, const std::string& what) {
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  const std::string unit = s.substr(digits);
  unsigned shift = 0;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K" || unit == "KiB" || unit == "kiB") shift = 10;
  else if (unit == "M" || unit == "MiB") shift = 20;
  else if (unit == "G" || unit == "GiB") shift = 30;
  else usage_error(what + "='" + s + "': must be bytes with an optional unit KiB, MiB or GiB");
  if (digits == 0) usage_error(what + "='" + s + "': must be bytes with an optional unit KiB, MiB or GiB");
  const std::uint64_t x = parse_u64(s.substr(0, digits), what);
  if (x > (std::uint64_t{1} << 40) >> shift) usage_error(what + "='" + s + "': must be at most 1 TiB");
  return x << shift;
}

cache_spec parse_level(const std::string& text, int index, unsigned pus) {
  cache_spec c;
  c.level = index + 1;
  c.name = roost::topo::cache_level_name(static_cast<unsigned>(c.level));
  std::stringstream ss(text);
  std::string item;
  const std::string what = "--level '" + text + "'";
  bool have_size = false, have_ways = false;
  std::uint64_t ways = 0;  // checked before it is narrowed: ways=4294967298 was taken as 2 ways
  while (std::getline(ss, item, ',')) {
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if ((key == "size" && std::exchange(have_size, true)) || (key == "ways" && std::exchange(have_ways, true)))
      usage_error(what + ": " + key + " is given twice; give it once");
    if (key == "size") c.bytes = parse_bytes(value, what + " size");
    else if (key == "ways") ways = parse_u64(value, what + " ways");
    else usage_error(what + ": unknown item '" + item + "'; valid: size=BYTES, ways=N");
  }
  // Each missing or wrong item named on its own, as every other option's error is.
  if (!have_size) usage_error(what + ": needs size=BYTES (at least one line)");
  if (!have_ways) usage_error(what + ": needs ways=N (1 to 1024)");
  if (c.bytes == 0) usage_error(what + " size=0: must be at least one line");
  if (ways == 0 || ways > 1024) usage_error(what + " ways=" + std::to_string(ways) + ": must be 1 to 1024");
  c.ways = static_cast<unsigned>(ways);
  if (c.level > max_cache_level) usage_error("at most " + std::to_string(max_cache_level) + " --level options");
  for (unsigned p = 0; p < pus; ++p) c.pus.push_back(p);
  return c;
}

std::vector<record> read_trace(std::istream& in, const std::string& name, unsigned default_pu, unsigned pus) {
  std::vector<record> out;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream ls(line);
    std::string op, addr, size, pu;
    if (!(ls >> op)) continue;
    const std::string where = name + ":" + std::to_string(number);
    if (!(ls >> addr >> size)) trace_error(where + ": '" + line + "': must be 'R|W ADDRESS SIZE [PU]'");
    ls >> pu;
    if (std::string extra; ls >> extra) trace_error(where + ": '" + line + "': unexpected '" + extra + "'; must be 'R|W ADDRESS SIZE [PU]'");
    record r{};
    if (op == "R" || op == "r" || op == "L" || op == "l") r.write = false;
    else if (op == "W" || op == "w" || op == "S" || op == "s") r.write = true;
    else trace_error(where + ": operation '" + op + "': must be R or W (L or S)");
    r.addr = parse_u64(addr, where + ": address", true);
    if (r.addr >= (std::uint64_t{1} << 56)) trace_error(where + ": address " + addr + " must be below 2^56");
    const std::uint64_t sz = parse_u64(size, where + ": size", true);
    if (sz == 0 || sz > (std::uint64_t{1} << 30)) trace_error(where + ": size " + size + " must be 1 to 2^30 bytes");
    // The whole access, not only its start: one of 1 GiB from just under 2^56 walked 16 million lines above
    // it (an outside-user campaign).
    if (r.addr + sz > (std::uint64_t{1} << 56))
      trace_error(where + ": the access at " + addr + " of " + size + " bytes must end at or below 2^56");
    r.size = static_cast<std::uint32_t>(sz);
    const std::uint64_t p = pu.empty() ? default_pu : parse_u64(pu, where + ": PU", true);
    if (p >= pus) trace_error(where + ": PU " + pu + " must be below " + std::to_string(pus));
    r.pu = static_cast<std::uint16_t>(p);
    out.push_back(r);
  }
  return out;
}

std::vector<record> generate(const std::string& kind, std::uint64_t count, std::uint64_t footprint, double write_fraction,
                             std::uint64_t seed, unsigned pus, std::size_t line) {
  std::vector<record> out;
  out.reserve(count);
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution is_write(write_fraction);
  if (kind == "random") {
    std::uniform_int_distribution<std::uint64_t> word(0, footprint / 8 - 1);
    for (std::uint64_t i = 0; i < count; ++i)
      out.push_back({word(rng) * 8, 8, static_cast<std::uint16_t>(i % pus), is_write(rng)});
  } else {
    // Each PU streams through its own part of the footprint, as a parallel loop's chunks do.
    const std::uint64_t lines = footprint / line, per_pu = std::max<std::uint64_t>(1, lines / pus);
    for (std::uint64_t i = 0; i < count; ++i) {
      const unsigned pu = static_cast<unsigned>(i % pus);
      const std::uint64_t l = pu * per_pu + (i / pus) % per_pu;
      out.push_back({l * line, static_cast<std::uint32_t>(line), static_cast<std::uint16_t>(pu), is_write(rng)});
    }
  }
  return out;
}

// The process's CPU time: the replay's speed when other work shares the cores (wall time is printed too).
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void print_json(const sharded_model& m, std::uint64_t records, std::uint64_t lines, double seconds, double cpu) {
  std::printf("{\n  \"geometry\": \"%s\",\n  \"mode\": \"%s\",\n", m.summary().c_str(),
              m.params().mode == replacement_mode::pycachesim ? "pycachesim" : "roost");
  std::printf("  \"shards\": %u,\n", m.shards());
  std::printf("  \"trace_records\": %" PRIu64 ",\n  \"line_accesses\": %" PRIu64 ",\n", records, lines);
  std::printf("  \"seconds\": %.6f,\n  \"line_accesses_per_second\": %.0f,\n", seconds, seconds > 0 ? lines / seconds : 0.0);
  std::printf("  \"cpu_seconds\": %.6f,\n  \"line_accesses_per_cpu_second\": %.0f,\n", cpu, cpu > 0 ? lines / cpu : 0.0);
  std::printf("  \"caches\": [\n");
  for (std::size_t i = 0; i < m.num_instances(); ++i) {
    const auto& in = m.instance(i);
    const cache_counters& c = m.counters(i);
    std::printf("    {\"instance\": %zu, \"name\": \"%s\", \"level\": %d, \"size\": %zu, \"ways\": %u, \"sets\": %" PRIu64
                ", \"shared\": %s, \"pus\": [",
                i, in.name.c_str(), in.level, in.bytes, in.ways, in.sets, in.shared ? "true" : "false");
    for (std::size_t k = 0; k < in.pus.size(); ++k) std::printf("%s%u", k ? ", " : "", in.pus[k]);
    std::printf("],\n     \"accesses\": %" PRIu64 ", \"hits\": %" PRIu64 ", \"write_hits\": %" PRIu64 ", \"misses\": %" PRIu64
                ", \"coherence_misses\": %" PRIu64 ", \"evictions\": %" PRIu64 ", \"writebacks\": %" PRIu64
                ", \"invalidations\": %" PRIu64 "}%s\n",
                c.accesses, c.hits, c.write_hits, c.misses, c.coherence_misses, c.evictions, c.writebacks, c.invalidations,
                i + 1 < m.num_instances() ? "," : "");
  }
  memory_counters mem;
  for (unsigned p = 0; p < m.num_pus(); ++p) {
    mem.local += m.memory(p).local;
    mem.remote += m.memory(p).remote;
    mem.writebacks += m.memory(p).writebacks;
  }
  std::printf("  ],\n  \"memory\": {\"local\": %" PRIu64 ", \"remote\": %" PRIu64 ", \"writebacks\": %" PRIu64 "}\n}\n",
              mem.local, mem.remote, mem.writebacks);
}

int run(int argc, char** argv) {
  std::optional<std::string> topology, trace, gen;
  std::vector<std::string> levels;
  std::string params, mode;
  std::uint64_t line = 64, count = 0, footprint = std::uint64_t{1} << 30, seed = 1, pus = 1, pu = 0;
  double write_fraction = 0.3;
  std::vector<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    // An option given twice: the last one won without a word (--mode roost --mode pycachesim ran pycachesim).
    // --level names one cache each time, --params adds its pairs to the ones before.
    if (a.rfind("--", 0) == 0 && a != "--level" && a != "--params") {
      if (std::find(seen.begin(), seen.end(), a) != seen.end()) usage_error(a + " is given twice; give it once");
      seen.push_back(a);
    }
    if (a == "--topology") topology = value();
    else if (a == "--level") levels.push_back(value());
    else if (a == "--line") line = parse_bytes(value(), "--line");
    else if (a == "--params") {
      const std::string v = value();
      if (v.find_first_not_of(" ,\t\n\r") == std::string::npos)
        usage_error("--params '" + v + "': names no parameter; give name=value pairs (src/sim/README.md)");
      // Joined by a comma: an empty pair at either end of one --params stays one (an end comma was lost).
      if (!params.empty()) params += ',';
      params += v;
    } else if (a == "--mode") {
      const std::string given = value();
      mode = given;
      for (char& ch : mode) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));  // words: any case
      if (mode != "roost" && mode != "pycachesim") usage_error("--mode '" + given + "': must be roost or pycachesim");
    }
    else if (a == "--pu") pu = parse_u64(value(), "--pu");
    else if (a == "--trace") trace = value();
    else if (a == "--generate") gen = value();
    else if (a == "--count") count = parse_u64(value(), "--count");
    else if (a == "--footprint") footprint = parse_bytes(value(), "--footprint");
    else if (a == "--seed") seed = parse_u64(value(), "--seed");
    else if (a == "--pus") pus = parse_u64(value(), "--pus");
    else if (a == "--write-fraction") {
      // Read as the settings read numbers (parse_decimal: no hexadecimal, no '+', no spaces); a '-' is refused
      // before it: "-0" was taken for 0.
      const std::string v = value();
      const auto [end, ec] = roost::platform::parse_decimal(v.data(), v.data() + v.size(), write_fraction);
      if (v.empty() || v[0] == '-' || ec != std::errc() || end != v.data() + v.size() ||
          !(write_fraction >= 0 && write_fraction <= 1))
        usage_error("--write-fraction '" + v + "': must be a number in [0, 1]");
    } else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      usage_error("unknown option '" + a + "'");
    }
  }
  if (topology.has_value() == !levels.empty()) usage_error("give either --topology or --level (one or more)");
  if (!levels.empty() && pus != 1)
    usage_error("--pus " + std::to_string(pus) + ": must be 1 with --level, which describes one PU's private "
                "caches; give --topology for a machine of several PUs");
  if (!levels.empty()) {  // a level's ways come from its --level: the same parameter in --params would be lost
    std::string lower_params = params;
    for (char& ch : lower_params) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (std::size_t k = 1; k <= levels.size(); ++k) {
      std::string name(1, 'l');  // "l1.ways" (not "l" + std::to_string(k): GCC 12 warns -Wrestrict falsely)
      name += std::to_string(k);
      name += ".ways";
      if (lower_params.find(name) != std::string::npos)
        usage_error("--params sets " + name + ", which --level '" + levels[k - 1] + "' sets: give it in one place");
    }
  }
  if (trace.has_value() == gen.has_value()) usage_error("give either --trace or --generate");
  if (!mode.empty()) {
    if (param_overrides::parse(params, "--params").has("mode"))
      usage_error("--mode " + mode + " and --params mode=...: both set the replacement mode; give it in one place");
    params += " mode=" + mode;
  }
  // An option the chosen input does not read is an error, not dropped (--pu with --generate sent every access
  // to PU 0; --line with --topology kept the topology's line).
  const auto given = [&](const char* opt) {
    for (int i = 1; i < argc; ++i)
      if (std::strcmp(argv[i], opt) == 0) return true;
    return false;
  };
  const char* why_unread = nullptr;
  for (const char* opt : {"--count", "--footprint", "--seed", "--pus", "--write-fraction"})
    if (trace && given(opt)) why_unread = opt;
  if (why_unread) usage_error(std::string(why_unread) + " is read with --generate, not with --trace");
  if (gen && given("--pu")) usage_error("--pu is read with --trace (the PU of a line that names none); --generate spreads its accesses over --pus");
  if (topology && given("--line")) usage_error("--line is read with --level; a --topology gives its own line size");

  // The simulator's walk as two host threads make it: two shards by line where the geometry splits
  // (sharded_model.hpp), each line in turn (a single line is walked on this thread), unless --params says
  // host_threads=1.
  if (!param_overrides::parse(params, "--params").has("host_threads")) params = "host_threads=2 " + params;
  const param_overrides overrides = param_overrides::parse(params, "--params");
  std::optional<sharded_model> model;
  if (topology) {
    const roost::topo::topology tp = roost::topo::topology::load(*topology, "--topology");
    model.emplace(hierarchy_spec::from_topology(tp), overrides.resolve(&tp));
  } else {
    hierarchy_spec spec;
    spec.source = "--level";
    spec.line_bytes = line;
    // The line size is --line's: the geometry's checks name spec.source, which said --level for it.
    if (line == 0 || line > 4096 || (line & (line - 1)) != 0)
      usage_error("--line " + std::to_string(line) + ": must be a power of two from 1 to 4096 bytes");
    spec.num_pus = 1;  // --level is one PU's chain (--pus is checked above)
    for (std::size_t k = 0; k < levels.size(); ++k) spec.caches.push_back(parse_level(levels[k], static_cast<int>(k), spec.num_pus));
    // An lN.* pair for a level no --level gives would change nothing (l2.ways with one --level was taken).
    std::vector<int> given_levels;
    for (const cache_spec& c : spec.caches) given_levels.push_back(c.level);
    overrides.check_levels(given_levels, "the --level geometry");
    model.emplace(spec, overrides.resolve(nullptr));
  }
  const unsigned num_pus = model->num_pus();
  if (pu >= num_pus) usage_error("--pu " + std::to_string(pu) + ": must be below " + std::to_string(num_pus));
  if (pus == 0 || pus > num_pus)
    usage_error("--pus " + std::to_string(pus) + ": must be 1 to " + std::to_string(num_pus) + " (the topology's PUs)");

  std::vector<record> records;
  if (trace) {
    if (*trace == "-") {
      records = read_trace(std::cin, "stdin", static_cast<unsigned>(pu), num_pus);
    } else {
      if (std::filesystem::is_directory(*trace)) usage_error("--trace '" + *trace + "': a directory, not a trace file");
      std::error_code ec;
      const bool regular = std::filesystem::is_regular_file(*trace, ec);
      std::ifstream in(*trace);  // a pipe (<(...), /dev/stdin) is read as it comes, as with "-"
      if (!in) usage_error("--trace '" + *trace + "': cannot open: " + std::strerror(errno));
      // The binary trace ROOST_TRACE writes is an easy mix-up: it was read as text, up to a control byte. Looked
      // for in a regular file only, which can be read again from its start.
      if (regular) {
        char magic[8] = {};
        in.read(magic, sizeof magic);
        if (in.gcount() == sizeof magic && std::string(magic, sizeof magic) == "ROOSTTRC")
          usage_error("--trace '" + *trace + "': a roost task trace (ROOST_TRACE, read by roost-analyze), not an "
                      "access trace; give lines of R|W ADDRESS SIZE [PU]");
        in.clear();
        in.seekg(0);
      }
      records = read_trace(in, *trace, static_cast<unsigned>(pu), num_pus);
    }
  } else {
    if (*gen != "random" && *gen != "stream") usage_error("--generate '" + *gen + "': must be random or stream");
    if (count == 0)
      usage_error(given("--count") ? "--count 0: must be above 0 (the accesses --generate makes)"
                                   : "--generate needs --count N (N > 0)");
    const std::uint64_t line = model->line_bytes();
    if (footprint < line)
      usage_error("--footprint " + std::to_string(footprint) + ": must be at least one line (" + std::to_string(line) +
                  " bytes)");
    if (*gen == "random" && footprint < 8)
      usage_error("--footprint " + std::to_string(footprint) + ": must be at least 8 bytes: random accesses are 8-byte words");
    // Each PU streams through a part of its own (generate): a footprint of fewer lines than PUs gave each PU a
    // line anyway, more lines than the footprint holds (an outside-user campaign).
    if (*gen == "stream" && footprint / line < pus)
      usage_error("--footprint " + std::to_string(footprint) + ": " + std::to_string(footprint / line) + " line(s) for " +
                  std::to_string(pus) + " PUs (--pus); stream gives each PU a part of its own: at least " +
                  std::to_string(pus * line) + " bytes");
    // The records are held before the replay (24 bytes each): a count this machine cannot hold is refused
    // here, where reserving it aborted in std::length_error or std::bad_alloc.
    constexpr std::uint64_t kMostRecords = std::uint64_t{1} << 32;
    if (count > kMostRecords)
      usage_error("--count " + std::to_string(count) + ": at most " + std::to_string(kMostRecords) +
                  " (the records are held in memory before the replay)");
    records = generate(*gen, count, footprint, write_fraction, seed, static_cast<unsigned>(pus), model->line_bytes());
  }

  const unsigned shift = static_cast<unsigned>(__builtin_ctzll(model->line_bytes()));
  std::uint64_t lines = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  for (const record& r : records) {
    const line_addr first = r.addr >> shift, last = (r.addr + r.size - 1) >> shift;
    for (line_addr l = first; l <= last; ++l) model->access(r.pu, l, r.write);
    lines += last - first + 1;
  }
  const double cpu = cpu_seconds() - cpu0;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  print_json(*model, records.size(), lines, seconds, cpu);
  // The JSON is the only output: one that standard output could not take (a full disk) is a failure.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "roost-cachesim: cannot write the results to standard output (%s)\n",
                 std::strerror(errno ? errno : EIO));
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const config_error& e) {
    std::fprintf(stderr, "roost-cachesim: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "roost-cachesim: the trace or the model does not fit in this machine's memory; give "
                         "a smaller --count or smaller caches\n");
    return 2;
  }
}
