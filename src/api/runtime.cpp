#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "api/runtime_core.hpp"
#include "platform/say_once.hpp"
#include "engine/observe.hpp"
#include "engine/preemption.hpp"
#include "mem/distribution.hpp"
#include "platform/fork_hold.hpp"
#include "platform/output_file.hpp"
#include "platform/platform.hpp"
#include "platform/sim_platform.hpp"
#include "platform/trim_space.hpp"
#include "roost/errors.hpp"
#include "roost/memory.hpp"
#include "roost/runtime.hpp"
#include "roost/task_group.hpp"
#include "roost/touch.hpp"
#include "sched/registry.hpp"
#include "topology/placement.hpp"
#include "topology/synthetic.hpp"
#include "trace/tracer.hpp"

namespace roost {

namespace detail {

namespace {
// ROOST_TRACE and ROOST_SIM_REPORT name one file for the process, and a program may make its runtimes one
// after another (roost-bench does, a variant each): each after the first writes to the path with its number
// appended (FILE.2, FILE.3, ...), and says so, instead of writing over the one before (an outside-user
// campaign lost the first two runtimes' traces of three, and later the reports, without a word). A path
// given in code (options::trace, options::sim_report) is the program's choice for that runtime.
// Made on first use and never destroyed: a runtime at namespace scope is made before this file's statics
// may be, and destroyed after they were (an outside-user campaign: a global runtime with ROOST_TRACE
// crashed before main).
struct numbering {
  std::mutex mu;
  std::map<std::pair<std::string, std::string>, unsigned> last;  // (variable, path): the last number taken
  // The files (write targets: platform::write_target) that runtimes of this process were given in code for
  // their trace or report: a number whose file is among them is skipped. ROOST_TRACE's third runtime took
  // FILE.2 after the second had been given FILE.2 in code, and ROOST_TRACE's first took FILE after a runtime
  // had been given FILE in code: each wrote over the earlier trace without a word (an outside-user campaign).
  // The numbers' own files are found from `last` instead (skip_given_in_code), so the set holds one entry a
  // path given in code, however many runtimes are made.
  std::set<std::string> given_in_code;
};
numbering& numbered() {
  static numbering* n = new numbering;
  return *n;
}

std::string numbered_path(const std::string& given, unsigned nth) {
  return nth > 1 ? given + "." + std::to_string(nth) : given;
}
bool a_numbered_name_of(const std::string& base_path, const std::string& path_given, bool json);

// Whether a runtime of this process was given `path`'s file in code, or took it as a number of another value
// of the variable (ROOST_TRACE=t twice wrote t and t.2; then ROOST_TRACE=t.2 wrote over t.2: a review).
// numbered().mu held.
bool taken_before(const std::string& path) {
  if (numbered().given_in_code.count(platform::write_target(path))) return true;
  for (const auto& [key, last] : numbered().last) {
    const std::string& base = key.second;
    if (last >= 1 && std::filesystem::path(base).lexically_normal() == std::filesystem::path(path).lexically_normal())
      return true;
    if (last >= 2 && a_numbered_name_of(base, path, false) &&
        std::stoul(path.substr(path.find_last_of('.') + 1)) <= last)
      return true;
  }
  return false;
}

// The first number from `nth` on whose file no runtime took before (numbered().mu held).
unsigned skip_given_in_code(const std::string& given, unsigned nth) {
  while (taken_before(numbered_path(given, nth))) ++nth;
  return nth;
}

// The outputs of the live runtimes (output_claim): made on first use and never destroyed, as numbered().
// Its lock is held across fork(), as the numbers' is.
struct claimed_output {
  std::uint64_t owner;
  std::string path, what;
};
struct live_outputs {
  std::mutex mu;
  std::uint64_t next_owner = 1;
  std::vector<claimed_output> list;
};
live_outputs& live() {
  static live_outputs* l = new live_outputs;
  return *l;
}

// A child of fork() numbers apart from its parent: it inherited the parent's counts, and both wrote FILE.2,
// one over the other without a word (an outside-user campaign). The child's runtimes write FILE.pidPID,
// FILE.pidPID.2, ... (its own pid: a grandchild's differ again), counted from the start. And the process's
// tracing slot (trace::install_tracer) is free in the child: the parent's tracing runtime is a copy there
// that never runs, and it kept every runtime of the child from tracing. Registered by the first runtime
// made; the lock is held across fork() so that the child's copy of it is never held.
std::atomic<bool> g_numbering_in_fork_child{false};
void numbering_before_fork() {
  platform::preemption_off_for_fork();  // platform/fork_hold.hpp
  numbered().mu.lock();
  live().mu.lock();
}
void numbering_after_fork_in_parent() {
  live().mu.unlock();
  numbered().mu.unlock();
  platform::preemption_back_after_fork();
}
void numbering_after_fork_in_child() {
  // The parent's runtimes are copies here that never write their files (abandon), but the parent's own go
  // on writing them: they stay claimed in the child for good (owner 0, which no runtime releases), so that
  // a runtime of the child given one of those paths in code is refused as a second live runtime's would be.
  // They were forgotten, and a child's options::trace at the parent's live trace wrote over it without a
  // word (an outside-user campaign; paths from the environment get FILE.pidPID in the child).
  for (claimed_output& c : live().list) {
    c.owner = 0;
    if (c.what.find(" (the parent process's") == std::string::npos) c.what += " (the parent process's, from before fork())";
  }
  live().mu.unlock();
  numbered().last.clear();
  g_numbering_in_fork_child.store(true, std::memory_order_relaxed);
  numbered().mu.unlock();
  platform::preemption_back_after_fork();
  trace::install_tracer(nullptr);
}
// Registered before main: registered at the first runtime, a fork while it was made could copy the locks held.
__attribute__((constructor)) void watch_forks() {
  ::pthread_atfork(&numbering_before_fork, &numbering_after_fork_in_parent, &numbering_after_fork_in_child);
}

// The number of one runtime's file at a path that came from `variable`. Taken when the runtime starts to be
// made, so that two runtimes made at once on two threads never take the same one (each read the count
// before either had added to it, and both wrote the same file); given back if the runtime fails before it
// writes (keep() was not called), unless a later runtime took a number meanwhile, which then stays (a gap
// in the numbers, never a file written twice).
class output_number {
 public:
  // Numbers `path` when it came from `variable` and a runtime before this one wrote there (FILE.2, ...).
  output_number(const char* variable, std::string& path, const std::string& source)
      : variable_(variable), applies_(!path.empty()) {
    if (path.empty() || source != variable) return;
    named_ = path;
    if (g_numbering_in_fork_child.load(std::memory_order_relaxed))
      path.append(".pid").append(std::to_string(static_cast<long>(::getpid())));
    given_ = path;
    {
      std::lock_guard<std::mutex> lk(numbered().mu);
      slot_ = numbered().last.try_emplace({variable_, given_}, 0u).first;  // map iterators stay valid
      nth_ = slot_->second = skip_given_in_code(given_, slot_->second + 1);
    }
    path = numbered_path(given_, nth_);
  }
  // The runtime will write its file at `path`: says so when the path was numbered.
  void keep(const std::string& path, const char* what) {
    if (applies_ && given_.empty()) {  // given in code: later numbers skip its file
      const std::string target = platform::write_target(path);
      std::lock_guard<std::mutex> lk(numbered().mu);
      numbered().given_in_code.insert(target);
    }
    if (given_.empty()) return;
    kept_ = true;
    if (nth_ > 1 || given_ != named_)
      // No ordinal: the number is the file's, which skips files given in code and other values' numbers.
      std::fprintf(stderr, "roost: %s='%s': this runtime writes its %s to '%s' (one file a runtime%s)\n",
                   variable_, named_.c_str(), what, path.c_str(),
                   given_ != named_ ? "; a child of fork() numbers apart from its parent" : "");
  }
  // `path` as an error names it: with the variable's own path first when it was numbered (an error named
  // 'FILE.2', a path the variable never held and nothing wrote: an outside-user campaign).
  std::string quoted(const std::string& path) const {
    if (given_.empty() || (nth_ <= 1 && given_ == named_)) return "'" + path + "'";
    return "'" + named_ + "' (this runtime's file would be '" + path + "')";
  }
  ~output_number() {  // allocates nothing: the count's slot was found when the number was taken
    if (given_.empty() || kept_) return;
    std::lock_guard<std::mutex> lk(numbered().mu);
    if (slot_->second == nth_) --slot_->second;
  }
  output_number(const output_number&) = delete;
  output_number& operator=(const output_number&) = delete;

 private:
  const char* variable_;
  bool applies_;       // the runtime writes this output (a native runtime writes no report)
  std::string named_;  // the variable's path
  std::string given_;  // what is numbered: named_, or in a child of fork() named_.pidPID; empty: nothing numbered
  decltype(numbering::last)::iterator slot_{};
  unsigned nth_ = 0;
  bool kept_ = false;
};

// The files a runtime writes are named relative to the working directory when it is made: each is written
// (or read back, the trace for its timeline) long after, and a program that changed directory meanwhile
// had its timeline made from another trace of the same name there, or a file of the same name there deleted
// after a write error. A path that cannot be made absolute (no working directory) is left as it is.
void make_absolute(std::string& path) {
  if (path.empty() || path.front() == '/') return;
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  if (!ec) path = p.string();
}

// Whether two paths name one file: each made absolute, its symbolic links followed (dangling ones too: the
// file a write makes is the link's target, and a link to a trace not yet written let a report write over
// the trace; an outside-user campaign), then the rest made canonical as far as it exists.
bool one_file(const std::string& a, const std::string& b) {
  return a == b || platform::write_target(a) == platform::write_target(b);
}

// Whether `path` is a name the runtimes after the first give an output at `base` (base.2, base.3, ...;
// with `json`, their timelines base.2.json, ... too: output_number).
// Both are compared in their lexically normal forms (./run and run.2 are one directory's), and only numbers
// the numbering gives (2, 3, ...: no 0, 1 or leading zero) count.
bool a_numbered_name_of(const std::string& base_path, const std::string& path_given, bool json) {
  const std::string base = std::filesystem::path(base_path).lexically_normal().string();
  const std::string path = std::filesystem::path(path_given).lexically_normal().string();
  if (path.size() <= base.size() + 1 || path.compare(0, base.size() + 1, base + ".") != 0) return false;
  std::string rest = path.substr(base.size() + 1);
  if (json && rest.size() > 5 && rest.compare(rest.size() - 5, 5, ".json") == 0) rest.resize(rest.size() - 5);
  if (rest.empty() || rest.size() > 9 || rest[0] == '0' ||
      !std::all_of(rest.begin(), rest.end(), [](unsigned char c) { return std::isdigit(c); }))
    return false;
  return std::stoul(rest) >= 2;
}

// The files a runtime writes, each with what an error names it by (`trace_as`, `report_as`: the path quoted,
// or output_number::quoted's words once it was numbered).
struct output {
  std::string path, what;
};
std::vector<output> outputs_given(const resolved_options& cfg, const std::string& trace_as,
                                  const std::string& report_as) {
  std::vector<output> outs;
  if (!cfg.trace.empty()) {
    outs.push_back({cfg.trace, cfg.trace_source + "=" + trace_as});
    outs.push_back({cfg.trace + ".json", "the timeline of " + cfg.trace_source + "=" + trace_as});
  }
  // Every output given, whether this platform and scheduler write it or not: a setting is checked wherever
  // it is given (configuration.md), and the same settings under sim or cats would collide.
  if (!cfg.sim_report.empty()) outs.push_back({cfg.sim_report, cfg.sim_report_source + "=" + report_as});
  if (!cfg.cats_profile.empty())
    outs.push_back({cfg.cats_profile, cfg.cats_profile_source + "='" + cfg.cats_profile + "'"});
  return outs;
}
// Two at one path would write over each other, and the report or the timeline was lost without a word
// (ROOST_SIM_REPORT=FILE.json beside ROOST_TRACE=FILE).
void check_one_file_pairs(const std::vector<output>& outs) {
  for (std::size_t i = 0; i < outs.size(); ++i)
    for (std::size_t j = i + 1; j < outs.size(); ++j)
      if (one_file(outs[i].path, outs[j].path))
        throw config_error(outs[i].what + " and " + outs[j].what + " are one file, which each would write over; "
                           "valid: a path of its own for each");
}

// The files a runtime writes, as given (before numbering: ROOST_TRACE and ROOST_SIM_REPORT at one path were
// refused as 'FILE.2' being a later runtime's name, a path the user never gave; an outside-user campaign):
// none at one path, and none a name that another, given by its variable, takes in a later runtime of the
// process: ROOST_SIM_REPORT=FILE.2 beside ROOST_TRACE=FILE let the second runtime's trace write over the
// first's report (an outside-user campaign). After numbering, the constructor compares the pairs again.
void check_outputs_apart(const resolved_options& cfg) {
  const std::vector<output> outs = outputs_given(cfg, "'" + cfg.trace + "'", "'" + cfg.sim_report + "'");
  check_one_file_pairs(outs);
  // Numbered are the trace and the report given by their variables (not by options:: fields); the cats
  // profile is rewritten by each runtime.
  struct numbered_output {
    std::string base, what;
    bool json;
  };
  std::vector<numbered_output> bases;
  if (!cfg.trace.empty() && cfg.trace_source == "ROOST_TRACE")
    bases.push_back({cfg.trace, cfg.trace_source + "='" + cfg.trace + "'", true});
  if (!cfg.sim_report.empty() && cfg.sim_report_source == "ROOST_SIM_REPORT")
    bases.push_back({cfg.sim_report, cfg.sim_report_source + "='" + cfg.sim_report + "'", false});
  for (const numbered_output& b : bases)
    for (const output& o : outs)
      if (a_numbered_name_of(b.base, o.path, b.json))
        throw config_error(o.what + " is a name " + b.what + " gives the output of a later runtime of this "
                           "process (" + b.base + ".2, " + b.base + ".3, ...: runtimes made one after another "
                           "number their files), which would write over it; valid: a path of its own for each, "
                           "not " + b.base + " with a number after it");
}

// Claims the files this runtime will write, refused when another live runtime writes one of them: two
// runtimes alive at once, the second's simulated report or cats profile at the first's trace, emptied the
// live trace and wrote over it without a word (an outside-user campaign). Only what this runtime writes
// is claimed (a report when simulated, a profile under cats), so a setting both share from the environment
// but only one writes is no clash.
output_claim claim_outputs(const resolved_options& cfg) {
  std::vector<std::pair<std::string, std::string>> mine;  // (path, what)
  if (!cfg.trace.empty()) {
    mine.emplace_back(cfg.trace, cfg.trace_source + "='" + cfg.trace + "'");
    mine.emplace_back(cfg.trace + ".json", "the timeline of " + cfg.trace_source + "='" + cfg.trace + "'");
  }
  if (cfg.simulated && !cfg.sim_report.empty())
    mine.emplace_back(cfg.sim_report, cfg.sim_report_source + "='" + cfg.sim_report + "'");
  if (cfg.scheduler == "cats" && !cfg.cats_profile.empty())
    mine.emplace_back(cfg.cats_profile, cfg.cats_profile_source + "='" + cfg.cats_profile + "'");
  if (mine.empty()) return output_claim{};
  live_outputs& l = live();
  std::lock_guard<std::mutex> lk(l.mu);
  for (const auto& [path, what] : mine)
    for (const claimed_output& other : l.list)
      if (one_file(path, other.path))
        throw config_error(what + " is a file another live roost::runtime writes (" + other.what +
                           "), which each would write over; valid: a path of its own for each runtime");
  const std::uint64_t owner = l.next_owner++;
  for (auto& [path, what] : mine) l.list.push_back({owner, std::move(path), std::move(what)});
  return output_claim{owner};
}

}  // namespace

void output_claim::release() noexcept {
  if (id_ == 0) return;
  live_outputs& l = live();
  std::lock_guard<std::mutex> lk(l.mu);
  l.list.erase(std::remove_if(l.list.begin(), l.list.end(), [&](const claimed_output& c) { return c.owner == id_; }),
               l.list.end());
  id_ = 0;
}

namespace {

// An existing regular file at `path` is emptied (errors ignored: the simulation's own check of the path
// reports them, where it gets that far). Not a directory, device or named pipe (opening a pipe blocks).
void empty_if_regular(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) (void)!::truncate(path.c_str(), 0);
}

// Whether `path` is one of the files a trace at `trace` makes: the trace, its timeline, or either numbered
// (FILE.2, FILE.2.json: output_number), by name or as one file (one_file).
bool a_file_of_trace(const std::string& trace, const std::string& path) {
  if (path == trace || path == trace + ".json" || one_file(trace, path) || one_file(trace + ".json", path)) return true;
  return a_numbered_name_of(trace, path, true);
}

// A runtime whose settings do not resolve (resolve() threw) would have written its simulated report where
// the options or the environment say, numbered as the next runtime's: a report there from an earlier run is
// emptied, as configuration.md promises of every runtime that fails to be made (it stayed whole, and read
// as this run's: an outside-user campaign). The settings are read as resolve() reads them (trimmed), and
// never emptied is a file the trace or the cats profile would write too (what check_outputs_apart refuses
// once the settings resolve): emptying it would lose an earlier trace or profile (a review).
void empty_report_of_unresolved(const options& o) noexcept {
  try {
    const auto setting = [](const std::optional<std::string>& field, const char* variable, bool& from_env) {
      from_env = false;
      std::string text;
      if (field) {
        text = *field;
      } else if (const char* e = std::getenv(variable)) {
        text = e;
        from_env = true;
      }
      return platform::trim_space(text);
    };
    bool from_env = false, unused = false;
    std::string platform = setting(o.platform, "ROOST_PLATFORM", unused);
    for (char& c : platform) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (platform != "sim") return;
    std::string report = setting(o.sim_report, "ROOST_SIM_REPORT", from_env);
    if (report.empty()) return;
    make_absolute(report);
    std::string trace = setting(o.trace, "ROOST_TRACE", unused), profile = setting(o.cats_profile, "ROOST_CATS_PROFILE", unused);
    make_absolute(trace);
    make_absolute(profile);
    // Under the numbers' lock, so that no runtime takes the number read here and writes its report at that
    // path meanwhile.
    std::lock_guard<std::mutex> lk(numbered().mu);
    if (from_env) {
      if (g_numbering_in_fork_child.load(std::memory_order_relaxed))
        report.append(".pid").append(std::to_string(static_cast<long>(::getpid())));
      const auto it = numbered().last.find({"ROOST_SIM_REPORT", report});
      report = numbered_path(report, skip_given_in_code(report, (it == numbered().last.end() ? 0u : it->second) + 1));
    }
    if (!trace.empty() && a_file_of_trace(trace, report)) return;
    if (!profile.empty() && one_file(profile, report)) return;
    // Nor a file a live runtime writes (output_claim): a failed runtime emptied another's live trace (a
    // review). Taken after the numbers' lock, in the order of the fork handlers.
    std::lock_guard<std::mutex> claims(live().mu);
    for (const claimed_output& c : live().list)
      if (one_file(c.path, report)) return;
    empty_if_regular(report);
  } catch (...) {
  }
}

// A native runtime on a synthetic topology whose caches lack size=: hwloc gave them sizes of its own (an L3
// 16 MiB, an L2 4 MiB), which cab, cats, adws-ml, numa and a trace's cache domains (KRD) then use as if
// described. The simulator refuses such a description (sim/memory_model.cpp); natively it was accepted
// without a word (an audit of DESIGN §4, which asks for sizes). "" where every cache has one.
std::string made_up_cache_sizes(const topo::topology& tp) {
  if (!tp.is_virtual() || tp.from_file()) return {};
  const std::vector<std::string> unsized = topo::caches_without_size(tp.description());
  if (unsized.empty()) return {};
  std::ostringstream os;
  os << tp.named() << ": ";
  for (std::size_t i = 0; i < unsized.size(); ++i) {
    const std::string& level = unsized[i];
    os << (i ? ", " : "cache level ") << "'" << level << "'";
    const int n = level.size() > 1 && std::isdigit(static_cast<unsigned char>(level[1])) ? level[1] - '0' : 0;
    for (const topo::node& c : tp.nodes())
      if (c.kind == topo::node_kind::cache && c.cache_level == n) {
        os << " (hwloc made it " << topo::format_bytes(c.cache_bytes) << ")";
        break;
      }
  }
  os << (unsized.size() == 1 ? " has" : " have") << " no size=, so the sizes the schedulers and the trace use are "
     << "hwloc's own; give each cache its size, e.g. '" << unsized.front().substr(0, unsized.front().find('('))
     << "(size=1MiB)'";
  return os.str();
}

// A native runtime whose topology (an hwloc XML file, or the real machine as hwloc reads it) gives a
// last-level cache no size (0: unknown, what hwloc writes where the system reports none): the package's cache
// that cab, cats, numa and a trace's KRD use is then the largest cache below it that has a size, while the
// trace's cache domains are the last level's. That was taken without a word (an outside-user campaign: an
// XML whose L3s were 0 ran cats and KRD with its L2's 512 KiB); the simulator refuses such a machine
// (sim/memory_model.cpp). "" where every last-level cache has a size.
std::string unsized_last_level_caches(const topo::topology& tp) {
  if (tp.is_virtual() && !tp.from_file()) return {};  // synthetic: made_up_cache_sizes says what hwloc did
  std::vector<int> unsized;
  for (unsigned p = 0; p < tp.num_pus(); ++p) {
    const int llc = tp.last_level_cache(p);
    if (llc < 0 || tp.nodes()[llc].kind != topo::node_kind::cache || tp.nodes()[llc].cache_bytes != 0) continue;
    if (std::find(unsized.begin(), unsized.end(), llc) == unsized.end()) unsized.push_back(llc);
  }
  if (unsized.empty()) return {};
  const topo::node& first = tp.nodes()[unsized.front()];
  const std::size_t used = tp.package_cache_bytes(first.first_pu);
  std::ostringstream os;
  os << (tp.is_virtual() ? tp.named() : std::string("this machine's topology (hwloc)")) << ": " << unsized.size()
     << " last-level cache" << (unsized.size() == 1 ? " (L" : "s (L") << first.cache_level << ") "
     << (unsized.size() == 1 ? "has" : "have") << " no size (0: unknown), so the package's cache that the schedulers "
     << "and a trace's KRD use is ";
  if (used) os << "the largest cache below it with a size, " << topo::format_bytes(used);
  else os << "unknown (cats runs as ws, KRD counts every reuse as far)";
  os << (tp.is_virtual() ? "; give each cache its size (cache_size in the XML)" : "");
  return os.str();
}

using platform::say_each_once;

resolved_options resolve_or_empty_report(const options& o) {
  try {
    return resolve(o);
  } catch (...) {
    empty_report_of_unresolved(o);
    throw;
  }
}
}  // namespace

runtime_core::runtime_core(const options& o) : runtime_core(o, &sched::make_engine) {}

runtime_core::runtime_core(const options& o, engine_maker make) : cfg(resolve_or_empty_report(o)) {
  // Given in code, the distribution becomes the allocator's default (roost/memory.hpp) once the runtime is
  // made (below): a runtime that fails to be made changes nothing. Checked here, with the other settings.
  // From the environment the allocator reads it itself, also before any runtime exists.
  // A flag and a value rather than std::optional, whose engaged value GCC 12 takes for uninitialized at its
  // use below (-Wmaybe-uninitialized, a false positive).
  const bool distribution_given = static_cast<bool>(o.data_distribution);
  const distribution given_distribution =
      distribution_given ? parse_distribution(cfg.data_distribution) : distribution::standard;
  // Absolute before numbering: FILE.2 is the second runtime to write that file, whatever the directory.
  for (std::string* path : {&cfg.trace, &cfg.sim_report, &cfg.cats_profile}) make_absolute(*path);
  // cats's profile is rewritten by each runtime, not numbered; but a child of fork() writes apart from its
  // parent as the trace and report do: the parent's claim on the file refused every runtime of the child
  // (an outside-user campaign).
  if (cfg.scheduler == "cats" && cfg.cats_profile_source == "ROOST_CATS_PROFILE" && !cfg.cats_profile.empty() &&
      g_numbering_in_fork_child.load(std::memory_order_relaxed)) {
    const std::string named = cfg.cats_profile;
    cfg.cats_profile.append(".pid").append(std::to_string(static_cast<long>(::getpid())));
    ROOST_SAY_ONCE("roost: ROOST_CATS_PROFILE='%s': this process's cats runtimes write their profile to '%s' (a "
                   "child of fork() writes apart from its parent)\n", named.c_str(), cfg.cats_profile.c_str());
  }
  // The paths as given, before numbering: ROOST_TRACE and ROOST_SIM_REPORT at one path, simulated, were
  // refused as 'FILE.2' being a later runtime's name for FILE, a path the user never gave (the report numbered
  // past the trace's claim on FILE; an outside-user campaign), where the same settings natively or in code were
  // refused as one file.
  check_outputs_apart(cfg);
  output_number trace_number("ROOST_TRACE", cfg.trace, cfg.trace_source);
  std::string no_report;  // not simulated: no report, nothing numbered
  output_number report_number("ROOST_SIM_REPORT", cfg.simulated ? cfg.sim_report : no_report, cfg.sim_report_source);
  // And as numbered: a path given in code may be a link to a numbered file (FILE.2), or a fork child's
  // FILE.pidN itself (a review: comparing the paths as given only let both outputs write one file there).
  check_one_file_pairs(outputs_given(cfg, trace_number.quoted(cfg.trace), report_number.quoted(cfg.sim_report)));
  outputs_ = claim_outputs(cfg);
  // A report from an earlier run goes now, before anything else can fail: a runtime that fails to be made
  // leaves it empty (configuration.md). The simulation checks the path and writes the report.
  if (cfg.simulated && !cfg.sim_report.empty()) empty_if_regular(cfg.sim_report);
  tp = std::make_shared<const topo::topology>(topo::topology::load(cfg.topology, cfg.topology_source));
  if (cfg.workers == 0) cfg.workers = std::min<unsigned>(tp->num_pus(), max_workers);  // one per PU, within the limit
  // Simulated, a worker is one of the machine's PUs, with a clock of its own: more workers than PUs would
  // each get a core the machine does not have (64 workers on 4 PUs ran 21 cores' work in a core's time).
  if (cfg.simulated && cfg.workers > tp->num_pus())
    throw config_error(cfg.workers_source + "='" + std::to_string(cfg.workers) + "': simulated, each worker is one of " +
                       "the machine's PUs, and " + (tp->is_virtual() ? tp->named() : std::string("this machine")) + " has " + std::to_string(tp->num_pus()) +
                       "; give at most " + std::to_string(tp->num_pus()) + " workers, or a topology with more PUs");
  // Simulated, the engine is made, started, run and stopped with the simulated platform driving this
  // thread (platform.hpp): its workers are sim threads from the first.
  if (cfg.simulated) {
    sim = std::make_unique<simulation>(cfg, *tp);
  }
  // A runtime that fails from here drops its report's file before report_number gives the number back
  // (locals go in reverse order; the members, sim among them, only after both).
  struct drop_report_on_failure {
    simulation* s;
    bool made = false;
    ~drop_report_on_failure() {
      if (s && !made) s->drop_unclaimed_report();
    }
  } report_guard{sim.get()};
  platform::sim_scope scope(sim ? &sim->platform() : nullptr);
  topo::placement pl = topo::place_workers(*tp, cfg.workers, cfg.bind, platform::os::allowed_cpus());
  // config() tells what happened: bind is false where placement left the workers unpinned (more workers
  // than allowed CPUs), as describe() says. Simulated workers are the machine's PUs, not threads to pin.
  if (!sim && cfg.bind)
    cfg.bind = std::none_of(pl.cpu_of_worker.begin(), pl.cpu_of_worker.end(), [](int c) { return c < 0; });
  if (sim) sim->place(*tp, pl);
  if (!pl.note.empty()) {
    ROOST_SAY_ONCE("%s\n", pl.note.c_str());  // once per process, as DESIGN §4 asks
  }
  if (!sim) {
    const std::string unsized = made_up_cache_sizes(*tp);
    if (!unsized.empty()) say_each_once({unsized});  // once per description, not per process
    const std::string unknown = unsized_last_level_caches(*tp);
    if (!unknown.empty()) say_each_once({unknown});
  }
  // An invalid variable that a field set in code overrides (not thrown: the field wins, configuration.md), a
  // variable that looks like a misspelt setting (a program's own may begin with ROOST_ too), a simulator
  // variable of a native runtime: each note said once per process, and not passed over in silence.
  say_each_once(cfg.overridden_env_errors);
  say_each_once(cfg.unknown_env_notes);
  say_each_once(cfg.unused_env_notes);
  eng = make(cfg, tp, std::move(pl));
  eng->coarse_parts().store(detail::coarse_parts_counted_outside_runtimes(), std::memory_order_relaxed);  // no task ran yet
  if (!cfg.trace.empty()) {
    trace::tracer::caches c;
    for (const auto& n : tp->nodes())
      if (n.kind == topo::node_kind::cache && n.cache_level == 2) c.l2_bytes = std::max<std::uint64_t>(c.l2_bytes, n.cache_bytes);
    const auto& pl_now = eng->placement();
    // Each worker's last-level cache, numbered 0, 1, ... in the topology's order: KRD merges the accesses of
    // one. It was the package, which merged two L3s of one package (an outside-user campaign: seed 002's
    // Opteron 6172 has two dies a package, each with its L3).
    std::vector<int> llc_node(cfg.workers);
    for (unsigned w = 0; w < cfg.workers; ++w) {
      unsigned pu = pl_now.pu_of_worker[w];
      llc_node[w] = tp->last_level_cache(pu);
      c.llc_bytes = std::max<std::uint64_t>(c.llc_bytes, tp->package_cache_bytes(pu));
    }
    std::vector<int> distinct = llc_node;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (int n : llc_node)
      c.llc_domain.push_back(static_cast<std::uint32_t>(std::lower_bound(distinct.begin(), distinct.end(), n) - distinct.begin()));
    // Simulated, every task is seen (the simulation charges each), whatever the depth.
    // A simulated trace's times are virtual: its summary says so, so that roost-analyze never sets one
    // against a native trace (trace_format.hpp).
    tracer = std::make_unique<trace::tracer>(cfg.trace, cfg.workers, (sim ? "simulated: " : "") + tp->summary(), std::move(c),
                                             cfg.trace_depth_auto && !sim, cfg.trace_source);
    if (!trace::install_tracer(tracer.get()))
      throw config_error(cfg.trace_source + "=" + trace_number.quoted(cfg.trace) + ": another roost::runtime of this process is tracing; "
                         "only one may at a time");
    try {
      tracer->open();  // after the check: the other runtime may be writing this very file
      trace_number.keep(cfg.trace, "trace");
    } catch (...) {
      trace::install_tracer(nullptr);
      throw;
    }
    trace::set_tracing_hooks(true, cfg.trace_depth, !cfg.trace_depth_auto && cfg.trace_depth == ~std::uint32_t{0});
    eng->set_tracer(tracer.get());
    eng->set_touch_sink(tracer.get());
  }
  if (sim) {
    sim->attach(*eng, tracer.get());  // after the tracer's consumer, which it forwards to
    set_sim_hooks(true);
    publish_sim_figures();  // a level the machine lacks is -1 from the start
  }
  try {
    eng->start();
  } catch (...) {  // no destructor will run: take back what points at this runtime
    eng->set_touch_sink(nullptr);
    eng->set_tracer(nullptr);
    if (sim) {
      set_sim_hooks(false);
      sim->detach();
    }
    if (tracer) {
      trace::set_tracing_hooks(false);
      trace::install_tracer(nullptr);
    }
    throw;
  }
  // Constructed: this runtime writes its report when it is destroyed (one that failed before wrote nothing).
  report_number.keep(cfg.sim_report, "report");
  if (sim) sim->claim_report();
  report_guard.made = true;
  if (distribution_given) set_default_distribution(given_distribution);
  if (cfg.verbose) std::fprintf(stderr, "%s\n", describe().c_str());
}

void runtime_core::abandon() {
  (void)sim.release();
  (void)eng.release();
  (void)tracer.release();
}

runtime_core::~runtime_core() {
  // A copy in a child of fork(): the worker threads, timers and open files are the parent's; stopping the
  // engine would wait for threads that do not exist here, and the trace and report would be written over
  // the parent's (a child's exit added its copy of the parent's records to the parent's trace).
  if (eng && eng->creator_pid() != static_cast<long>(::getpid())) {
    abandon();
    return;
  }
  // Destroyed by one of its own tasks: the engine would be torn down under the task that is running it, and
  // its workers go on with freed memory (a segfault, or a use after free under ASan, under every scheduler).
  // A destructor cannot throw the usage_error this is: the process ends with the reason instead. exit()
  // called in a task destroys a static runtime so (it cannot tell that from a delete; an outside user got
  // status 134 and a message that did not name exit()).
  const engine::worker* w = engine::current_worker();
  if (w && eng && w->eng == eng.get())
    platform::os::fatal("roost::runtime destroyed by one of its own tasks",
                        "destroy a runtime after its run() returned, outside its tasks (its workers would go on "
                        "running on the freed runtime); exit() called in a task destroys a static runtime so: end "
                        "the process from a task with std::quick_exit or _exit");
  // The same from another thread, while a run() goes on (a delete, or exit() on a thread of the program):
  // the engine would be stopped under the running root (a segfault or std::terminate before).
  if (int none = 0; !runs_in_progress_.compare_exchange_strong(none, kDestroying))
    platform::os::fatal("roost::runtime destroyed while a run() on it was still running",
                        "destroy a runtime after every run() on it returned; exit() on another thread destroys "
                        "a static runtime so: end the process with std::quick_exit or _exit while a run() goes on");
  platform::sim_scope scope(sim ? &sim->platform() : nullptr);  // the tracer's last chunks too: virtual time
  // What the scheduler learned while running (cats's partition): the start-up line was written before.
  if (cfg.verbose && eng)
    if (std::string notes = eng->policy_notes(); !notes.empty())
      std::fprintf(stderr, "roost: at the end: %s %s\n", cfg.scheduler.c_str(), notes.c_str());
  if (eng) {
    eng->stop();
    // Every listener of this runtime's (its simulation, its tracer, cats's meter) is its own and goes now.
    eng->set_touch_sink(nullptr);
    eng->set_tracer(nullptr);
  }
  if (sim) {
    set_sim_hooks(false);
    sim->detach();
    sim->finish(cfg.scheduler, tp->replayable());  // this machine's synthetic description when simulated as itself
  }
  if (tracer) {
    trace::set_tracing_hooks(false);
    trace::install_tracer(nullptr);
    try {
      tracer->finish();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());  // a destructor must not throw
    }
  }
}

void runtime_core::run(void (*fn)(void*), void* arg) {
  const long pid = static_cast<long>(::getpid());
  if (engine::worker* w = engine::current_worker()) {
    if (w->eng->creator_pid() != pid)
      throw usage_error("roost::runtime::run in a child that fork() made inside a task of process " +
                        std::to_string(w->eng->creator_pid()) + ": the child goes on on that task's stack, on a "
                        "worker whose threads are the parent's; fork outside tasks (after run() returned), or call "
                        "only exec or _exit in the child");
    if (w->eng == eng.get()) {  // nested: already inside this runtime
      fn(arg);
      return;
    }
    throw usage_error("roost::runtime::run called from a task of another roost::runtime; a task may only "
                      "nest run() of the runtime it runs on");
  }
  if (pid != eng->creator_pid())
    throw usage_error("roost::runtime::run in a child of fork(): this runtime was made by process " +
                      std::to_string(eng->creator_pid()) + ", and its worker threads, timers and files are that "
                      "process's; make a new runtime in the child");
  if (runs_in_progress_.fetch_add(1) >= kDestroying)
    platform::os::fatal("roost::runtime::run called on a runtime that is being destroyed",
                        "destroy a runtime after every run() on it returned, and call none after; exit() on another "
                        "thread destroys a static runtime so: end the process with std::quick_exit or _exit while "
                        "a thread may still call run()");
  struct uncount {
    std::atomic<int>& n;
    ~uncount() { n.fetch_sub(1); }
  } uncount_run{runs_in_progress_};
  std::lock_guard<std::mutex> lk(iteration_mutex_);
  if (const engine::preemption_timers* p = eng->preemption()) p->check_handler();
  struct root_state {
    void (*fn)(void*);
    void* arg;
    std::exception_ptr error;
    std::atomic<std::uint32_t> done{0};
  } st{fn, arg, nullptr, {0}};

  // The engine sets st.done after the root's end (engine_base::finish_root); st lives until then.
  auto body = [&st] {
    try {
      st.fn(st.arg);
    } catch (...) {
      st.error = std::current_exception();
    }
  };
  using frame_t = closure_frame<decltype(body)>;
  void* mem = eng->alloc_root_frame(sizeof(frame_t), alignof(frame_t));
  auto* root = ::new (mem) frame_t(std::move(body), nullptr, -1.0);
  root->id = task_id{};

  platform::sim_scope scope(sim ? &sim->platform() : nullptr);
  if (sim) sim->platform().run_begin();
  if (tracer) tracer->iteration(true);
  eng->iteration_begin();
  // The calling thread runs the root as worker 0 and comes back when the root is done (engine_base.hpp).
  eng->run_root(root, st.done);
  // A policy's output that could not be written (cats's ROOST_CATS_PROFILE) is thrown after the iteration
  // ended everywhere, and after what the run itself threw.
  std::exception_ptr output_error;
  try {
    eng->iteration_end();
  } catch (const std::system_error&) {
    output_error = std::current_exception();
  }
  if (tracer) tracer->iteration(false);
  if (sim) {
    sim->platform().run_end();
    publish_sim_figures();
  }
  // When something else leaves first (the root's own exception, an observer's, a trace write's), the output
  // error is said on stderr instead of being dropped (a review).
  struct say_unthrown {
    std::exception_ptr& e;
    ~say_unthrown() {
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        std::fprintf(stderr, "%s (not thrown: the run threw another exception first)\n", x.what());
      } catch (...) {
      }
    }
  } say{output_error};
  if (st.error) std::rethrow_exception(st.error);
  detail::rethrow_observer_error();  // the task_observer is global: whichever run returns next reports it
  if (tracer) tracer->rethrow_write_error();  // once; a run that threw leaves it to the next run or ~runtime
  if (output_error) std::rethrow_exception(std::exchange(output_error, nullptr));
}

bool runtime_core::inside_own_task() const {
  const engine::worker* w = engine::current_worker();
  return w && w->eng == eng.get();
}

void runtime_core::publish_sim_figures() {
  if (!sim) return;
  published_virtual_ns_.store(sim->platform().virtual_time_ns(), std::memory_order_relaxed);
  published_remote_dram_.store(sim->dram_remote(), std::memory_order_relaxed);
  for (int level = 1; level < kLevels; ++level)
    published_misses_[level].store(sim->misses_at_level(level), std::memory_order_relaxed);
}

double runtime_core::virtual_time_ns() const {
  if (!sim) return -1;
  return inside_own_task() ? sim->platform().virtual_time_now_ns() : published_virtual_ns_.load(std::memory_order_relaxed);
}
long long runtime_core::simulated_remote_dram() const {
  if (!sim) return -1;
  return inside_own_task() ? sim->dram_remote() : published_remote_dram_.load(std::memory_order_relaxed);
}
long long runtime_core::simulated_misses(int cache_level) const {
  if (!sim) return -1;
  if (inside_own_task()) return sim->misses_at_level(cache_level);
  return cache_level >= 1 && cache_level < kLevels ? published_misses_[cache_level].load(std::memory_order_relaxed) : -1;
}

std::string runtime_core::describe() const {
  std::ostringstream os;
  std::string summary;
  for (const auto& e : sched::registry())
    if (cfg.scheduler == e.name) summary = e.summary;
  os << "roost: scheduler " << cfg.scheduler << " (" << summary << "), " << cfg.workers << " worker"
     << (cfg.workers == 1 ? "" : "s");
  const auto& pl = eng->placement();
  bool pinned = false;
  for (int c : pl.cpu_of_worker) pinned |= c >= 0;
  if (sim) {  // sim threads on the caller's OS thread: a worker's CPU is a PU of the simulated machine
    os << " on simulated PUs";
    for (unsigned p : pl.pu_of_worker) os << ' ' << p;
  } else if (pinned) {
    os << " pinned to CPUs";
    for (int c : pl.cpu_of_worker) os << ' ' << c;
  } else {
    os << (pl.oversubscribed ? " unpinned (oversubscribed)" : " unpinned");
  }
  os << "; topology: " << tp->summary() << "; task stacks " << topo::format_bytes(cfg.stack_size);
  if (cfg.preempt) {
    const double us = static_cast<double>(cfg.preempt_interval_ns) / 1e3;
    os << "; preemption: " << (cfg.preempt_klt ? "KLT-switching" : "signal-yield") << " every " << (us >= 1000 ? us / 1000 : us) << (us >= 1000 ? " ms" : " us")
       << (cfg.preempt_timer == preempt_timer_design::chained   ? " (one chained timer)"
           : cfg.preempt_timer == preempt_timer_design::monitor ? " (a monitor thread, no timer on the workers)"
           : cfg.preempt_timer == preempt_timer_design::naive   ? " (naive per-worker timers)"
           : cfg.preempt_timer == preempt_timer_design::cputime ? " of CPU time (per-worker CPU-time timers, at the "
                                                                  "kernel's tick granularity)"
                                                                : " (aligned per-worker timers)");
  }
  if (tracer) {
    os << "; trace " << cfg.trace << ", tasks run where spawned recorded ";
    // Simulated, every task that goes through the engine, whatever the depth (the simulated runtime takes the
    // observed paths, platform/README.md); `all` adds the second halves of the two-way joins. Said as "all"
    // for both, as two traces of different task counts showed (an outside-user campaign).
    const bool every_task = !cfg.trace_depth_auto && cfg.trace_depth == ~std::uint32_t{0};
    if (sim && every_task) os << "all (simulated)";
    else if (sim) os << "every one spawned through the engine, whatever the depth (simulated; ROOST_TRACE_DEPTH=all "
                        "adds the second halves of the two-way joins)";
    else if (cfg.trace_depth_auto) os << "as deep as " << trace::tracer::kAutoBudget * 100 << "% of each worker's time allows";
    else if (cfg.trace_depth == ~std::uint32_t{0}) os << "all";
    else os << "down to split depth " << cfg.trace_depth;
  }
  // The default is the process's: given in code it became the default when this runtime was made, and a
  // later set_default_distribution or runtime may have changed it since; from the environment it is what the
  // allocator reads unless the program set the default first (roost/memory.hpp). Said as it is: the text
  // said "given to this runtime" of an environment value the program's own default had overruled (an
  // outside-user campaign).
  const std::string now = to_string(default_distribution());
  const bool in_code = cfg.data_distribution_source.rfind("options::", 0) == 0;
  os << "; data distribution " << now << " (numa_alloc's default";
  if (!cfg.data_distribution.empty() && cfg.data_distribution != now)
    os << (in_code ? "; this runtime's options::data_distribution=" + cfg.data_distribution + " was changed since"
                   : "; ROOST_DATA_DISTRIBUTION=" + cfg.data_distribution +
                         " is not used: the program set the default (set_default_distribution, or a runtime's "
                         "options::data_distribution)");
  os << ")";
  std::string notes = eng->policy_notes();
  if (!notes.empty()) os << "; " << notes;
  if (!cfg.unread_knobs.empty()) {
    os << "; set but not read by " << cfg.scheduler << ":";
    for (std::size_t i = 0; i < cfg.unread_knobs.size(); ++i) os << (i ? ", " : " ") << cfg.unread_knobs[i];
  }
  return os.str();
}

}  // namespace detail

// Made, destroyed or described from inside a task (of another runtime), the runtime's own code takes the
// process's locks (the started engines, the listeners, the files' numbers): the task is not preempted
// there, where the next task of its worker's thread would find a lock taken for good (an outside-user
// campaign: a runtime made in a task hung).
namespace {
std::unique_ptr<detail::runtime_core> make_core(const options& o) {
  detail::no_preempt_scope np(detail::running_fiber());
  return std::make_unique<detail::runtime_core>(o);
}
}  // namespace
runtime::runtime(const options& o, const int* /*build_mode: checked by the link*/) : core_(make_core(o)) {}
runtime::~runtime() {
  detail::no_preempt_scope np(detail::running_fiber());
  core_.reset();
}

void runtime::run_erased(void (*fn)(void*), void* arg) {
  // A static runtime that exit() destroyed on another thread has no core left (the destructor's reset):
  // the same end as a run() that finds it being destroyed, instead of a null dereference.
  detail::runtime_core* core = core_.get();
  if (!core) [[unlikely]]
    platform::os::fatal("roost::runtime::run called on a destroyed runtime",
                        "call run() only on a live runtime; exit() on another thread destroys a static runtime: end "
                        "the process with std::quick_exit or _exit while a thread may still call run()");
  core->run(fn, arg);
}
unsigned runtime::workers() const { return core_->cfg.workers; }
void runtime::reprofile() { core_->eng->request_reprofile(); }
const std::string& runtime::scheduler() const { return core_->cfg.scheduler; }
const resolved_options& runtime::config() const { return core_->cfg; }
std::string runtime::describe() const {
  detail::no_preempt_scope np(detail::running_fiber());  // the default distribution's lock (as above)
  return core_->describe();
}
double runtime::virtual_time_ns() const { return core_->virtual_time_ns(); }
long long runtime::simulated_remote_dram() const { return core_->simulated_remote_dram(); }
long long runtime::simulated_misses(int cache_level) const { return core_->simulated_misses(cache_level); }

unsigned long long runtime::preemptions() const { return core_->eng->preemptions(); }
unsigned long long runtime::preempt_ticks_deferred() const { return core_->eng->preempt_ticks_deferred(); }

int this_worker_id() {
  engine::worker* w = engine::current_worker();
  return w ? static_cast<int>(w->id) : -1;
}

unsigned this_runtime_workers() {
  engine::worker* w = engine::current_worker();
  return w ? w->eng->num_workers() : 0;
}

}  // namespace roost
