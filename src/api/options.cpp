// Merging options with the environment, and validating both. Every error names the variable (or the
// options field), the value and what is valid: "ROOST_WORKERS='0': must be an integer in [1, 4096]".
//
// One rule for every setting, variable or string field: surrounding whitespace is trimmed; a value that is
// empty after that is an error (unset the variable, or leave the field unset, for the default); words are
// case-insensitive; numbers are plain decimals (no sign, no hex, no inner spaces) in a range the error states.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

#include "api/closest_name.hpp"
#include "api/simulation.hpp"
#include "mem/distribution.hpp"
#include "platform/fork_hold.hpp"
#include "platform/output_file.hpp"
#include "platform/parse_decimal.hpp"
#include "platform/trim_space.hpp"
#include "roost/errors.hpp"
#include "roost/memory.hpp"
#include "roost/options.hpp"
#include "sched/registry.hpp"
#include "topology/topology.hpp"

namespace roost {

namespace {

// One setting: its variable, its field, what a valid value is and what the default is.
struct setting {
  const char* env;       // "ROOST_WORKERS"
  const char* field;     // "options::workers"
  std::string valid;     // "an integer in [1, 4096]"
  const char* fallback;  // "one per PU of the topology"
};

// A value being parsed: where it came from (the variable's or the field's name), as given and trimmed.
struct source {
  std::string name;
  std::string given;
  std::string text;
};

// The value as given, with bytes that are not printable written as \xNN: a NUL inside a field's string cut
// the message there (what() is a C string), and the reason and the valid values were lost.
std::string printable(const std::string& v) {
  std::string out;
  for (unsigned char c : v) {
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

[[noreturn]] void fail(const source& s, const std::string& why) {
  throw config_error(s.name + "='" + printable(s.given) + "': " + why);
}

[[noreturn]] void invalid(const source& s, const setting& st) { fail(s, "must be " + st.valid); }

using platform::trim_space;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The setting's text: the string field when set, else the variable when set, else nothing.
std::optional<source> text_of(const setting& st, const std::optional<std::string>& field = std::nullopt) {
  source s;
  if (field) s = {st.field, *field, ""};
  else if (const char* v = std::getenv(st.env)) s = {st.env, v, ""};
  else return std::nullopt;
  s.text = trim_space(s.given);
  // Only a field can hold one (an environment value ends at its first NUL). The readers of a path or a
  // description take the text as a C string, so the rest was dropped: a topology, a profile's path, ran as
  // their part before the NUL without a word, and messages quoting the value were cut there (an outside-user
  // campaign).
  if (s.text.find('\0') != std::string::npos) fail(s, "holds a NUL byte; must be " + st.valid);
  if (s.text.empty()) {
    const std::string unset = field ? std::string("leave ") + st.field + " unset" : std::string("unset ") + st.env;
    fail(s, "empty; must be " + st.valid + " (" + unset + " for the default: " + st.fallback + ")");
  }
  return s;
}

// A typed field's value, as the source of an error.
template <class T>
source field_value(const setting& st, T v) {
  std::ostringstream os;
  os << v;
  return {st.field, os.str(), os.str()};
}

std::optional<bool> bool_word(const std::string& text) {
  std::string v = lower(text);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

bool parse_bool(const source& s, const setting& st) {
  if (auto b = bool_word(s.text)) return *b;
  invalid(s, st);
}

// Digits only, the whole text, in [lo, hi].
unsigned long long parse_integer(const source& s, const setting& st, unsigned long long lo, unsigned long long hi) {
  const char* b = s.text.data();
  const char* e = b + s.text.size();
  unsigned long long x = 0;
  auto [end, ec] = std::from_chars(b, e, x);  // no sign, no spaces, no locale
  if (ec != std::errc{} || end != e || x < lo || x > hi) invalid(s, st);
  return x;
}

// A decimal number, the whole text, in [lo, hi] (so never NaN or infinite).
double parse_number(const source& s, const setting& st, double lo, double hi) {
  const char* b = s.text.data();
  const char* e = b + s.text.size();
  double x = 0;
  auto [end, ec] = platform::parse_decimal(b, e, x);  // unlike strtod: no leading spaces, no '+', no locale's comma
  // "-0" is refused where no negative value is valid, as the integer settings refuse it (it resolved to -0),
  // and the simulator's parameters too; the error says why, as 0 itself is in the range.
  if (ec == std::errc{} && end == e && x == 0 && lo >= 0 && std::signbit(x))
    fail(s, "must be " + st.valid + ", written without a sign");
  if (ec != std::errc{} || end != e || !(x >= lo && x <= hi)) invalid(s, st);
  return x;
}

constexpr std::size_t kMinStack = 64 * 1024;
constexpr std::size_t kMaxStack = std::size_t{1} << 30;
// A thread's default (8 MiB): a recursion that runs serially runs under every scheduler, including those
// whose joins run children on the waiter's stack (ws-help, cats). Reserved, not committed (ult/stack.hpp).
constexpr std::size_t kDefaultStack = std::size_t{8} << 20;

// Bytes, with an optional K, M or G suffix (either case), in [kMinStack, kMaxStack].
std::size_t parse_stack_size(const source& s, const setting& st) {
  std::string digits = s.text;
  std::size_t mult = 1;
  switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
    case 'K': mult = std::size_t{1} << 10; break;
    case 'M': mult = std::size_t{1} << 20; break;
    case 'G': mult = std::size_t{1} << 30; break;
  }
  if (mult != 1) digits.pop_back();
  unsigned long long x = parse_integer({s.name, s.given, digits}, st, 0, kMaxStack / mult);
  std::size_t bytes = static_cast<std::size_t>(x) * mult;
  if (bytes < kMinStack) invalid(s, st);
  return bytes;
}

// A duration: a decimal number and a unit (ns, us, ms, s), in [lo_ns, hi_ns] nanoseconds.
std::uint64_t parse_duration_ns(const source& s, const setting& st, std::uint64_t lo_ns, std::uint64_t hi_ns) {
  const std::string t = lower(s.text);
  // The unit is the text's end (the number may have an exponent: 1e3us, as numbers do where fractions are).
  static constexpr struct {
    const char* name;
    double ns;
  } kUnits[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};  // two-letter units before "s"
  double scale = 0;
  std::size_t unit = 0;
  for (const auto& u : kUnits) {
    const std::size_t n = std::char_traits<char>::length(u.name);
    if (t.size() > n && t.compare(t.size() - n, n, u.name) == 0) {
      scale = u.ns;
      unit = t.size() - n;
      break;
    }
  }
  if (scale == 0) invalid(s, st);
  const double x = parse_number({s.name, s.given, t.substr(0, unit)}, st, 0, 1e18) * scale;
  if (!(x >= static_cast<double>(lo_ns) && x <= static_cast<double>(hi_ns))) invalid(s, st);
  return static_cast<std::uint64_t>(std::llround(x));
}

std::string scheduler_names() {
  std::string all;
  for (const auto& e : sched::registry()) all += (all.empty() ? "" : ", ") + std::string(e.name);
  return all;
}

void check_scheduler(const source& s, const std::string& name) {
  for (const auto& e : sched::registry()) {
    if (name == e.name) {
      if (e.available) return;
      fail(s, std::string("the ") + e.name + " scheduler is not implemented yet (planned in " + e.planned_in +
                  "); available: " + sched::available_names());
    }
  }
  fail(s, "unknown scheduler; " + detail::did_you_mean(name, sched::registry(), &sched::entry::name) +
              "valid names: " + scheduler_names() + " (available in this build: " + sched::available_names() + ")");
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A file the runtime will write (a trace, a report, a profile): not a directory, and in one that exists, so
// that a path that cannot be written is a start-up error whatever the scheduler and platform, not a
// surprise at the end (or, where nothing writes it in this run, no error at all).
void check_file_path(const source& s, const std::string& valid) {
  if (is_directory(s.text)) fail(s, "a directory; must be " + valid);
  // A name ending in '/' that is no directory yet was called "a directory" too (an outside-user campaign).
  if (s.text.back() == '/') fail(s, "ends in '/', a directory's name; must be " + valid);
  const std::size_t slash = s.text.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : s.text.substr(0, slash);
  if (!is_directory(dir)) {
    // What is wrong with it: a regular file where the directory should be was said not to exist (an
    // outside-user campaign).
    struct stat st;
    if (::stat(dir.c_str(), &st) == 0) fail(s, "'" + dir + "', where its directory should be, is not a directory; must be " + valid);
    const int err = errno;
    fail(s, "its directory '" + dir + "' " +
                (err == ENOENT ? std::string("does not exist") : "cannot be used (" + std::string(std::strerror(err)) + ")") +
                "; must be " + valid);
  }
  // A device or a named pipe, whether or not this platform and scheduler write the file (configuration.md:
  // every setting is checked wherever it is given; /dev/null was taken natively and refused under sim).
  if (const std::string kind = platform::not_a_regular_file(s.text); !kind.empty())
    fail(s, kind + ", not a regular file; must be " + valid);
}

}  // namespace

namespace {
resolved_options resolve_settings(const options& o) {
  resolved_options r;
  const std::string max_w = std::to_string(max_workers);

  const setting scheduler{"ROOST_SCHED", "options::scheduler", "a scheduler name: " + scheduler_names(), "ws"};
  r.scheduler = "ws";
  if (auto s = text_of(scheduler, o.scheduler)) {
    r.scheduler = lower(s->text);
    check_scheduler(*s, r.scheduler);
  }

  const setting workers{"ROOST_WORKERS", "options::workers", "an integer in [1, " + max_w + "]",
                        "one per PU of the topology"};
  if (o.workers) {
    if (*o.workers == 0 || *o.workers > max_workers) invalid(field_value(workers, *o.workers), workers);
    r.workers = *o.workers;
    r.workers_source = workers.field;
  } else if (auto s = text_of(workers)) {
    r.workers = static_cast<unsigned>(parse_integer(*s, workers, 1, max_workers));
  }  // else 0: one per PU, filled in once the topology is known

  // Checked further by topo::topology::load: its size before hwloc builds it, then what hwloc reads.
  const setting topology{"ROOST_TOPOLOGY", "options::topology",
                         "an hwloc synthetic description such as 'pack:2 l3:1(size=1MiB) core:1 pu:1' or a path "
                         "to an hwloc XML export (lstopo-no-graphics --of xml), of at most " + max_w + " PUs",
                         "this machine"};
  if (auto s = text_of(topology, o.topology)) {
    r.topology = s->text;
    r.topology_source = s->name;
  }

  const setting bind{"ROOST_BIND", "options::bind", "one of true, false, 1, 0, yes, no, on, off", "true"};
  if (o.bind) r.bind = *o.bind;
  else if (auto s = text_of(bind)) r.bind = parse_bool(*s, bind);

  const setting stack{"ROOST_STACK_SIZE", "options::stack_size",
                      "a size in [64K, 1G] bytes (65536 .. 1073741824): an integer with an optional K, M or G "
                      "suffix",
                      "8M"};
  r.stack_size = kDefaultStack;
  if (o.stack_size) {
    // The field is a byte count: the suffixes of the variable's text do not apply to it.
    if (*o.stack_size < kMinStack || *o.stack_size > kMaxStack)
      fail(field_value(stack, *o.stack_size), "must be a size in [64K, 1G] bytes (65536 .. 1073741824)");
    r.stack_size = *o.stack_size;
  } else if (auto s = text_of(stack)) {
    r.stack_size = parse_stack_size(*s, stack);
  }

  const setting verbose{"ROOST_VERBOSE", "options::verbose", "one of true, false, 1, 0, yes, no, on, off", "false"};
  if (o.verbose) r.verbose = *o.verbose;
  else if (auto s = text_of(verbose)) r.verbose = parse_bool(*s, verbose);

  const setting adws{"ROOST_ADWS_STEAL", "options::adws_steal",
                     "one of true, false (or 1, 0, yes, no, on, off), auto (keep whichever makes the iterations "
                     "faster)",
                     "auto"};
  if (o.adws_steal) {
    const adws_stealing v = *o.adws_steal;
    // An enum field can still hold any value of its type (a cast): only the three named ones are valid.
    if (v != adws_stealing::off && v != adws_stealing::on && v != adws_stealing::adaptive)
      fail(field_value(adws, static_cast<int>(v)),
           "must be adws_stealing::off, adws_stealing::on or adws_stealing::adaptive");
    r.adws_steal = v;
  } else if (auto s = text_of(adws)) {
    if (lower(s->text) == "auto") r.adws_steal = adws_stealing::adaptive;
    else r.adws_steal = parse_bool(*s, adws) ? adws_stealing::on : adws_stealing::off;
  }

  const setting cab_level{"ROOST_CAB_LEVEL", "options::cab_level",
                          "an integer in [0, 64] (tasks at that spawn depth and above are inter-socket; the root "
                          "is 0)",
                          "from the topology"};
  if (o.cab_level) {
    if (*o.cab_level > 64) invalid(field_value(cab_level, *o.cab_level), cab_level);
    r.cab_level = *o.cab_level;
  } else if (auto s = text_of(cab_level)) {
    r.cab_level = static_cast<unsigned>(parse_integer(*s, cab_level, 0, 64));
  }

  const setting subtrees{"ROOST_CAB_SUBTREES", "options::cab_one_subtree",
                         "one of one (a socket runs one intra-socket subtree at a time, seed 000's policy), many",
                         "one"};
  if (o.cab_one_subtree) {
    r.cab_one_subtree = *o.cab_one_subtree;
  } else if (auto s = text_of(subtrees)) {
    std::string x = lower(s->text);
    if (x != "one" && x != "many") invalid(*s, subtrees);
    r.cab_one_subtree = x == "one";
  }

  const setting intensity{"ROOST_CATS_MIN_INTENSITY", "options::cats_min_intensity",
                          "a number in [0, 1e9] (bytes of footprint per worker-nanosecond)", "0.05"};
  if (o.cats_min_intensity) {
    if (*o.cats_min_intensity == 0 && std::signbit(*o.cats_min_intensity))
      fail(field_value(intensity, *o.cats_min_intensity), "must be " + intensity.valid + ", and -0.0 is not 0");
    if (!(*o.cats_min_intensity >= 0 && *o.cats_min_intensity <= 1e9))
      invalid(field_value(intensity, *o.cats_min_intensity), intensity);
    r.cats_min_intensity = *o.cats_min_intensity;
  } else if (auto s = text_of(intensity)) {
    r.cats_min_intensity = parse_number(*s, intensity, 0, 1e9);
  }

  const setting profile{"ROOST_CATS_PROFILE", "options::cats_profile", "a file path to write cats's profile to", "none"};
  if (auto s = text_of(profile, o.cats_profile)) {
    check_file_path(*s, profile.valid);
    r.cats_profile = s->text;
    r.cats_profile_source = s->name;
  }

  const setting vicinity{"ROOST_NUMA_VICINITY", "options::numa_vicinity",
                         "an integer in [1, 4096] (nodes a numa worker steals from, its own first) or all", "all"};
  if (o.numa_vicinity) {
    // "all" is options::numa_vicinity_all: an unset field meant it too, but then the variable could overrule it.
    if (*o.numa_vicinity == options::numa_vicinity_all) r.numa_vicinity = 0;
    else if (*o.numa_vicinity == 0 || *o.numa_vicinity > 4096)
      fail(field_value(vicinity, *o.numa_vicinity),
           "must be an integer in [1, 4096] (nodes a numa worker steals from, its own first) or "
           "options::numa_vicinity_all");
    else r.numa_vicinity = *o.numa_vicinity;
  } else if (auto s = text_of(vicinity)) {
    r.numa_vicinity = lower(s->text) == "all" ? 0 : static_cast<unsigned>(parse_integer(*s, vicinity, 1, 4096));
  }

  const setting deal{"ROOST_NUMA_DEAL", "options::numa_deal",
                     "one of writes (the declared bytes a task writes, whatever their size), footprint (every "
                     "declared byte, above the LLC's share of a core: seed 002 Algorithm 1)",
                     "writes"};
  if (auto s = text_of(deal, o.numa_deal)) {
    std::string x = lower(s->text);
    if (x != "footprint" && x != "writes") invalid(*s, deal);
    r.numa_deal_writes = x == "writes";
  }

  const setting distribution{"ROOST_DATA_DISTRIBUTION", "options::data_distribution",
                             "one of standard (first touch), fine (pages round-robin over the nodes), coarse (each "
                             "allocation on one node, round-robin)",
                             "standard"};
  // A default the program set in code (set_default_distribution) overrides the variable as a field does: the
  // allocator does not read it then, and a runtime refused a bad one all the same (an outside-user campaign).
  // A valid one is kept, for describe() to say that it is not used.
  const bool default_in_code = !o.data_distribution && detail::default_distribution_set_in_code();
  if (auto s = text_of(distribution, o.data_distribution)) {
    std::string x = lower(s->text);
    const bool valid = x == "standard" || x == "fine" || x == "coarse";
    if (!valid && !default_in_code) invalid(*s, distribution);
    if (valid) {
      r.data_distribution = x;
      r.data_distribution_source = s->name;
    }
  }

  std::string platform_name = "ROOST_PLATFORM";  // where the platform was set: what the preemption error names
  const setting platform{"ROOST_PLATFORM", "options::platform",
                          "one of native (this machine), sim (the simulated platform, virtual time)", "native"};
  if (auto s = text_of(platform, o.platform)) {
    std::string x = lower(s->text);
    if (x != "native" && x != "sim") invalid(*s, platform);
    r.simulated = x == "sim";
    platform_name = s->name;
  }
  const setting seed{"ROOST_SIM_SEED", "options::sim_seed", "an integer in [0, 18446744073709551615]", "1"};
  if (o.sim_seed) r.sim_seed = *o.sim_seed;
  else if (auto s = text_of(seed)) r.sim_seed = parse_integer(*s, seed, 0, ~0ull);
  const setting report{"ROOST_SIM_REPORT", "options::sim_report", "a file path to write the report to", "none"};
  if (auto s = text_of(report, o.sim_report)) {
    check_file_path(*s, report.valid);
    r.sim_report = s->text;
    r.sim_report_source = s->name;
  }
  // Its names and values are checked here whatever the platform (a native run ignores them): the simulated
  // platform's tables say what is valid (api/simulation.cpp).
  const setting params{"ROOST_SIM_PARAMS", "options::sim_params", "name=value pairs separated by commas", "none"};
  if (auto s = text_of(params, o.sim_params)) {
    detail::check_sim_params(s->text, s->name);
    r.sim_params = s->text;
    r.sim_params_source = s->name;
  }

  const setting preempt{"ROOST_PREEMPT", "options::preempt",
                        "one of off, signal (signal-yield preemption of long-running tasks), klt "
                        "(KLT-switching: a preempted task keeps its kernel thread)", "off"};
  if (auto s = text_of(preempt, o.preempt)) {
    std::string x = lower(s->text);
    if (x != "off" && x != "signal" && x != "klt") invalid(*s, preempt);
    r.preempt = x != "off";
    r.preempt_klt = x == "klt";
    r.preempt_source = s->name;
    if (r.preempt && r.simulated)
      fail(*s, "preemption needs the native platform (" + platform_name + "=native): simulated, every worker is a "
               "user-level thread on one OS thread in virtual time, where no timer signal can interrupt a task");
  }
  const setting interval{"ROOST_PREEMPT_INTERVAL", "options::preempt_interval",
                         "a duration in [100us, 10s]: a number and a unit (ns, us, ms, s), such as 1ms or 250us",
                         "1ms"};
  if (auto s = text_of(interval, o.preempt_interval))
    r.preempt_interval_ns = parse_duration_ns(*s, interval, 100'000, 10'000'000'000ull);
  const setting timer{"ROOST_PREEMPT_TIMER", "options::preempt_timer",
                      "one of aligned (a timer per worker, their ticks evenly spaced over the interval), naive (a "
                      "timer per worker, all ticking at the same instants), chained (one timer, its tick passed "
                      "from worker to worker, only to those whose task may be stuck), cputime (a timer per worker "
                      "counting its thread's CPU time, at the kernel's tick granularity), monitor (no timer on any worker: a "
                      "thread of the runtime's own wakes every interval and signals only the workers whose task "
                      "may be stuck)",
                      "aligned"};
  if (auto s = text_of(timer, o.preempt_timer)) {
    std::string x = lower(s->text);
    if (x == "aligned") r.preempt_timer = preempt_timer_design::aligned;
    else if (x == "naive") r.preempt_timer = preempt_timer_design::naive;
    else if (x == "chained") r.preempt_timer = preempt_timer_design::chained;
    else if (x == "cputime") r.preempt_timer = preempt_timer_design::cputime;
    else if (x == "monitor") r.preempt_timer = preempt_timer_design::monitor;
    else invalid(*s, timer);
  }

  const setting trace{"ROOST_TRACE", "options::trace", "a file path to write the trace to", "no trace"};
  if (auto s = text_of(trace, o.trace)) {
    check_file_path(*s, trace.valid);
    r.trace = s->text;
    r.trace_source = s->name;
  }
  const setting depth{"ROOST_TRACE_DEPTH", "options::trace_depth", "auto, an integer in [0, 1000000] or all",
                      "auto"};
  if (auto s = text_of(depth, o.trace_depth)) {
    const std::string v = lower(s->text);
    r.trace_depth_auto = v == "auto";
    if (!r.trace_depth_auto && v != "all")
      r.trace_depth = static_cast<std::uint32_t>(parse_integer(*s, depth, 0, 1000000));
  }
  // A scheduler's own knobs, set while another one runs: read by nobody, which is documented, but nothing
  // said so where the user looks (ROOST_VERBOSE: an outside-user campaign).
  struct knob {
    const char* env;
    const char* field;
    bool field_set;
    const char* readers;  // space-separated scheduler names
  };
  const knob knobs[] = {{"ROOST_ADWS_STEAL", "options::adws_steal", o.adws_steal.has_value(), "adws adws-ml"},
                        {"ROOST_CAB_LEVEL", "options::cab_level", o.cab_level.has_value(), "cab"},
                        {"ROOST_CAB_SUBTREES", "options::cab_one_subtree", o.cab_one_subtree.has_value(), "cab"},
                        {"ROOST_CATS_MIN_INTENSITY", "options::cats_min_intensity", o.cats_min_intensity.has_value(), "cats"},
                        {"ROOST_CATS_PROFILE", "options::cats_profile", o.cats_profile.has_value(), "cats"},
                        {"ROOST_NUMA_VICINITY", "options::numa_vicinity", o.numa_vicinity.has_value(), "numa"},
                        {"ROOST_NUMA_DEAL", "options::numa_deal", o.numa_deal.has_value(), "numa"}};
  for (const knob& k : knobs) {
    const char* env = std::getenv(k.env);
    if (!k.field_set && !(env && *env)) continue;
    const std::string readers = std::string(" ") + k.readers + " ";
    if (readers.find(" " + r.scheduler + " ") != std::string::npos) continue;
    r.unread_knobs.push_back(std::string(k.field_set ? k.field : k.env) + " (read by " + k.readers + " only)");
  }
  return r;
}

// Each field set in code whose variable is set too: the variable resolved alone (the field cleared), and
// its error kept when it is the variable's. The list is every field with a variable (options.hpp).
std::vector<std::string> overridden_env_errors(const options& o) {
  struct overridable {
    const char* env;
    bool set;
    void (*clear)(options&);
  };
#define ROOST_OVERRIDABLE(env, field) overridable{env, o.field.has_value(), [](options& x) { x.field.reset(); }}
  const overridable fields[] = {
      ROOST_OVERRIDABLE("ROOST_SCHED", scheduler),           ROOST_OVERRIDABLE("ROOST_WORKERS", workers),
      ROOST_OVERRIDABLE("ROOST_TOPOLOGY", topology),         ROOST_OVERRIDABLE("ROOST_BIND", bind),
      ROOST_OVERRIDABLE("ROOST_STACK_SIZE", stack_size),     ROOST_OVERRIDABLE("ROOST_VERBOSE", verbose),
      ROOST_OVERRIDABLE("ROOST_ADWS_STEAL", adws_steal),     ROOST_OVERRIDABLE("ROOST_CAB_LEVEL", cab_level),
      ROOST_OVERRIDABLE("ROOST_CAB_SUBTREES", cab_one_subtree),
      ROOST_OVERRIDABLE("ROOST_CATS_MIN_INTENSITY", cats_min_intensity),
      ROOST_OVERRIDABLE("ROOST_CATS_PROFILE", cats_profile), ROOST_OVERRIDABLE("ROOST_NUMA_VICINITY", numa_vicinity),
      ROOST_OVERRIDABLE("ROOST_NUMA_DEAL", numa_deal),
      ROOST_OVERRIDABLE("ROOST_DATA_DISTRIBUTION", data_distribution),
      ROOST_OVERRIDABLE("ROOST_PLATFORM", platform),         ROOST_OVERRIDABLE("ROOST_SIM_SEED", sim_seed),
      ROOST_OVERRIDABLE("ROOST_SIM_REPORT", sim_report),     ROOST_OVERRIDABLE("ROOST_SIM_PARAMS", sim_params),
      ROOST_OVERRIDABLE("ROOST_PREEMPT", preempt),           ROOST_OVERRIDABLE("ROOST_PREEMPT_INTERVAL", preempt_interval),
      ROOST_OVERRIDABLE("ROOST_PREEMPT_TIMER", preempt_timer), ROOST_OVERRIDABLE("ROOST_TRACE", trace),
      ROOST_OVERRIDABLE("ROOST_TRACE_DEPTH", trace_depth)};
#undef ROOST_OVERRIDABLE
  std::vector<std::string> out;
  // The allocator's default set in code overrides ROOST_DATA_DISTRIBUTION as its field would (resolve_settings).
  if (const char* e = std::getenv("ROOST_DATA_DISTRIBUTION");
      e && !o.data_distribution && detail::default_distribution_set_in_code()) {
    try {
      (void)parse_distribution(e, "ROOST_DATA_DISTRIBUTION");
    } catch (const config_error& err) {
      out.push_back(std::string(err.what()) + " (not used: the program set the default distribution in code)");
    }
  }
  for (const overridable& f : fields) {
    if (!f.set || !std::getenv(f.env)) continue;
    options alone = o;
    f.clear(alone);
    try {
      (void)resolve_settings(alone);
    } catch (const config_error& e) {
      const std::string what = e.what();
      if (what.rfind(std::string(f.env) + "=", 0) == 0 || what.rfind(std::string(f.env) + ":", 0) == 0)
        out.push_back(what + " (not used: the program sets its options:: field)");
    }
  }
  // ROOST_TOPOLOGY's text passes resolve_settings whatever it says: loading it is its check (runtime.cpp). A
  // garbage value under options::topology went unsaid (an outside-user campaign).
  // Trimmed, as the runtime loads it; an empty one is the loop's (resolve_settings refuses it).
  if (const char* e = std::getenv("ROOST_TOPOLOGY"); e && o.topology && !trim_space(e).empty()) {
    try {
      (void)topo::topology::load(trim_space(e), "ROOST_TOPOLOGY");
    } catch (const config_error& err) {
      out.push_back(std::string(err.what()) + " (not used: the program sets its options:: field)");
    }
  }
  return out;
}
}  // namespace

// The variables the runtime reads (configuration.md's table).
constexpr const char* kRuntimeVariables[] = {
    "ROOST_SCHED",        "ROOST_WORKERS",        "ROOST_TOPOLOGY",     "ROOST_BIND",
    "ROOST_STACK_SIZE",   "ROOST_VERBOSE",        "ROOST_ADWS_STEAL",   "ROOST_CAB_LEVEL",
    "ROOST_CAB_SUBTREES", "ROOST_CATS_MIN_INTENSITY", "ROOST_CATS_PROFILE", "ROOST_NUMA_VICINITY",
    "ROOST_NUMA_DEAL",    "ROOST_DATA_DISTRIBUTION", "ROOST_PLATFORM",  "ROOST_SIM_SEED",
    "ROOST_SIM_REPORT",   "ROOST_SIM_PARAMS",     "ROOST_PREEMPT",      "ROOST_PREEMPT_INTERVAL",
    "ROOST_PREEMPT_TIMER", "ROOST_TRACE",         "ROOST_TRACE_DEPTH"};

// Variables of the environment that no part of roost reads and that look like one the runtime does: a
// misspelt one was ignored without a word (ROOST_SCHEDULER=ws-help ran ws; an outside-user campaign). Only
// likely misspellings are named, so that the variables of roost's own tools and tests (ROOST_BENCH, ...) and
// a program's own pass unremarked:
//  - within two edits of a name past a ROOST_ of any case (ROOST_WROKERS, ROOST_workers), within one before
//    it (ROST_WORKERS, XROOST_WORKERS, ROOTS_WORKERS);
//  - holding a whole name (MY_ROOST_WORKERS), or, past ROOST_, the whole of a name's own part: anywhere for
//    one of 5 letters or more, at the start for a shorter one (ROOST_BINDING for ROOST_BIND; ROOST_BIND
//    anywhere would flag ROOST_REBINDER).
// The closest name is suggested: the fewest edits, then a name held over one that is not (ROOST_TRACE_DEPHT
// is ROOST_TRACE_DEPTH's, not ROOST_TRACE's, which it holds: an outside-user campaign).
namespace {
// The note for one name of the environment, "" where it says nothing (above).
std::string misspelling_note(const std::string& name) {
  if (std::find_if(std::begin(kRuntimeVariables), std::end(kRuntimeVariables),
                   [&](const char* v) { return name == v; }) != std::end(kRuntimeVariables))
    return {};
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const bool prefixed = upper.rfind("ROOST_", 0) == 0;
  const char* best = nullptr;
  std::size_t best_distance = 3, best_edits = 0;
  for (const char* v : kRuntimeVariables) {
    const std::string known = v, tail = known.substr(6);
    const std::size_t length_gap = upper.size() > known.size() ? upper.size() - known.size() : known.size() - upper.size();
    // Above two edits only the fewest matter, and only as a tie-break between names held (a name
    // held whole, or a tail, is exactly the length gap away, so within two when the table is computed).
    const std::size_t edits = length_gap <= 2 ? detail::edit_distance_up_to(upper, known, 2) : length_gap;
    // Outside the prefix one edit only: two made HOST_TRACE, GHOST_TRACE and POST_WORKERS "misspellings"
    // (a review); within it (ROOST_WROKERS) two.
    std::size_t d = prefixed || edits <= 1 ? edits : 3;
    if (upper.find(known) != std::string::npos) d = std::min<std::size_t>(d, 2);
    if (prefixed) {
      const std::string its_tail = upper.substr(6);
      if ((tail.size() >= 5 && its_tail.find(tail) != std::string::npos) ||
          (tail.size() >= 4 && its_tail.rfind(tail, 0) == 0))
        d = std::min<std::size_t>(d, 2);
    }
    if (d < best_distance || (d == best_distance && best && edits < best_edits)) {
      best_distance = d;
      best_edits = edits;
      best = v;
    }
  }
  // The names OpenMP's and oneTBB's users type for roost's, which no edit distance finds (ROOST_NUM_THREADS
  // ran on every CPU without a word: an outside-user campaign).
  if (prefixed && !best) {
    // By whole words of the name, so that a program's own ROOST_SCORE or ROOST_SPIN_COUNT stays its own.
    const auto has_word = [&](std::initializer_list<const char*> words) {
      std::size_t from = 6;
      while (from <= upper.size()) {
        const std::size_t to = std::min(upper.find('_', from), upper.size());
        const std::string word = upper.substr(from, to - from);
        for (const char* w : words)
          if (word == w) return true;
        from = to + 1;
      }
      return false;
    };
    if (has_word({"THREAD", "THREADS", "NTHREADS", "CPU", "CPUS", "NCPUS", "CORE", "CORES", "NPROC", "NPROCS",
                  "PROCS"}))
      best = "ROOST_WORKERS";
    else if (has_word({"BIND", "AFFINITY", "PIN", "PINNING"}))
      best = "ROOST_BIND";
    else if (has_word({"SCHEDULE", "POLICY"}))
      best = "ROOST_SCHED";
  }
  if (best)
    return name + " is not a roost setting and is not read; did you mean " + best +
           "? (docs/configuration.md lists them)";
  return {};
}

// Each name's note, worked out once a process: the edit distances to every setting's name took 1.1 M
// instructions a runtime's construction, three quarters of it once hwloc's discovery was read once
// (topology.cpp). A note depends on the name alone, so a variable set since is looked at when the next
// runtime is made. At most kMaxNotedNames kept: a program that sets a variable of a new name for each run
// keeps its memory flat.
constexpr std::size_t kMaxNotedNames = 4096;
std::mutex& env_notes_mutex() {
  static std::mutex* m = new std::mutex;  // never destroyed: runtimes may be made during static destruction
  return *m;
}
__attribute__((constructor)) void watch_forks_for_env_notes() {
  platform::hold_across_forks_of<&env_notes_mutex>();
}
}  // namespace

std::vector<std::string> unknown_env_notes() {
  std::vector<std::string> out;
  const std::lock_guard<std::mutex> lk(env_notes_mutex());
  // Made under the lock, which forks hold: a static's first initialisation outside it, copied half done into
  // a child of fork(), left the child's first runtime waiting for its guard for ever (a review).
  static auto* notes = new std::unordered_map<std::string, std::string>;
  for (char** e = environ; e && *e; ++e) {
    const char* entry = *e;
    const std::string name(entry, std::strcspn(entry, "="));
    if (notes->size() >= kMaxNotedNames && !notes->count(name)) notes->clear();
    auto [at, fresh] = notes->try_emplace(name);
    if (fresh) at->second = misspelling_note(name);
    if (!at->second.empty()) out.push_back(at->second);
  }
  return out;
}

resolved_options detail::resolve_in_mode(const options& o, const int* /*build_mode: checked by the link*/) {
  resolved_options r = resolve_settings(o);
  r.overridden_env_errors = overridden_env_errors(o);
  r.unknown_env_notes = unknown_env_notes();
  // Checked whatever the platform, and then not used natively: no report was written, and nothing said why
  // (an audit: a user who forgot ROOST_PLATFORM=sim). Only the environment's: a field set in code is the
  // program's own choice.
  if (!r.simulated) {
    const std::pair<const char*, bool> sim_only[] = {{"ROOST_SIM_SEED", o.sim_seed.has_value()},
                                                     {"ROOST_SIM_REPORT", o.sim_report.has_value()},
                                                     {"ROOST_SIM_PARAMS", o.sim_params.has_value()}};
    for (const auto& [name, field_set] : sim_only)
      if (const char* v = std::getenv(name); v && *v && !field_set)
        r.unused_env_notes.push_back(std::string(name) + "='" + v + "' is not used: this runtime runs natively "
                                     "(ROOST_PLATFORM=sim or options::platform=\"sim\" simulates)");
  }
  // A depth without a trace: ROOST_TRACE_DEPTH=all with ROOST_TRACE unset traced nothing without a word (an
  // outside-user campaign). The variable is still checked, as every setting is.
  if (const char* v = std::getenv("ROOST_TRACE_DEPTH"); v && *v && !o.trace_depth && r.trace.empty())
    r.unused_env_notes.push_back(std::string("ROOST_TRACE_DEPTH='") + v + "' is not used: this runtime writes no "
                                 "trace (ROOST_TRACE or options::trace names its file)");
  // The same of preemption's interval and timer while preemption is off: under ROOST_PREEMPT=off no task is
  // preempted, not even in a preempt_as scope (roost/preempt.hpp).
  if (!r.preempt) {
    const std::pair<const char*, bool> preempt_only[] = {{"ROOST_PREEMPT_INTERVAL", o.preempt_interval.has_value()},
                                                         {"ROOST_PREEMPT_TIMER", o.preempt_timer.has_value()}};
    for (const auto& [name, field_set] : preempt_only)
      if (const char* v = std::getenv(name); v && *v && !field_set)
        r.unused_env_notes.push_back(std::string(name) + "='" + v + "' is not used: preemption is off (" +
                                     r.preempt_source + " is signal or klt where a task may be preempted)");
  }
  return r;
}

const std::vector<scheduler_info>& schedulers() {
  static const std::vector<scheduler_info>& list = *[] {  // never destroyed, as sched::registry()
    auto* v = new std::vector<scheduler_info>;
    for (const auto& e : sched::registry()) v->push_back({e.name, e.summary, e.available});
    return v;
  }();
  return list;
}

}  // namespace roost
