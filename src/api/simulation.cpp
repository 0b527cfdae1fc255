#include "api/simulation.hpp"
#include "platform/say_once.hpp"

#include "platform/page_placement.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "api/closest_name.hpp"
#include "engine/engine_base.hpp"
#include "engine/task_path.hpp"
#include "platform/output_file.hpp"
#include "platform/trim_space.hpp"
#include "roost/errors.hpp"

namespace roost::detail {

namespace {
// ROOST_SIM_PARAMS holds both tables: the memory model's names (sim/sim_params.hpp) and the runtime
// operations' (platform/sim_costs.hpp). Each pair goes to the table that knows its name; sim_costs reports
// a name neither knows.
struct split_params {
  std::string memory, costs;
};
split_params split(const std::string& all, const std::string& source) {
  split_params out;
  std::set<std::string> seen;
  if (platform::trim_space(all).empty()) return out;  // nothing given
  std::size_t pos = 0;
  while (pos <= all.size()) {
    std::size_t comma = all.find(',', pos);
    if (comma == std::string::npos) comma = all.size();
    const std::string pair = platform::trim_space(std::string_view(all).substr(pos, comma - pos));
    pos = comma + 1;
    if (pair.empty())
      throw config_error(source + "='" + all + "': an empty pair (a comma with nothing between it and the next "
                         "comma or the end); must be name=value pairs separated by commas");
    // Spaces around a pair and around its '=' are let through; inside a name or a value they can only
    // separate two pairs, which this list separates with commas (the memory model's own lists take spaces).
    const std::size_t eq = pair.find('=');
    const std::string trimmed = platform::trim_space(std::string_view(pair).substr(0, eq));
    const std::string value =
        eq == std::string::npos ? std::string() : platform::trim_space(std::string_view(pair).substr(eq + 1));
    if (trimmed.find_first_of(platform::kWhiteSpace) != std::string::npos ||
        value.find_first_of(platform::kWhiteSpace) != std::string::npos)
      throw config_error(source + "='" + all + "': '" + pair + "' is not one name=value pair; pairs are separated by "
                         "commas");
    if (trimmed.empty())  // '=1': said so, not as the unknown parameter '' (an outside-user campaign)
      throw config_error(source + "='" + all + "': '" + pair + "' has no name; must be name=value pairs separated "
                         "by commas");
    std::string key = trimmed;
    for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!seen.insert(key).second)
      throw config_error(source + "='" + all + "': '" + trimmed + "' is given twice; give each parameter once");
    const bool memory = sim::is_param_name(trimmed) || key == "preset";
    if (!memory && !platform::sim_costs::knows(key)) {
      std::vector<std::string> all = platform::sim_costs::name_list();
      for (std::string& n : sim::param_names()) all.push_back(std::move(n));
      throw config_error(source + ": unknown parameter '" + trimmed + "'; " + roost::detail::did_you_mean(key, all) +
                         "valid: the runtime's costs (" + platform::sim_costs::names() + ") and the memory model's:\n" +
                         sim::describe_param_names());
    }
    std::string& to = memory ? out.memory : out.costs;
    to += (to.empty() ? "" : ",") + (eq == std::string::npos ? trimmed : trimmed + "=" + value);
  }
  return out;
}
platform::sim_costs costs_of(const resolved_options& cfg) {
  platform::sim_costs c;
  c.apply(split(cfg.sim_params, cfg.sim_params_source).costs, cfg.sim_params_source);
  return c;
}
sim::sharded_model model_of(const resolved_options& cfg, const topo::topology& tp) {
  return sim::sharded_model::from_topology(
      tp, sim::param_overrides::parse(split(cfg.sim_params, cfg.sim_params_source).memory, cfg.sim_params_source));
}
}  // namespace

void check_sim_params(const std::string& text, const std::string& source) {
  const split_params p = split(text, source);
  platform::sim_costs c;
  c.apply(p.costs, source);
  sim::param_overrides::parse(p.memory, source).check_without_topology();
}

simulation::simulation(const resolved_options& cfg, const topo::topology& tp)
    : model_(model_of(cfg, tp)),
      plat_(tp.num_pus(), cfg.sim_seed, costs_of(cfg)),
      report_path_(cfg.sim_report),
      params_source_(cfg.sim_params_source) {
  plat_.set_engine_tls(engine::sim_thread_locals());
  plat_.set_settler(&simulation::settle_touch, this);
  main_stack_ = platform::native_platform::main_stack();
  plat_.numa_nodes = tp.num_numa_nodes();
  plat_.numa_node_bytes = tp.numa_node_bytes();
  plat_.page_bytes = model_.page_bytes();
  // Where a page lives for the numa scheduler (platform/page_placement.hpp): the model's page map, for pages
  // a task touched already; the allocator's rule answers for distributed memory before that.
  plat_.page_node = [this](std::uintptr_t host) -> int {
    if (has_freed_.load(std::memory_order_acquire)) [[unlikely]] forget_freed();
    auto it = sim_pages_.find(sim_key(host) / kPage);
    if (it == sim_pages_.end()) return platform::page_placement::unknown;
    const std::uint32_t n = model_.home_of(it->second * kPage);
    return n == sim::page_map::none ? platform::page_placement::unknown : static_cast<int>(n);
  };
  // Distributed memory's allocations ranked in the order data_rank is first asked of them (cats's meter, as
  // it profiles), above every host address (bit 62), an offset of up to 2^40 below each: the order of a
  // program's separate allocations no longer depends on the host's address layout (an outside-user
  // campaign: cats homed the leaves of a program that allocates in its tasks differently from one process to
  // the next), and within one, neighbouring data stays neighbouring (cats's homes, soid_tree.hpp). A freed
  // allocation's rank is given out again, oldest first (forget_freed), so that a program that allocates
  // in a loop does not run out of ranks (past 2^21 live allocations they share the last one).
  plat_.data_rank = [this](std::uintptr_t host) -> std::uint64_t {
    if (has_freed_.load(std::memory_order_acquire)) [[unlikely]] forget_freed();
    platform::placed_range r;
    if (!platform::page_placement::find(host, r)) return host;
    constexpr std::uint64_t kOffsetBits = 40, kRanks = std::uint64_t{1} << 21;
    auto it = allocation_rank_.find(r.base);
    if (it == allocation_rank_.end()) {
      std::uint64_t rank = std::min(next_allocation_rank_, kRanks - 1);
      if (!free_ranks_.empty()) {
        rank = free_ranks_.front();
        free_ranks_.pop_front();
      } else if (next_allocation_rank_ < kRanks) {
        ++next_allocation_rank_;
      }
      it = allocation_rank_.emplace(r.base, rank).first;
    }
    return (std::uint64_t{1} << 62) | (it->second << kOffsetBits) |
           std::min<std::uint64_t>(host - r.base, (std::uint64_t{1} << kOffsetBits) - 1);
  };
  // Checked now, not when the report is due: a path that cannot be written is a start-up error. The path is
  // this runtime's from here (numbered, runtime.cpp): emptied now, written at the end, so that it never holds
  // an earlier run's report that reads as this one's (a run the watchdog aborted, or a runtime that fails to
  // be made, left one; an outside-user campaign). A file made here goes again if the runtime is never made
  // (drop_unclaimed_report).
  if (!report_path_.empty()) {
    // Made here: an exclusive create succeeds only where nothing had the name (not even a dangling link).
    if (const int fd = ::open(report_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666); fd >= 0) {
      report_made_here_ = true;
      ::close(fd);
    }
    std::string why = platform::output_file_problem(report_path_);
    if (why.empty() && !report_made_here_ && ::truncate(report_path_.c_str(), 0) != 0) why = std::strerror(errno);
    if (!why.empty()) {
      drop_unclaimed_report();
      throw config_error(cfg.sim_report_source + "='" + report_path_ + "': cannot be opened for writing (" + why +
                         "); valid: a regular file's path in an existing directory this process may write to");
    }
  }
  // Last: a constructor that throws has no destructor to take the listener back.
  platform::page_placement::listen_to_removals(&simulation::on_removal, this);
  try {
    // Started as the model's helper and the preemption monitor are (native_platform::start_thread): a runtime
    // made inside a task of another would have given a std::thread the one CPU the outer worker is pinned to.
    watchdog_ = platform::native_platform::start_thread([this] { watch(); });
    watchdog_started_ = true;
    (void)pthread_setname_np(static_cast<pthread_t>(watchdog_), "roost-simwatch");  // top -H, gdb, the tests
  } catch (...) {
    platform::page_placement::stop_listening(this);
    drop_unclaimed_report();
    throw;
  }
}

void simulation::drop_unclaimed_report() {
  if (report_made_here_ && !report_claimed_) ::unlink(report_path_.c_str());
  report_made_here_ = false;
}

void simulation::attach(engine::engine_base& eng, trace::tracer* tracer) {
  tracer_ = tracer;
  next_ = eng.set_touch_sink(this);
  lazy_settle_ = model_.params().lazy_settle && !tracer_;
}

// The runtime took its listeners back from its engine (runtime_core's destructor).
void simulation::detach() {
  next_ = nullptr;
  tracer_ = nullptr;
}

namespace {
// Whether the kernel has OS thread `tid` of this process asleep (state S or D in /proc/self/task/TID/stat:
// in a system call, on a lock's futex, a condition variable, a join), not running or runnable. False when
// it cannot tell.
bool asleep_in_kernel(long tid) {
  if (tid <= 0) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* close_paren = std::strrchr(buf, ')');  // the command name may hold spaces and parentheses
  if (!close_paren || close_paren[1] != ' ') return false;
  return close_paren[2] == 'S' || close_paren[2] == 'D';
}
}  // namespace

void simulation::watch() {
  const double limit_s = plat_.costs().stall_wall_s;
  // Every 0.25 s, or a quarter of a shorter limit (at least 10 ms): a limit of 0.1 s was looked at only after
  // 0.25 s, and a test of what the watchdog does during a long touch needed a touch of more than 0.25 s.
  const double period_s = std::clamp(limit_s / 4, 0.01, 0.25);
  const auto period = std::chrono::duration<double>(period_s);
  platform::sim_watch rule(limit_s, period_s, plat_.sample());
  // The looks in a row, up to this one, that found the sim thread asleep in the kernel: a task blocked in a
  // system call, not one spinning. Both end the process (nothing else can run meanwhile, and a wait another
  // task must end would last for ever), but the spin-wait's words blamed a task that read its input or joined
  // a thread of its own doing real work (an outside-user campaign). The last two looks decide (the one look of
  // a stall as short as a period): a task that computed for a while and then blocked is blocked, and one
  // look that found the thread runnable on a busy machine, on its way into the call, does not make a spin.
  unsigned asleep_looks = 0;
  // A touch's walk seen at this look or the one before, read beside the sample: a walk that ended between the
  // sample and a later read, before its touch was charged, left a stall with nothing to forgive it (at
  // stall_wall_s=0, a TSan run of ALongTouchOutlastingTheWatchdogsLimitCompletes, once the look had grown by
  // the kernel's state read above). The charge follows its walk at once, so the next look sees progress.
  std::size_t walk_last_look = 0;
  std::unique_lock<std::mutex> lk(watch_mu_);
  while (!watch_cv_.wait_for(lk, period, [this] { return stopping_; })) {
    const platform::sim_sample now = plat_.sample();
    const std::size_t walking = touch_in_walk_.load(std::memory_order_relaxed);
    const std::size_t walk_bytes = walking ? walking : walk_last_look;
    walk_last_look = walking;
    const platform::sim_watch::verdict v = rule.look(now);
    // Asked only during a stall: a run that progresses costs the watchdog no system calls.
    asleep_looks = rule.stalled_s() > 0 && asleep_in_kernel(plat_.run_os_thread()) ? asleep_looks + 1 : 0;
    if (v == platform::sim_watch::verdict::fine) continue;
    char why[1024];
    if (v == platform::sim_watch::verdict::idling) {
      std::snprintf(why, sizeof why,
                    "for %.1f s of real time every simulated worker has only looked for work, finding none it "
                    "could take: no task has run a runtime operation or declared work, and none was stolen, "
                    "since virtual time %.0f ns, and the polls have moved the clock to %.0f ns (seed %llu). Work "
                    "the scheduler holds reaches no worker: an error of roost's scheduler; please report it with "
                    "the seed, the scheduler and the topology (stall_wall_s in %s sets this limit).",
                    rule.idling_s(), now.busy_clock, now.clock, static_cast<unsigned long long>(plat_.seed()),
                    params_source_.c_str());
      platform::os::fatal("roost: simulated platform: no task progress", why);
    }
    if (v == platform::sim_watch::verdict::declared_only) {
      // Said by the sim thread at its next declared work (note_declared_only), where the running task's id is
      // its own to read; once a runtime. The rule counts again from here either way.
      if (!work_note_asked_.load(std::memory_order_relaxed)) {
        work_note_s_.store(rule.declared_only_s(), std::memory_order_relaxed);
        work_note_asked_.store(true, std::memory_order_release);
      }
      rule.forgive_declared_only();
      continue;
    }
    const double still_s = rule.stalled_s();
    if (const std::size_t bytes = walk_bytes) {
      // A walk ends (its bytes are this process's memory, checked before it began): slow, never a hang. It
      // ended the process, so whether a correct program of a large touch ran depended on the host's speed
      // (an outside-user campaign). Said once a process; the limit counts again from here. Without the task's
      // path: the process goes on, and the task's id is the sim thread's to write (reading it here was a data
      // race under TSan; the fatal report below reads it as the process ends).
      ROOST_SAY_ONCE("roost: simulated platform: worker %u has been inside one roost::touch of %zu bytes for %.2f s "
                     "of real time (virtual time %.0f ns, seed %llu): the simulated memory hierarchy walks "
                     "every cache line a touch names, so the simulation goes on, slowly. Declare the bytes the "
                     "kernel itself touches (its block, not the whole array) to simulate faster.\n",
                     plat_.running_thread(), bytes, still_s, plat_.running_clock(),
                     static_cast<unsigned long long>(plat_.seed()));
      rule.forgive_stall();
      continue;
    }
    std::string task = "?";
    if (const void* t = plat_.running_task())
      task = engine::format_spawn_path(engine::spawn_path(*static_cast<const task_id*>(t)));
    // A deep task's path, cut to its last levels: the message must keep its advice (the buffer is bounded).
    if (task.size() > 160) task = "..." + task.substr(task.size() - 157);
    const bool blocked = asleep_looks >= (still_s > period_s ? 2u : 1u);
    std::snprintf(why, sizeof why,
                  blocked
                      ? "worker %u's task %s has been blocked in the kernel for %.1f s of real time, in a system "
                        "call (a read, a sleep), on a lock, a condition variable or a thread's join (virtual time "
                        "%.0f ns, seed %llu). Every simulated worker runs on this one OS thread, so none can run "
                        "meanwhile, and a wait costs no virtual time: a wait that another task must end never ends "
                        "here (wait with a task_group instead, and hold no lock across a spawn, a wait, a "
                        "roost::touch, touch_rows or compute). A wait that ends by itself (input, a sleep, a "
                        "thread's own work) may last as long as stall_wall_s in %s allows: raise it."
                      : "worker %u has run task %s for %.1f s of real time without reaching a runtime operation "
                        "(virtual time %.0f ns, seed %llu). A task that spin-waits for another task, or blocks its "
                        "thread on a lock or a condition variable that another task must release or signal, can "
                        "never see it progress here: every simulated worker runs on this one OS thread, and only a "
                        "runtime operation lets another run. Wait with a task_group instead, and hold no lock "
                        "across a spawn, a wait, a roost::touch, touch_rows or compute, where another simulated "
                        "worker may run (stall_wall_s in %s sets this limit).",
                  plat_.running_thread(), task.c_str(), still_s, plat_.running_clock(),
                  static_cast<unsigned long long>(plat_.seed()), params_source_.c_str());
    platform::os::fatal("roost: simulated platform: no progress", why);
  }
}

simulation::~simulation() {
  platform::page_placement::stop_listening(this);
  drop_unclaimed_report();  // a runtime that failed to be made writes no report (runtime.cpp drops it sooner)
  {
    std::lock_guard<std::mutex> lk(watch_mu_);
    stopping_ = true;
  }
  watch_cv_.notify_all();
  if (watchdog_started_) platform::native_platform::join_thread(watchdog_);
}

void simulation::claim_report() { report_claimed_ = true; }

void simulation::place(const topo::topology& tp, const topo::placement& pl) {
  std::vector<platform::sim_platform::worker_place> places(pl.pu_of_worker.size());
  // A steal's distance: the innermost shared level that is a cache. An SMT core without a cache of its own
  // shares none: its PUs' nearest shared cache is the one above (an outside-user campaign: every steal
  // under one L3 of such a machine was charged and counted as another cache's).
  const auto& levels = tp.sharing_levels();
  const auto cache_level = std::find_if(levels.begin(), levels.end(), [](const auto& l) { return l.cache_bytes > 0; });
  const bool shared_cache = cache_level != levels.end();
  for (std::size_t w = 0; w < places.size(); ++w) {
    const unsigned pu = pl.pu_of_worker[w];
    places[w].cache = shared_cache ? static_cast<int>(cache_level->domain_of_pu[pu]) : static_cast<int>(pu);
    places[w].socket = static_cast<int>(tp.pu(pu).package);
  }
  plat_.set_places(std::move(places));
  pu_of_worker_ = pl.pu_of_worker;
  const sim::sim_params& p = model_.params();
  if (p.dram_sharing) {
    sharing_ = std::make_unique<sim::shared_bandwidth>(static_cast<unsigned>(pu_of_worker_.size()),
                                                       model_.num_numa(), p.dram_node_bw, p.link_bw);
    home_lines_.assign(model_.num_numa(), 0.0);
  }
}

// dram.sharing=nodes: the rate the touch just walked (runs_, run_results_) may draw from memory, given the
// streams running now (shared_bandwidth.hpp). Its memory lines are split among their home nodes in each run
// by the run's pages' homes (the walk placed them): exact for a stream, which reads every line of a page.
double simulation::memory_rate_cap(int worker, unsigned pu) {
  std::fill(home_lines_.begin(), home_lines_.end(), 0.0);
  const unsigned len = model_.chain_length(pu);
  const std::size_t page = model_.page_bytes();
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    const sim::region_result& r = run_results_[i];
    const double memory_lines = static_cast<double>(r.served[len] + r.served[len + 1]);
    if (!(memory_lines > 0)) continue;
    const std::uint64_t first = runs_[i].addr / page, last = (runs_[i].addr + runs_[i].bytes - 1) / page;
    const double per_page = memory_lines / static_cast<double>(last - first + 1);
    for (std::uint64_t pg = first; pg <= last; ++pg) {
      const std::uint32_t home = model_.home_of(pg * page);
      if (home < home_lines_.size()) home_lines_[home] += per_page;
    }
  }
  return sharing_->rate_cap(static_cast<unsigned>(worker), model_.numa_of(pu), home_lines_.data(),
                            plat_.clock_ns());
}

// The region's lines walk the touching worker's caches (hits, misses, coherence, the page's node), and the
// worker is charged the region's compute part and what the model says its lines cost as a stream
// (region_cost_ns: the first line at latency, the rest at bandwidth; one stream unless dram.sharing=nodes,
// src/sim/README.md, "Bandwidth").
bool simulation::charges(int worker) const {
  return platform::t_sim == &plat_ && worker >= 0 && static_cast<std::size_t>(worker) < pu_of_worker_.size();
}

simulation::charge simulation::walk(int worker, const void* base, std::size_t bytes, access mode, const char* call) {
  const sim::access_kind kind = mode == access::read    ? sim::access_kind::read
                                : mode == access::write ? sim::access_kind::write
                                                        : sim::access_kind::read_write;
  const unsigned pu = pu_of_worker_[worker];
  // Host pages are numbered in the order the simulation first sees them (a physical address space of its
  // own): the caches' set indices then do not depend on where this process's allocator and ASLR put the
  // data, and a report is the same from one process to the next. Runs of consecutive simulated pages are
  // one region each; the result is charged as one stream.
  const auto host = reinterpret_cast<std::uintptr_t>(base);
  // At most what one roost::compute call may charge (on_compute): past it the virtual clock, a double,
  // loses later charges (a touch of 4 KiB at touch_ns_per_byte=1e15 left every later cost rounded away: an
  // outside-user campaign). Before the walk, so that the model is left as it was.
  if (const double ns = static_cast<double>(bytes) * plat_.costs().touch_ns_per_byte; ns > kMostChargeNs) {
    std::ostringstream os;
    os << call << "(base=" << base << ", bytes=" << bytes << "): " << bytes << " bytes at touch_ns_per_byte="
       << plat_.costs().touch_ns_per_byte << " (ROOST_SIM_PARAMS) are " << ns
       << " ns of virtual time, more than one call may charge (1e15 ns); give a smaller touch_ns_per_byte";
    throw usage_error(os.str());
  }
  if (const double ns = static_cast<double>(bytes) * plat_.costs().touch_ns_per_byte; plat_.clock() + ns > kMostClockNs) {
    std::ostringstream named;
    named << call << "(base=" << base << ", bytes=" << bytes << ")";
    throw_past_clock(named.str(), ns);
  }
  if (bytes >= kCheckMappedBytes && !mapped(host, bytes)) {
    std::ostringstream os;
    os << call << "(base=" << base << ", bytes=" << bytes << "): the region is not all memory of this "
       << "process (the simulated platform walks every cache line a touch names); a region must name the "
       << "bytes the kernel touches";
    throw usage_error(os.str());
  }
  // The watchdog's "slow, not stuck" holds while the model works on this touch, and no longer: the charge
  // at the end may switch to another worker, whose task may spin, and that stall was forgiven as this
  // touch's walk for ever (an outside-user campaign: a silent hang, the message naming the wrong worker's
  // 4 KiB touch). Cleared just before the charge (and by the guard when something throws).
  touch_in_walk_.store(bytes, std::memory_order_relaxed);
  struct walk_done {
    std::atomic<std::size_t>& t;
    ~walk_done() { t.store(0, std::memory_order_relaxed); }
  } done{touch_in_walk_};
  // Host time, for the report's speed figures only: one clock read per touch, not per line.
  const auto model_start = std::chrono::steady_clock::now();
  runs_.clear();
  if (has_freed_.load(std::memory_order_acquire)) [[unlikely]] forget_freed();
  if (host < main_stack_.base && host + bytes > main_stack_.lo) [[unlikely]]
    check_stack_pages_mapped(std::max<std::uintptr_t>(host, main_stack_.lo),
                             std::min<std::uintptr_t>(host + bytes, main_stack_.base), call);
  for (std::uintptr_t at = host, end = host + bytes; at < end;) {
    std::uint64_t sim_at = sim_address(at, pu, call);
    std::uintptr_t run_end = std::min<std::uintptr_t>(end, sim_key_page_end(at));
    while (run_end < end && sim_address(run_end, pu, call) == sim_at + (run_end - at))
      run_end = std::min<std::uintptr_t>(end, sim_key_page_end(run_end));
    runs_.push_back({sim_at, run_end - at});
    at = run_end;
  }
  // The runs are walked together (the model's two host threads share them); no charge comes between them,
  // so nothing else touches memory meanwhile.
  if (lazy_settle_ && !sharing_) {
    if (model_.can_post(model_.lines_of(runs_.data(), runs_.size()))) {
      const sim::sharded_model::walk_ticket t = model_.post(pu, runs_.data(), runs_.size(), kind);
      model_time_ += std::chrono::steady_clock::now() - model_start;
      touch_in_walk_.store(0, std::memory_order_relaxed);
      // The token: the ticket's order and slot (a slot number below 2^24: one a sim thread, and the posts
      // in flight, sharded_model::kOrder).
      plat_.on_touch_deferred(bytes, t.lines, model_.geometry().region_cost_floor_ns(t.lines),
                              (t.seq << 24) | t.slot);
      return {t.lines, 0, 0};  // the rest is known at the settlement: a memory record is made only without it
    }
  }
  run_results_.resize(runs_.size());
  model_.access_regions(pu, runs_.data(), runs_.size(), kind, run_results_.data());
  const sim::region_result total = touch_total(run_results_.data(), run_results_.size());
  double memory_ns;
  if (sharing_) {
    memory_ns = model_.region_cost_ns(total, 1, memory_rate_cap(worker, pu));
    sharing_->record(static_cast<unsigned>(worker), model_.numa_of(pu), home_lines_.data(),
                     plat_.clock_ns() + memory_ns);
  } else {
    memory_ns = model_.region_cost_ns(total);
  }
  model_time_ += std::chrono::steady_clock::now() - model_start;
  touch_in_walk_.store(0, std::memory_order_relaxed);
  plat_.on_touch(bytes, total.lines, memory_ns);
  return {total.lines, total.remote_lines, memory_ns};
}

// One stream: it waits for its slowest line, in whichever run (it waited for the first run's slowest, so a
// touch whose first run hit a cache hid the memory latency of the others: region_cost_ns).
sim::region_result simulation::touch_total(const sim::region_result* runs, std::size_t n) {
  sim::region_result total = runs[0];
  for (std::size_t i = 1; i < n; ++i) {
    const sim::region_result& r = runs[i];
    total.lines += r.lines;
    total.coherence_misses += r.coherence_misses;
    total.remote_lines += r.remote_lines;
    for (std::size_t d = 0; d < total.served.size(); ++d) total.served[d] += r.served[d];
    total.latency_sum_ns += r.latency_sum_ns;
    total.lead_latency_ns = std::max(total.lead_latency_ns, r.lead_latency_ns);
  }
  return total;
}

// The platform settles a deferred touch (sim_platform::on_touch_deferred): its walk's result, charged as
// walk() charges one at once.
double simulation::settle_touch(void* self_ptr, std::uint64_t token) {
  simulation& self = *static_cast<simulation*>(self_ptr);
  const auto start = std::chrono::steady_clock::now();
  sim::sharded_model::walk_ticket t;
  t.seq = token >> 24;
  t.slot = static_cast<std::uint32_t>(token & ((1u << 24) - 1));
  // run_results_ is free: a settlement comes at a charge or a switch, never inside a walk.
  sim::host_vector<sim::region_result>& runs = self.run_results_;
  runs.resize(self.model_.regions_of(t));
  // The watchdog's "slow, not stuck" while this waits for the walk.
  self.touch_in_walk_.store(runs.size() * self.model_.page_bytes(), std::memory_order_relaxed);
  self.model_.collect(t, runs.data());
  self.touch_in_walk_.store(0, std::memory_order_relaxed);
  const double memory_ns = self.model_.region_cost_ns(touch_total(runs.data(), runs.size()));
  self.model_time_ += std::chrono::steady_clock::now() - start;
  return memory_ns;
}

// After the touch it describes (trace_format.hpp, "memory").
void simulation::record_memory(int worker, const charge& c) {
  if (tracer_) tracer_->memory(static_cast<unsigned>(worker), c.lines, std::llround(c.memory_ns), c.remote_lines);
}

// The watchdog saw only declared work for stall_wall_s (sim_watch.hpp, declared_only): on the sim thread,
// whose task this is, the note that names it. A task that polls another task's flag with compute or touch
// never lets that task run, and the run never ends; a long kernel goes on. Once a runtime: work_note_said_
// is this (one) sim OS thread's.
void simulation::note_declared_only(int worker) {
  if (work_note_said_ || !charges(worker)) return;
  work_note_said_ = true;
  std::string task = "?";
  if (const void* t = plat_.running_task())
    task = engine::format_spawn_path(engine::spawn_path(*static_cast<const task_id*>(t)));
  std::fprintf(stderr,
               "roost: simulated platform: for %.1f s of real time only declared work (roost::compute, "
               "roost::touch) has been charged, last by worker %d's task %s, and no task has started, ended, "
               "spawned or been stolen (virtual time %.0f ns, seed %llu). If that task polls for another "
               "task's progress, the run never ends: every simulated worker runs on this one OS thread, "
               "declared work moves only the poller's own clock, and the other task needs a runtime operation "
               "to run. Wait with a task_group instead. A long kernel is no such wait: it goes on (stall_wall_s "
               "in %s sets when this is said).\n",
               work_note_s_.load(std::memory_order_relaxed), worker, task.c_str(), plat_.clock(),
               static_cast<unsigned long long>(plat_.seed()), params_source_.c_str());
}

void simulation::on_touch(int worker, const void* base, std::size_t bytes, access mode) {
  if (work_note_asked_.load(std::memory_order_acquire)) [[unlikely]] note_declared_only(worker);
  if (charges(worker) && bytes) {
    const charge c = walk(worker, base, bytes, mode, "roost::touch");
    if (next_) next_->on_touch(worker, base, bytes, mode);
    record_memory(worker, c);
    return;
  }
  if (next_) next_->on_touch(worker, base, bytes, mode);
}

// A large region must be this process's memory: the model numbers and walks every page a touch names
// (1 TiB past a 512 KiB buffer grew its page map by gigabytes, then stalled). msync(MS_ASYNC) fails with
// ENOMEM where a page of the range is not mapped, and does nothing else to anonymous memory.
bool simulation::mapped(std::uintptr_t host, std::size_t bytes) {
  // msync takes an address aligned to the system's page (EINVAL otherwise, which would read as mapped).
  static const std::uintptr_t page = static_cast<std::uintptr_t>(platform::os::page_size());
  const std::uintptr_t first = host & ~(page - 1);
  return !(::msync(reinterpret_cast<void*>(first), host + bytes - first, MS_ASYNC) != 0 && errno == ENOMEM);
}

// Each row walked and checked alone as a touch let rows of 32 MiB over a 512 KiB buffer pass, 1 TiB in
// all, and the page map grew until the process ran out of memory. The rows together are checked first: the
// span from the first row's start to the last row's end, in one call (rows of one array lie inside it);
// where that span has gaps, each row alone, the first row that is not memory of the process named (rows in
// separate mappings were refused as "not all memory" once their span reached 64 MiB, mapped as they were:
// an outside-user campaign). A row checked costs less than its walk. Then each row is walked and charged as
// a stream of its own.
void simulation::on_touch_rows(int worker, const void* base, std::size_t row_bytes, std::size_t rows,
                               std::size_t stride, access mode) {
  if (work_note_asked_.load(std::memory_order_acquire)) [[unlikely]] note_declared_only(worker);
  if (charges(worker) && rows > 1 && row_bytes != 0) {
    // touch_rows checked that the span ends inside the address space (api/touch.cpp).
    const std::size_t span = (rows - 1) * stride + row_bytes;
    const bool large = row_bytes >= kCheckMappedBytes / rows || span >= kCheckMappedBytes;
    if (large && !mapped(reinterpret_cast<std::uintptr_t>(base), span)) {
      for (std::size_t r = 0; r < rows; ++r) {
        const std::uintptr_t row = reinterpret_cast<std::uintptr_t>(base) + r * stride;
        if (mapped(row, row_bytes)) continue;
        std::ostringstream os;
        os << "roost::touch_rows(base=" << base << ", row_bytes=" << row_bytes << ", rows=" << rows
           << ", stride=" << stride << "): row " << r << " (at " << reinterpret_cast<const void*>(row)
           << ") is not all memory of this process (the simulated platform walks every cache line a touch "
           << "names); the rows must lie in the memory the kernel touches";
        throw usage_error(os.str());
      }
    }
  }
  if (!charges(worker)) {
    if (next_) next_->on_touch_rows(worker, base, row_bytes, rows, stride, mode);
    return;
  }
  // Each row is charged as a stream of its own, as a touch of it would be; the listener (the tracer) gets
  // the rows as one record, as it does natively, and one memory record for them all (it got a touch and a
  // memory record per row: a 256-row tile wrote 512 records, and roost-analyze read 256 touches).
  charge all{};
  // The errors of the walk name the call the program made (they named roost::touch: an outside-user campaign).
  // A parameter, not the simulation's state: a row's charge may let another worker run its own touch.
  if (row_bytes != 0)
    for (std::size_t r = 0; r < rows; ++r) {
      const charge c = walk(worker, static_cast<const char*>(base) + r * stride, row_bytes, mode, "roost::touch_rows");
      all.lines += c.lines;
      all.remote_lines += c.remote_lines;
      all.memory_ns += c.memory_ns;
    }
  if (next_) next_->on_touch_rows(worker, base, row_bytes, rows, stride, mode);
  if (row_bytes != 0 && rows != 0) record_memory(worker, all);
}

void simulation::on_compute(int worker, std::uint64_t operations) {
  if (work_note_asked_.load(std::memory_order_acquire)) [[unlikely]] note_declared_only(worker);
  if (charges(worker)) {
    // The virtual clock counts ns in a double: past 2^53 ns a charge of a few ns is lost, and one call of
    // 10^19 operations left every later run at 0 ns and wrapped the count of operations (an outside-user
    // campaign). A call may charge what a cost parameter may be at most (1e15 ns, sim_costs.cpp).
    const double ns = static_cast<double>(operations) * plat_.costs().op_ns;
    if (ns > kMostChargeNs) {
      std::ostringstream os;
      os << "roost::compute(" << operations << "): " << operations << " operations at op_ns=" << plat_.costs().op_ns
         << " are " << ns << " ns of virtual time, more than one call may charge (1e15 ns); give a kernel's "
         << "own count of operations";
      throw usage_error(os.str());
    }
    if (plat_.clock() + ns > kMostClockNs) throw_past_clock("roost::compute(" + std::to_string(operations) + ")", ns);
    plat_.on_compute(operations);
  }
  if (next_) next_->on_compute(worker, operations);
}

// Each call's limit (kMostChargeNs) did not bound their sum: a hundred calls of 1e15 ns left the clock at
// 1e17, where a double's steps are 16 ns, and later charges of 10 ns were lost (an outside-user campaign).
void simulation::throw_past_clock(const std::string& call, double ns) const {
  const double at = plat_.clock();
  std::ostringstream os;
  os << call << ": " << ns << " ns more would take the worker's virtual clock from " << at
     << " ns past 1e15 ns, the most a simulation may run (a double's steps there are 0.125 ns: later charges "
     << "would be rounded away); simulate less virtual time (a smaller problem, or smaller costs)";
  throw usage_error(os.str());
}

void simulation::on_removal(void* self, std::uintptr_t base, std::size_t bytes) {
  auto* s = static_cast<simulation*>(self);
  std::lock_guard lk(s->freed_mu_);
  s->freed_.emplace_back(base, bytes);
  s->has_freed_.store(true, std::memory_order_release);
  // Between runs nothing takes the queue: a program that frees in a loop outside its runs would grow it
  // by an entry a free for as long as the runtime lives.
  if (s->freed_.size() >= s->freed_compact_at_) {
    drop_covered(s->freed_);
    s->freed_compact_at_ = std::max<std::size_t>(kFreedCompactMin, 2 * s->freed_.size());
  }
}

// Drops each range that the ranges before it cover: forget_freed forgets a range's pages when it reaches
// the first range holding them, in the queue's order, so a covered one later has nothing left to forget
// and dropping it changes nothing. What stays is at most one entry per distinct range freed, which the
// host's mmap, giving freed addresses out again, keeps as few as the ranges the program has in use.
void simulation::drop_covered(freed_ranges& freed) {
  // Disjoint [begin, end) of the union so far, by begin; in host memory (a free must not move the program's
  // heap by how much the host's mmap reused).
  std::map<std::uintptr_t, std::uintptr_t, std::less<>, sim::host_allocator<std::pair<const std::uintptr_t, std::uintptr_t>>> seen;
  std::size_t kept = 0;
  for (const auto& [base, bytes] : freed) {
    std::uintptr_t b = base, e = base + bytes;
    auto it = seen.upper_bound(b);
    if (it != seen.begin() && std::prev(it)->second >= e) continue;  // inside one piece of the union
    freed[kept++] = {base, bytes};
    // Merge [b, e) into the union: the piece before it if they meet, and every piece it reaches.
    if (it != seen.begin() && std::prev(it)->second >= b) {
      --it;
      b = it->first;
      e = std::max(e, it->second);
      it = seen.erase(it);
    }
    while (it != seen.end() && it->first <= e) {
      e = std::max(e, it->second);
      it = seen.erase(it);
    }
    seen.emplace(b, e);
  }
  freed.resize(kept);
}

void simulation::forget_freed() {
  freed_ranges freed;
  {
    std::lock_guard lk(freed_mu_);
    freed.swap(freed_);
    has_freed_.store(false, std::memory_order_relaxed);
    freed_compact_at_ = kFreedCompactMin;
  }
  for (const auto& [base, bytes] : freed) {
    // An allocation at this address later is another one (data_rank); its rank goes to the next one met.
    if (auto it = allocation_rank_.find(base); it != allocation_rank_.end()) {
      free_ranks_.push_back(it->second);
      allocation_rank_.erase(it);
    }
    // The touched pages of the range, in host order: a walk of the range's pages or of the map, the shorter.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> gone;  // (host page, simulated page)
    const std::uint64_t first = base / kPage, end = (base + bytes + kPage - 1) / kPage;
    if (end - first <= sim_pages_.size()) {
      for (std::uint64_t h = first; h < end; ++h)
        if (auto it = sim_pages_.find(h); it != sim_pages_.end()) gone.emplace_back(h, it->second);
    } else {
      for (const auto& [h, s] : sim_pages_)
        if (h >= first && h < end) gone.emplace_back(h, s);
      std::sort(gone.begin(), gone.end());
    }
    // With a model page of kPage, the simulated pages are given out again (the model's page map stays as
    // large as the memory in use), oldest first; with larger model pages, which hold several of them, a model
    // page's simulated pages are given out again together, once every one it gave out is freed (note_freed).
    // A model page smaller than kPage (page_size below 4 KiB): a simulated page holds several, given out
    // again as one, and all of them lose their node (per_model_page was 0 there: a division by zero at the
    // first freed page, an outside-user campaign).
    const bool reuse = model_.page_bytes() <= kPage;
    const std::uint64_t per_model_page = reuse ? 1 : model_.page_bytes() / kPage;
    const std::uint64_t model_pages_per_sim_page = reuse ? kPage / model_.page_bytes() : 1;
    std::vector<std::uint64_t> model_pages;
    for (const auto& [h, s] : gone) {
      sim_pages_.erase(h);
      if (!reuse) {
        note_freed(s / per_model_page, model_pages);
        continue;
      }
      for (std::uint64_t k = 0; k < model_pages_per_sim_page; ++k) model_pages.push_back(s * model_pages_per_sim_page + k);
      free_sim_pages_[model_.home_of(s * kPage)].push_back(s);  // before unplace, below; none: kAnyNode
    }
    if (!model_pages.empty()) model_.unplace(model_pages);
  }
}

std::uint64_t simulation::take_freed(free_lists& lists, int node) {
  auto pop = [](std::deque<std::uint64_t>& q) {
    const std::uint64_t u = q.front();
    q.pop_front();
    return u;
  };
  if (node >= 0) {  // the node's own, else one never placed (no line of it was ever cached)
    for (const std::uint32_t key : {static_cast<std::uint32_t>(node), kAnyNode})
      if (auto it = lists.find(key); it != lists.end() && !it->second.empty()) return pop(it->second);
    return kNoBlock;
  }
  // Interleaving: a unit goes back to the node its number gives it, so one freed there (or never placed).
  const std::uint64_t nodes = model_.num_numa();
  for (auto& [key, q] : lists)
    if (!q.empty() && (key == kAnyNode || q.front() % nodes == key)) return pop(q);
  return kNoBlock;
}

void simulation::note_freed(std::uint64_t block, std::vector<std::uint64_t>& unplaced) {
  auto it = block_use_.find(block);
  if (it == block_use_.end()) return;
  ++it->second.freed;
  recycle_if_done(block, unplaced);
}

void simulation::recycle_if_done(std::uint64_t block, std::vector<std::uint64_t>& unplaced) {
  auto it = block_use_.find(block);
  if (it == block_use_.end() || it->second.freed < it->second.given) return;
  // Not while first-touch pages are still given out of it (the block being filled): it comes back when the
  // next of its pages given then is freed, or when a rule's block moves the fresh pages past it (sim_address).
  const std::uint64_t per_model_page = model_.page_bytes() / kPage, first = block * per_model_page;
  const bool open = (next_sim_page_ > first && next_sim_page_ < first + per_model_page) ||
                    (ft_next_ > first && ft_next_ < first + per_model_page && ft_next_ < ft_end_);
  if (open) return;
  block_use_.erase(it);
  free_blocks_[model_.home_of(first * kPage)].push_back(block);  // never placed: page_map::none, kAnyNode
  unplaced.push_back(block);
}

void simulation::throw_not_memory(const char* call, std::uintptr_t at) {
  std::ostringstream os;
  os << call << ": byte " << reinterpret_cast<const void*>(at) << " of a touched region is not memory of "
     << "this process (the simulated platform walks every cache line a touch names); a region must name the "
     << "bytes the kernel touches";
  throw usage_error(os.str());
}

void simulation::check_stack_pages_mapped(std::uintptr_t from, std::uintptr_t to, const char* call) {
  for (std::uintptr_t page = from / kPage; page <= (to - 1) / kPage; ++page) {
    if (stack_pages_mapped_.count(page)) continue;
    const std::uintptr_t at = std::max<std::uintptr_t>(from, page * kPage);
    if (!mapped(at, 1)) throw_not_memory(call, at);
    stack_pages_mapped_.insert(page);
  }
}

std::uintptr_t simulation::sim_key_page_end(std::uintptr_t host) const {
  const std::uintptr_t end = host + (kPage - sim_key(host) % kPage);
  if (host < main_stack_.lo) return std::min(end, main_stack_.lo);
  if (host < main_stack_.base) return std::min(end, main_stack_.base);
  return end;
}

std::uint64_t simulation::sim_address(std::uintptr_t host, unsigned pu, const char* call) {
  const std::uintptr_t key = sim_key(host);
  auto [it, fresh] = sim_pages_.try_emplace(key / kPage, 0);
  if (fresh) {
    // A page met for the first time must be memory of this process, whatever the touch's size (the check of
    // the whole region is only for touches of kCheckMappedBytes or more, and unmapped bytes below that were
    // simulated as memory without a word: an outside-user campaign). Once a page: a system call per new
    // 4 KiB, not per touch.
    if (!mapped(host, 1)) {
      sim_pages_.erase(it);
      throw_not_memory(call, host);
    }
    // A page of distributed memory (roost::numa_alloc, fine or coarse) goes where its rule puts it on the
    // simulated machine's nodes; any other page by the model's own policy (first touch, or interleave).
    platform::placed_range r;
    const bool ruled = platform::page_placement::find(host, r) && r.rule != platform::page_rule::first_touch;
    // A coarse part lives whole on one node. numa_alloc checks this machine's nodes, or the simulated
    // machine's when a task of it allocates; memory made outside every run is checked here.
    if (ruled && r.rule == platform::page_rule::per_part && model_.num_numa() > 1 && plat_.numa_node_bytes != 0 &&
        r.part_bytes > plat_.numa_node_bytes) {
      sim_pages_.erase(it);
      std::ostringstream os;
      os << call << "(" << reinterpret_cast<const void*>(host) << "): memory of roost::numa_alloc(" << r.bytes
         << " bytes, coarse) in parts of " << r.part_bytes << " bytes, larger than a simulated NUMA node ("
         << plat_.numa_node_bytes << " bytes); use more parts, or fine";
      throw usage_error(os.str());
    }
    const int node = ruled ? platform::page_placement::node_by_rule(r, host, model_.num_numa()) : -1;
    // A model page larger than kPage holds several host pages, and the rule gives them one node
    // (page_placement::rule_page_bytes): the range's host pages of that model page get its simulated pages
    // together, aligned, whatever order they are touched in. Given one by one, a model page took host pages
    // of two rule pages (or of other memory), and the one placed last moved it: a touch of fine memory at
    // page_size=8K was all remote (an outside-user campaign).
    const std::uint64_t per_model_page = model_.page_bytes() > kPage ? model_.page_bytes() / kPage : 1;
    if (ruled && per_model_page > 1) {
      const std::uint64_t model_page = model_.page_bytes();
      const std::uintptr_t first = r.base + (host - r.base) / model_page * model_page;
      const std::uintptr_t end = std::min<std::uintptr_t>(first + model_page, r.base + r.bytes);
      std::uint64_t block;
      if (const std::uint64_t freed = take_freed(free_blocks_, node); freed != kNoBlock) {
        block = freed * per_model_page;
      } else {
        const std::uint64_t open = next_sim_page_ % per_model_page ? next_sim_page_ / per_model_page : kNoBlock;
        block = (next_sim_page_ + per_model_page - 1) / per_model_page * per_model_page;
        next_sim_page_ = block + per_model_page;
        // The first-touch block the fresh pages were filling is left: freed already, it comes back now.
        if (open != kNoBlock) {
          std::vector<std::uint64_t> unplaced;
          recycle_if_done(open, unplaced);
          if (!unplaced.empty()) model_.unplace(unplaced);
        }
      }
      note_given(block / per_model_page, static_cast<std::uint32_t>((end - first + kPage - 1) / kPage));
      const std::uint64_t mine = block + (host / kPage - first / kPage);
      sim_pages_.erase(it);  // inserting its neighbours may rehash: the entry is written again below
      for (std::uintptr_t h = first; h < end; h += kPage) sim_pages_[h / kPage] = block + (h - first) / kPage;
      if (node >= 0 && model_.num_numa() > 1) model_.place(block * kPage, end - first, static_cast<unsigned>(node));
      return mine * kPage + host % kPage;
    }
    bool reused = false;
    // Where a freed unit may come from: the rule's node, the first toucher's, or under interleaving one that
    // goes back to its own.
    const int want = node >= 0 ? node : interleaved() ? -1 : static_cast<int>(model_.numa_of(pu));
    if (per_model_page > 1) {
      // A freed block refilled page by page, once the fresh pages reach a block's start; placed with its first
      // page (place_reused, below), after which the block keeps its node as a fresh one does.
      if (ft_next_ == ft_end_ && next_sim_page_ % per_model_page == 0)
        if (const std::uint64_t b = take_freed(free_blocks_, want); b != kNoBlock) {
          ft_next_ = b * per_model_page;
          ft_end_ = ft_next_ + per_model_page;
          reused = true;
        }
      it->second = ft_next_ < ft_end_ ? ft_next_++ : next_sim_page_++;
      note_given(it->second / per_model_page, 1);
    } else {
      const std::uint64_t freed = take_freed(free_sim_pages_, want);
      reused = freed != kNoBlock;
      it->second = reused ? freed : next_sim_page_++;
    }
    if (node >= 0 && model_.num_numa() > 1) model_.place(it->second * kPage, kPage, static_cast<unsigned>(node));
    else if (reused) model_.place_reused(pu, it->second * kPage);
  }
  return it->second * kPage + key % kPage;
}

std::string simulation::memory_json() const {
  std::ostringstream os;
  os << "\"memory_model\": \"" << model_.summary() << "\",\n  \"memory_params\": " << sim::params_json(model_.params())
     << ",\n  \"caches\": [";
  for (std::size_t i = 0; i < model_.num_instances(); ++i) {
    const auto& in = model_.instance(i);
    const auto& c = model_.counters(i);
    os << (i ? ",\n    " : "\n    ") << "{\"name\": \"" << in.name << "\", \"level\": " << in.level
       << ", \"instance\": " << i << ", \"pus\": [" << (in.pus.empty() ? 0 : in.pus.front()) << ", "
       << (in.pus.empty() ? 0 : in.pus.back()) << "], \"accesses\": " << c.accesses << ", \"misses\": " << c.misses
       << ", \"coherence_misses\": " << c.coherence_misses << ", \"writebacks\": " << c.writebacks << "}";
  }
  std::uint64_t local = 0, remote = 0;
  for (unsigned pu = 0; pu < model_.num_pus(); ++pu) {
    local += model_.memory(pu).local;
    remote += model_.memory(pu).remote;
  }
  os << "],\n  \"dram_local\": " << local << ",\n  \"dram_remote\": " << remote;
  return os.str();
}

long long simulation::dram_remote() const {
  long long remote = 0;
  for (unsigned pu = 0; pu < model_.num_pus(); ++pu) remote += static_cast<long long>(model_.memory(pu).remote);
  return remote;
}

long long simulation::misses_at_level(int level) const {
  long long n = -1;
  for (std::size_t i = 0; i < model_.num_instances(); ++i)
    if (model_.instance(i).level == level) n = (n < 0 ? 0 : n) + static_cast<long long>(model_.counters(i).misses);
  return n;
}

void simulation::finish(const std::string& scheduler, const std::string& topology) {
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
  std::string caches;
  for (int level = 1; level <= 4; ++level) {
    bool any = false;
    for (std::size_t i = 0; i < model_.num_instances(); ++i) any |= model_.instance(i).level == level;
    if (any) caches += "; L" + std::to_string(level) + " misses " + std::to_string(misses_at_level(level));
  }
  const platform::sim_platform::host_figures host{wall, plat_.run_host_s(),
                                                  std::chrono::duration<double>(model_time_).count(),
                                                  model_.shards(), model_.host_threads(), model_.regions_shared()};
  // The simulator's speed, when kernels declared data (its target, DESIGN §6: 20 M line accesses a second).
  // Three significant digits: a run of a few touches read "0.0 M/s" (an outside-user campaign).
  char speed[256] = "";
  if (plat_.line_accesses() > 0 && wall > 0)
    std::snprintf(speed, sizeof speed,
                  "; %llu line accesses, %.3g M/s of this machine's time in runs (%.3g over the runtime's life; "
                  "memory model alone %.3g M/s, %u %s)",
                  static_cast<unsigned long long>(plat_.line_accesses()),
                  host.runs_s > 0 ? static_cast<double>(plat_.line_accesses()) / host.runs_s / 1e6 : 0.0,
                  static_cast<double>(plat_.line_accesses()) / wall / 1e6,
                  host.model_s > 0 ? static_cast<double>(plat_.line_accesses()) / host.model_s / 1e6 : 0.0,
                  host.model_threads, host.model_threads == 1 ? "host thread" : "host threads");
  std::fprintf(stderr, "%s%s%s%s\n", plat_.summary().c_str(), caches.c_str(), speed,
               plat_.touches() || plat_.operations()
                   ? ""
                   : " (no task declared data with roost::touch nor arithmetic with roost::compute: tasks cost their "
                     "runtime operations only)");
  if (report_path_.empty()) return;
  const std::string json = plat_.report_json(scheduler, topology, memory_json(), host);
  errno = 0;
  std::ofstream out(report_path_, std::ios::trunc);
  out << json;
  // Closed before the test: a report smaller than the stream's buffer goes out at the close, and a full disk
  // failed it there unsaid. With the system's reason where the failed call left one (an outside-user campaign:
  // a path that opened but refused the write was said with no reason).
  out.close();
  if (out.fail()) {
    const int err = errno;
    std::fprintf(stderr, "roost: ROOST_SIM_REPORT='%s': the report could not be written%s%s\n", report_path_.c_str(),
                 err ? ": " : "", err ? std::strerror(err) : "");
  }
}

}  // namespace roost::detail
