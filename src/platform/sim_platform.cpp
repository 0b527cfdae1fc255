#include "platform/sim_platform.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "platform/platform.hpp"
#include "platform/preempt_signal.hpp"

namespace roost::platform {

__thread sim_platform* t_sim __attribute__((tls_model("initial-exec"))) = nullptr;

// ---------------------------------------------------------------- the seam's dispatch (platform.hpp)

os::thread_handle os::start_thread(std::function<void()> fn, int os_cpu) {
  if (t_sim) return t_sim->start_thread(std::move(fn), os_cpu);
  return native_platform::start_thread(std::move(fn), os_cpu);
}
void os::join_thread(thread_handle h) {
  if (t_sim) return t_sim->join_thread(h);
  native_platform::join_thread(h);
}
bool os::pin_this_thread(int os_cpu) { return t_sim ? t_sim->pin(os_cpu) : native_platform::pin_this_thread(os_cpu); }
std::vector<int> os::allowed_cpus() {
  // Simulated, every PU of the topology is a CPU of its own (placement numbers them 0..n-1): the machine
  // is never oversubscribed, whatever this one has.
  if (t_sim) {
    std::vector<int> all(t_sim->cpus());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    return all;
  }
  return native_platform::allowed_cpus();
}
os::saved_affinity os::save_affinity() { return t_sim ? saved_affinity{} : native_platform::save_affinity(); }
int os::current_cpu() { return t_sim ? t_sim->current_cpu() : native_platform::current_cpu(); }
void os::restore_affinity(const saved_affinity& a) {
  if (!t_sim) native_platform::restore_affinity(a);
}
std::uint64_t os::now_ns() { return t_sim ? t_sim->now_ns() : native_platform::now_ns(); }
void os::wait_on(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  if (t_sim) return t_sim->wait_on(word, expected);
  native_platform::wait_on(word, expected);
}
void os::wake_one(std::atomic<std::uint32_t>& word) {
  if (t_sim) return t_sim->wake(word, false);
  native_platform::wake_one(word);
}
void os::wake_all(std::atomic<std::uint32_t>& word) {
  if (t_sim) return t_sim->wake(word, true);
  native_platform::wake_all(word);
}
// One OS thread: no other thread to order against, the plain fences suffice.
bool os::enable_heavy_barrier() { return t_sim ? false : native_platform::enable_heavy_barrier(); }
void os::heavy_barrier() {
  if (!t_sim) native_platform::heavy_barrier();
}
void os::yield_cpu() {
  if (t_sim) return t_sim->yield();
  native_platform::yield_cpu();
}
// One pause a poll: its cost is relax_ns of the cost table, not a measurement of this machine.
unsigned os::relax_count_for_ns(unsigned ns) { return t_sim ? 1 : native_platform::relax_count_for_ns(ns); }
void os::sim_relax() { t_sim->relax(); }

// ---------------------------------------------------------------- scope

sim_scope::sim_scope(sim_platform* p) : prev_(t_sim), active_(p != nullptr) {
  if (active_) t_sim = p;
}
sim_scope::~sim_scope() {
  if (active_) t_sim = prev_;
}

// ---------------------------------------------------------------- sim threads

sim_platform::sim_platform(unsigned cpus, std::uint64_t seed, sim_costs costs)
    : cpus_(cpus), seed_(seed), costs_(costs), rng_(seed) {
  auto driver = std::make_unique<thread>();
  driver->id = 0;
  driver->st = state::running;
  ult::adopt_thread_context(driver->ctx);  // the driver's own stack, where it is outside the engine
  current_ = driver.get();
  threads_.push_back(std::move(driver));
  eh_ = ult::thread_eh_state();
  driving_thread_ = pthread_self();
}

void sim_platform::drive_from_calling_thread() {
  const pthread_t self = pthread_self();
  if (pthread_equal(self, driving_thread_)) [[likely]] return;
  // A runtime made on one thread and run from another (an outside-user campaign): every switch had carried the
  // maker's exception state, so the tasks' exceptions in flight were mixed up on the thread that ran them
  // (a caught exception freed twice, "terminate called without an active exception"), and the maker's
  // thread-local state was written from another thread.
  driving_thread_ = self;
  eh_ = ult::thread_eh_state();
  ult::adopt_thread_context(threads_[0]->ctx);
}

sim_platform::~sim_platform() {
  for (auto& t : threads_) {
    if (t->id != 0) ult::release_context(t->ctx);
    if (t->stk.base) ult::free_stack(t->stk);
  }
}

std::uintptr_t sim_platform::start_thread(std::function<void()> fn, int cpu) {
  auto t = std::make_unique<thread>();
  t->id = static_cast<unsigned>(threads_.size());
  t->cpu = cpu;
  t->clock = current_->clock;  // a thread starts when it is created
  t->fn = std::move(fn);
  // A worker's own stack holds only its scheduling entry (tasks run on the engine's fibers).
  t->stk = ult::allocate_stack(256 * 1024);
  ult::make_context(t->ctx, static_cast<char*>(t->stk.base) + t->stk.guard, t->stk.top(), &entry);
  thread* raw = t.get();
  threads_.push_back(std::move(t));
  make_runnable(raw);
  return raw->id;
}

void sim_platform::entry(ult::transfer t) {
  sim_platform* self = t_sim;
  ult::entered_new_context(self->eh_);
  // The side that switched here left its context to be stored by us (switch_away).
  static_cast<thread*>(t.data)->ctx.fctx = t.fctx;
  thread* me = self->current_;
  me->fn();
  me->fn = nullptr;
  me->st = state::finished;
  me->finished.store(1, std::memory_order_release);
  self->wake(me->finished, true);
  self->switch_away();  // never comes back
  __builtin_unreachable();
}

void sim_platform::join_thread(std::uintptr_t h) {
  thread* t = threads_.at(h).get();
  while (t->finished.load(std::memory_order_acquire) == 0) wait_on(t->finished, 0);
}

void sim_platform::make_runnable(thread* t) {
  t->st = state::runnable;
  ready_.push(ready{t->clock, rng_(), t});
}

void sim_platform::charge(double ns, bool busy) {
  thread* me = current_;
  if (costs_.jitter > 0) ns *= draw_jitter_scale();
  progress_.fetch_add(1, std::memory_order_relaxed);
  if (busy) {
    busy_progress_.store(busy_progress_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    account_busy(me, ns);
  } else {
    me->clock += ns;
    me->stats.idle_ns += ns;
    running_clock_.store(me->clock, std::memory_order_relaxed);  // one worker polling alone never switches
  }
  if (!earliest_at_or_before(me->clock)) return;  // still the earliest (equal clocks: the other one goes first)
  make_runnable(me);
  switch_away();
}

void sim_platform::account_busy(thread* me, double ns) {
  me->clock += ns;
  me->stats.busy_ns += ns;
  running_clock_.store(me->clock, std::memory_order_relaxed);
  if (me->clock > busy_clock_.load(std::memory_order_relaxed)) busy_clock_.store(me->clock, std::memory_order_relaxed);
}

double sim_platform::draw_jitter_scale() {
  const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;  // [0, 1)
  return 1 + costs_.jitter * (2 * u - 1);
}

bool sim_platform::earliest_at_or_before(double clock) {
  while (!ready_.empty()) {
    const ready& top = ready_.top();
    if (top.clock > clock) return false;
    if (top.t->deferred.token == 0) return true;
    settle_top();
  }
  return false;
}

void sim_platform::settle_top() {
  const ready top = ready_.top();
  ready_.pop();  // its floor is not its clock: settled, it goes back with its tie
  settle(top.t);
  ready_.push(ready{top.t->clock, top.tie, top.t});
}

void sim_platform::settle(thread* t) {
  thread::deferred_touch& d = t->deferred;
  double ns = d.fixed_ns + settler_(settler_ctx_, d.token);
  if (d.jittered) ns *= d.scale;  // as charge() scales it
  d.token = 0;
  t->clock = d.clock_before;
  account_busy(t, ns);
  running_clock_.store(current_->clock, std::memory_order_relaxed);
}

void sim_platform::on_touch_deferred(std::size_t bytes, std::uint64_t lines, double floor_ns, std::uint64_t token) {
  ++touches_;
  ++deferred_touches_;
  touched_bytes_ += bytes;
  line_accesses_ += lines;
  thread* me = current_;
  thread::deferred_touch& d = me->deferred;
  d.fixed_ns = static_cast<double>(bytes) * costs_.touch_ns_per_byte;
  d.jittered = costs_.jitter > 0;
  if (d.jittered) d.scale = draw_jitter_scale();  // drawn where charge() draws it
  double floor = d.fixed_ns + floor_ns;
  if (d.jittered) floor *= d.scale;
  progress_.fetch_add(1, std::memory_order_relaxed);
  busy_progress_.store(busy_progress_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  d.clock_before = me->clock;
  d.token = token;
  if (earliest_at_or_before(me->clock + floor)) {  // another thread runs first, whatever the touch costs
    ++deferred_switches_;
    me->clock += floor;
    running_clock_.store(me->clock, std::memory_order_relaxed);
    make_runnable(me);
    switch_away();
    return;
  }
  settle(me);  // it may go on: its clock decides
  if (!earliest_at_or_before(me->clock)) return;
  make_runnable(me);
  switch_away();
}

void sim_platform::settle_all() {
  settling_.clear();
  while (!ready_.empty()) {
    settling_.push_back(ready_.top());
    ready_.pop();
  }
  for (ready& r : settling_) {
    if (r.t->deferred.token != 0) {
      settle(r.t);
      r.clock = r.t->clock;
    }
    ready_.push(r);
  }
}

void sim_platform::switch_away() {
  if (ready_.empty()) report_deadlock();
  while (ready_.top().t->deferred.token != 0) settle_top();  // settled before it runs, put back in its place
  thread* next = ready_.top().t;
  ready_.pop();
  thread* prev = current_;
  if (next == prev) {
    prev->st = state::running;
    return;
  }
  if (prev->id == 0) drive_from_calling_thread();
  if (tls_.save) tls_.save(prev->tls);
  // Where prev is now: a switch back must announce that stack (and TSan fiber) to the sanitizers.
  const ult::context* on = tls_.running_context ? tls_.running_context() : nullptr;
  prev->leftas = on ? *on : prev->ctx;
  prev->left = true;
#ifdef ROOST_TSAN
  prev->leftas.tsan_fiber = __tsan_get_current_fiber();
#endif
  next->st = state::running;
  current_ = next;
  running_thread_.store(next->id, std::memory_order_relaxed);
  running_task_.store(next->task, std::memory_order_relaxed);
  running_clock_.store(next->clock, std::memory_order_relaxed);
  if (tls_.load) tls_.load(next->tls);
  ult::context to = next->left ? next->leftas : next->ctx;
  to.fctx = next->ctx.fctx;
  next->ctx.fctx = nullptr;
  ult::transfer t = ult::switch_to(to, prev, eh_, [this](ult::transfer) { return eh_; });
  // Back on prev: whoever switched here left its context for us to store.
  static_cast<thread*>(t.data)->ctx.fctx = t.fctx;
}

void sim_platform::wait_on(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  if (word.load(std::memory_order_acquire) != expected) return;
  thread* me = current_;
  me->st = state::blocked;
  me->blocked_on = &word;
  me->blocked_since = me->clock;
  blocked_.push_back(me);
  switch_away();
}

void sim_platform::wake(std::atomic<std::uint32_t>& word, bool all) {
  if (current_->clock + costs_.wake_ns > kMostClockNs) [[unlikely]] past_most_clock(costs_.wake_ns, "wake_ns");
  const double at = current_->clock + costs_.wake_ns;
  for (std::size_t i = 0; i < blocked_.size();) {
    thread* t = blocked_[i];
    if (t->blocked_on != &word) {
      ++i;
      continue;
    }
    blocked_.erase(blocked_.begin() + static_cast<std::ptrdiff_t>(i));
    t->blocked_on = nullptr;
    const double woke = std::max(t->clock, at);
    t->stats.idle_ns += woke - t->blocked_since;
    t->clock = woke;
    make_runnable(t);
    if (!all) break;
  }
}

// A steal attempt costs what reading the victim's deque costs from where the thief is; a failed one is the
// thief's idle time (it runs no task), a successful one moves the task's lines too and counts as busy. A
// round of random stealing is up to P-1 attempts, so charging only the successes (and the poll's relax)
// let an idle worker of a 48-worker machine make millions of free attempts.
void sim_platform::on_steal(unsigned thief, unsigned victim, bool taken) {
  ++steal_attempts_;
  int d = 2;
  if (thief < places_.size() && victim < places_.size()) {
    if (places_[thief].cache == places_[victim].cache) d = 0;
    else if (places_[thief].socket == places_[victim].socket) d = 1;
  }
  if (!taken) {
    charge_op(d == 0 ? costs_.steal_attempt_ns : d == 1 ? costs_.steal_attempt_socket_ns : costs_.steal_attempt_remote_ns,
              false, d == 0 ? "steal_attempt_ns" : d == 1 ? "steal_attempt_socket_ns" : "steal_attempt_remote_ns");
    return;
  }
  ++steals_[d];
  charge_op(d == 0 ? costs_.steal_ns : d == 1 ? costs_.steal_socket_ns : costs_.steal_remote_ns, true,
            d == 0 ? "steal_ns" : d == 1 ? "steal_socket_ns" : "steal_remote_ns");
}

void sim_platform::on_touch(std::size_t bytes, std::uint64_t lines, double memory_ns) {
  ++touches_;
  touched_bytes_ += bytes;
  line_accesses_ += lines;
  charge_work(static_cast<double>(bytes) * costs_.touch_ns_per_byte + memory_ns);
}

void sim_platform::on_compute(std::uint64_t operations) {
  operations_ += std::min(operations, ~std::uint64_t{0} - operations_);  // saturates: a count that wrapped read as none
  charge_work(static_cast<double>(operations) * costs_.op_ns);
}

// A kernel's work: charged when it costs virtual time. Work that costs none is no progress and no scheduling
// point: a task polling a flag with roost::compute(0) (or compute(1) at op_ns=0) stayed the earliest worker
// for ever while each poll counted as progress, so the watchdog never named it (an outside-user campaign).
void sim_platform::charge_work(double ns) {
  if (ns > 0) charge(ns, true);
}

void sim_platform::run_begin() {
  run_os_thread_.store(preempt::this_thread_id(), std::memory_order_relaxed);
  run_start_ = current_->clock;
  run_host_start_ = std::chrono::steady_clock::now();
  in_run_.store(true, std::memory_order_relaxed);
}
void sim_platform::run_end() {
  in_run_.store(false, std::memory_order_relaxed);
  run_ns_ += current_->clock - run_start_;
  run_host_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - run_host_start_).count();
  ++runs_;
}

void sim_platform::past_most_clock(double ns, const char* param) const {
  std::ostringstream os;
  os << "a runtime operation of " << ns << " ns (" << param << " in the cost table) would take sim thread "
     << current_->id << "'s virtual clock from " << std::fixed << std::setprecision(1) << current_->clock
     << std::defaultfloat << " ns past 1e15 ns, the most a simulation may "
     << "run (seed " << seed_ << "); simulate less virtual time: smaller costs (ROOST_SIM_PARAMS) or a smaller "
     << "problem";
  os::fatal("roost: simulated platform", os.str().c_str());
}

void sim_platform::report_deadlock() {
  std::ostringstream os;
  os << "every simulated worker is blocked (virtual time " << static_cast<std::uint64_t>(current_->clock)
     << " ns, seed " << seed_ << "): nothing can wake them";
  os::fatal("roost: simulated platform", os.str().c_str());
}

std::string sim_platform::report_json(const std::string& scheduler, const std::string& topology,
                                      const std::string& memory, const host_figures& host) {
  settle_all();
  std::ostringstream os;
  os.precision(17);
  os << "{\n  \"scheduler\": \"" << scheduler << "\",\n  \"topology\": \"" << topology << "\",\n  \"seed\": " << seed_
     << ",\n  \"runs\": " << runs_ << ",\n  \"virtual_time_ns\": " << run_ns_ << ",\n  \"steals\": {\"same_cache\": "
     << steals_[0] << ", \"same_socket\": " << steals_[1] << ", \"other_socket\": " << steals_[2]
     << ", \"attempts\": " << steal_attempts_ << "},\n  \"touches\": " << touches_ << ",\n  \"touched_bytes\": "
     << touched_bytes_ << ",\n  \"line_accesses\": " << line_accesses_ << ",\n  \"operations\": " << operations_
     << ",\n  " << memory << ",\n  \"workers\": [";
  for (std::size_t i = 0; i < threads_.size(); ++i)
    os << (i ? ", " : "") << "{\"worker\": " << i << ", \"busy_ns\": " << threads_[i]->stats.busy_ns
       << ", \"idle_ns\": " << threads_[i]->stats.idle_ns << "}";
  os << "],\n  \"params\": {";
  bool first = true;
  for (const auto& [k, v] : costs_.all()) {
    os << (first ? "" : ", ") << "\"" << k << "\": " << v;
    first = false;
  }
  // Last, and the one part that is not a function of program, topology, seed and parameters.
  // The simulator's speed: line accesses per second of this machine's wall time, over the runs (the engine
  // and policies in virtual time too), over the runtime's life (the program's own code between runs too) and
  // in the memory model alone.
  const auto per_s = [&](double s) { return s > 0 ? static_cast<double>(line_accesses_) / s : 0.0; };
  os << "},\n  \"host\": {\"wall_s\": " << host.wall_s << ", \"runs_s\": " << host.runs_s
     << ", \"model_s\": " << host.model_s << ", \"run_line_accesses_per_s\": " << per_s(host.runs_s)
     << ", \"line_accesses_per_s\": " << per_s(host.wall_s)
     << ", \"model_line_accesses_per_s\": " << per_s(host.model_s) << ", \"model_shards\": " << host.model_shards
     << ", \"model_host_threads\": " << host.model_threads << ", \"regions_shared\": " << host.regions_shared
     << ", \"touches_posted\": " << deferred_touches_ << ", \"touches_settled_later\": " << deferred_switches_
     << "}\n}\n";
  return os.str();
}

std::string sim_platform::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "roost: simulated: %" PRIu64 " run%s in %.0f ns of virtual time; steals same cache %" PRIu64
                ", same socket %" PRIu64 ", other socket %" PRIu64 "; seed %" PRIu64,
                runs_, runs_ == 1 ? "" : "s", run_ns_, steals_[0], steals_[1], steals_[2], seed_);
  return buf;
}

}  // namespace roost::platform
