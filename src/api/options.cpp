// Merging options with the environment, and validating both. Every error names the variable (or the
// options field), the value and what is valid.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "roost/errors.hpp"
#include "roost/options.hpp"
#include "sched/registry.hpp"

namespace roost {

namespace {

struct source {
  std::string name;   // "ROOST_WORKERS" or "options::workers"
  std::string value;
};

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v;
}

[[noreturn]] void fail(const source& s, const std::string& why) {
  throw config_error(s.name + "='" + s.value + "': " + why);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::optional<bool> bool_word(const std::string& value) {
  std::string v = lower(value);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

bool parse_bool(const source& s) {
  if (auto b = bool_word(s.value)) return *b;
  fail(s, "not a boolean; valid: true, false, 1, 0, yes, no, on, off");
}

unsigned long long parse_uint(const source& s, const char* valid) {
  const std::string& v = s.value;
  if (v.empty() || !std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); }))
    fail(s, std::string("not a non-negative integer; valid: ") + valid);
  errno = 0;
  unsigned long long x = std::strtoull(v.c_str(), nullptr, 10);
  if (errno == ERANGE) fail(s, std::string("out of range; valid: ") + valid);
  return x;
}

constexpr unsigned kMaxWorkers = 4096;
constexpr std::size_t kMinStack = 64 * 1024;
constexpr std::size_t kMaxStack = std::size_t{1} << 30;
// A thread's default (8 MiB): a recursion that runs serially runs under every scheduler, including those
// whose joins run children on the waiter's stack (ws-help, cats). Reserved, not committed (ult/stack.hpp).
constexpr std::size_t kDefaultStack = std::size_t{8} << 20;

std::size_t parse_size(const source& s) {
  std::string v = s.value;
  std::size_t mult = 1;
  if (!v.empty()) {
    char c = static_cast<char>(std::toupper(static_cast<unsigned char>(v.back())));
    if (c == 'K') mult = 1024;
    else if (c == 'M') mult = 1024 * 1024;
    else if (c == 'G') mult = std::size_t{1} << 30;
    if (mult != 1) v.pop_back();
  }
  const char* valid = "bytes from 65536 (64K) to 1073741824 (1G), with an optional K, M or G suffix";
  source digits{s.name, v};
  if (v.empty() || !std::all_of(v.begin(), v.end(), [](unsigned char ch) { return std::isdigit(ch); }))
    fail(s, std::string("not a size; valid: ") + valid);
  unsigned long long x = parse_uint(digits, valid);
  if (x > kMaxStack / mult) fail(s, std::string("too large; valid: ") + valid);
  std::size_t bytes = static_cast<std::size_t>(x) * mult;
  if (bytes < kMinStack || bytes > kMaxStack) fail(s, std::string("out of range; valid: ") + valid);
  return bytes;
}

void check_scheduler(const source& s) {
  for (const auto& e : sched::registry()) {
    if (s.value == e.name) {
      if (e.available) return;
      fail(s, std::string("the ") + e.name + " scheduler is not implemented yet (planned in " + e.planned_in +
                  "); available: " + sched::available_names());
    }
  }
  std::string all;
  for (const auto& e : sched::registry()) all += (all.empty() ? "" : ", ") + std::string(e.name);
  fail(s, "unknown scheduler; valid names: " + all + " (available in this build: " + sched::available_names() + ")");
}

}  // namespace

resolved_options resolve(const options& o) {
  resolved_options r;

  source sch = o.scheduler ? source{"options::scheduler", *o.scheduler}
                           : (env("ROOST_SCHED") ? source{"ROOST_SCHED", env("ROOST_SCHED")} : source{"", "ws"});
  check_scheduler(sch);
  r.scheduler = sch.value;

  if (o.workers) {
    if (*o.workers == 0 || *o.workers > kMaxWorkers)
      fail({"options::workers", std::to_string(*o.workers)}, "valid: an integer from 1 to 4096");
    r.workers = *o.workers;
  } else if (const char* v = env("ROOST_WORKERS")) {
    source s{"ROOST_WORKERS", v};
    unsigned long long n = parse_uint(s, "an integer from 1 to 4096");
    if (n == 0 || n > kMaxWorkers) fail(s, "valid: an integer from 1 to 4096");
    r.workers = static_cast<unsigned>(n);
  }  // else 0: one per PU, filled in once the topology is known

  if (o.topology) r.topology = *o.topology;
  else if (const char* v = env("ROOST_TOPOLOGY")) r.topology = v;
  if (r.topology.find_first_not_of(" \t") == std::string::npos && !r.topology.empty())
    fail({o.topology ? "options::topology" : "ROOST_TOPOLOGY", r.topology},
         "blank; valid: an hwloc synthetic description or a path to an hwloc XML file (unset it for this machine)");

  if (o.bind) r.bind = *o.bind;
  else if (const char* v = env("ROOST_BIND")) r.bind = parse_bool({"ROOST_BIND", v});

  if (o.stack_size) {
    if (*o.stack_size < kMinStack || *o.stack_size > kMaxStack)
      fail({"options::stack_size", std::to_string(*o.stack_size)}, "valid: 65536 .. 1073741824 bytes");
    r.stack_size = *o.stack_size;
  } else if (const char* v = env("ROOST_STACK_SIZE")) {
    r.stack_size = parse_size({"ROOST_STACK_SIZE", v});
  } else {
    r.stack_size = kDefaultStack;
  }

  if (o.verbose) r.verbose = *o.verbose;
  else if (const char* v = env("ROOST_VERBOSE")) r.verbose = parse_bool({"ROOST_VERBOSE", v});

  if (o.adws_steal) {
    r.adws_steal = *o.adws_steal;
  } else if (const char* v = env("ROOST_ADWS_STEAL")) {
    source s{"ROOST_ADWS_STEAL", v};
    if (lower(s.value) == "auto") r.adws_steal = adws_stealing::adaptive;
    else if (auto b = bool_word(s.value)) r.adws_steal = *b ? adws_stealing::on : adws_stealing::off;
    else fail(s, "valid: true, false (or 1, 0, yes, no, on, off), auto (keep whichever makes the iterations faster)");
  }

  {
    const char* valid = "an integer from 0 to 64 (tasks at that spawn depth and above are inter-socket; the root is 0)";
    if (o.cab_level) {
      if (*o.cab_level > 64) fail({"options::cab_level", std::to_string(*o.cab_level)}, std::string("valid: ") + valid);
      r.cab_level = *o.cab_level;
    } else if (const char* v = env("ROOST_CAB_LEVEL")) {
      source s{"ROOST_CAB_LEVEL", v};
      unsigned long long x = parse_uint(s, valid);
      if (x > 64) fail(s, std::string("valid: ") + valid);
      r.cab_level = static_cast<unsigned>(x);
    }
  }

  if (o.cab_one_subtree) r.cab_one_subtree = *o.cab_one_subtree;
  else if (const char* v = env("ROOST_CAB_SUBTREES")) {
    std::string x(v);
    if (x != "one" && x != "many")
      fail({"ROOST_CAB_SUBTREES", x}, "valid: one (a socket runs one intra-socket subtree at a time, seed 000's policy), many");
    r.cab_one_subtree = x == "one";
  }

  {
    const char* valid = "a finite number of bytes per nanosecond >= 0 (default 0.05)";
    if (o.cats_min_intensity) {
      if (!(*o.cats_min_intensity >= 0) || *o.cats_min_intensity > 1e9)
        fail({"options::cats_min_intensity", std::to_string(*o.cats_min_intensity)}, std::string("valid: ") + valid);
      r.cats_min_intensity = *o.cats_min_intensity;
    } else if (const char* v = env("ROOST_CATS_MIN_INTENSITY")) {
      char* end = nullptr;
      double x = std::strtod(v, &end);
      if (!*v || *end || !(x >= 0) || x > 1e9) fail({"ROOST_CATS_MIN_INTENSITY", v}, std::string("not a number; valid: ") + valid);
      r.cats_min_intensity = x;
    }
  }

  if (o.trace) r.trace = *o.trace;
  else if (const char* v = env("ROOST_TRACE")) r.trace = v;
  if (!r.trace.empty() && r.trace.back() == '/')
    fail({o.trace ? "options::trace" : "ROOST_TRACE", r.trace}, "a directory; valid: a file path to write the trace to");
  return r;
}

const std::vector<scheduler_info>& schedulers() {
  static const std::vector<scheduler_info> list = [] {
    std::vector<scheduler_info> v;
    for (const auto& e : sched::registry()) v.push_back({e.name, e.summary, e.available});
    return v;
  }();
  return list;
}

}  // namespace roost
