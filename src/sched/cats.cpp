#include "sched/cats.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>
#include <cerrno>

#include "platform/output_file.hpp"
#include "platform/platform.hpp"
#include "platform/sim_platform.hpp"
#include "roost/errors.hpp"
#include "roost/touch.hpp"
#include "topology/topology.hpp"

namespace roost::sched {

using profile::tier;

// Annotations go to the interval of the calling worker's meter, attributed to the node it runs for at its
// next switch (meter_switch); only that worker touches its meter. It is the runtime's first listener while
// it profiles (engine_base::set_touch_sink), and every annotation goes on to the listener installed before
// (the simulated platform charges for it, a tracer records it): the profiling iteration must cost and show
// what it touched.
class cats_policy::touch_meter final : public touch_consumer {
 public:
  explicit touch_meter(cats_policy& p) : p_(p) {}
  void forward_to(touch_consumer* next) { next_ = next; }  // only between iterations
  void on_touch(int worker, const void* base, std::size_t bytes, access mode) override {
    add(base, bytes, 1, 0, mode);
    if (next_) next_->on_touch(worker, base, bytes, mode);
  }
  void on_touch_rows(int worker, const void* base, std::size_t row_bytes, std::size_t rows, std::size_t stride,
                     access mode) override {
    add(base, row_bytes, rows, stride, mode);
    if (next_) next_->on_touch_rows(worker, base, row_bytes, rows, stride, mode);
  }
  // Not metered, passed on: the simulated platform charges a kernel's arithmetic while cats profiles too.
  void on_compute(int worker, std::uint64_t operations) override {
    if (next_) next_->on_compute(worker, operations);
  }

 private:
  void add(const void* base, std::size_t bytes, std::size_t rows, std::size_t stride, access mode) {
    engine::worker* w = engine::current_worker();
    if (!w || w->eng != &p_.eng_ || bytes == 0) return;  // not one of this runtime's tasks
    worker_meter& m = p_.meters_[w->id];
    node* n = m.crediting.load(std::memory_order_relaxed);
    if (!n) return;
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    // The node's anchor (soid_tree.hpp). Simulated, the simulation's rank of the byte (sim_platform.hpp,
    // data_rank): by host addresses, the leaves of a program that allocates as it goes got other classes and
    // homes from one process to the next (where ASLR put its mappings), and a simulated report changed from
    // run to run (an outside-user campaign).
    std::uintptr_t anchor = b;
    if (const platform::sim_platform* sim = platform::t_sim; sim && sim->data_rank)
      anchor = static_cast<std::uintptr_t>(sim->data_rank(b));
    profile::soid_tree::note_touch(*n, anchor, mode != access::read);
    for (std::size_t r = 0; r < rows; ++r) m.touched.add(b + r * stride, b + r * stride + bytes);
  }
  cats_policy& p_;
  touch_consumer* next_ = nullptr;
};

cats_policy::cats_policy(engine::engine_base& e)
    : cab_policy(e, 0, true),
      min_intensity_(e.config().cats_min_intensity),
      meters_(e.num_workers()),
      tree_(profile::soid_tree::kDefaultBounds, static_cast<unsigned>(sockets_with_workers().size())) {
  cache_bytes_ = e.topology().package_cache_bytes(e.placement().pu_of_worker[0]);
  // Hardware counters where the machine has them (probed here, opened per worker thread when profiling),
  // else kernel annotations. Never while simulated: the host's counters would count the simulation's own
  // work, every simulated worker on one thread, and a profile read from them would depend on the host (an
  // outside-user campaign saw the decision and the profile's leaves change with a stand-in counter).
  std::unique_ptr<profile::counter_reader> probe;
  if (e.config().simulated) why_no_counters_ = "the simulated platform measures what its tasks declare, never the host's CPU";
  else probe = profile::open_counter(why_no_counters_);
  if (probe) {
    use_counters_ = true;
    source_ = profile::counter_source_name() + " x " + std::to_string(e.topology().line_size()) +
              "-byte lines, per interval between switches";
  } else {
    source_ = "annotations (roost::touch); no hardware counters: " + why_no_counters_;
  }
  annotations_ = std::make_unique<touch_meter>(*this);
  // Checked now, not when the profile is due: a path that cannot be written is a start-up error.
  if (const std::string& path = e.config().cats_profile; !path.empty())
    if (const std::string why = platform::output_file_problem(path); !why.empty())
      throw config_error(e.config().cats_profile_source + "='" + path + "': cannot be opened for writing (" + why +
                         "); valid: a regular file's path in an existing directory this process may write to");
}

// ROOST_CATS_PROFILE (seed 000 Fig. 8): every task the profile kept, top-down in spawn order, with its SOID
// (eq. 1), tier and home. A task below a leaf inter-socket task is intra-socket whatever its node says.
bool cats_policy::write_profile(const std::string& path) const {
  errno = 0;
  std::ofstream out(path, std::ios::trunc);
  out << "# roost cats profile (seed 000 Fig. 8), iteration " << iterations_ << ", socket cache "
      << cache_bytes_ << " bytes: " << decision_ << "\n# path\tdepth\tsoid_bytes\ttier\thome\n";
  struct item {
    const node* n;
    std::string path;
    bool below_leaf;
  };
  std::vector<item> todo;
  if (const node* r = tree_.root()) todo.push_back({r, "0", false});
  while (!todo.empty()) {
    item it = std::move(todo.back());
    todo.pop_back();
    const tier t = it.below_leaf ? tier::intra : it.n->t == tier::unknown ? tier::intra : it.n->t;
    out << it.path << '\t' << it.n->depth << '\t' << it.n->soid << '\t' << profile::tier_name(t) << '\t';
    if (t == tier::leaf && it.n->home != profile::soid_tree::kNoHome) out << sockets_with_workers()[it.n->home];
    else out << '-';
    out << '\n';
    const std::size_t at = todo.size();
    for (const node* c = it.n->first_child; c; c = c->next_sibling)
      todo.push_back({c, it.path + "." + std::to_string(c->index), it.below_leaf || t == tier::leaf || t == tier::intra});
    std::reverse(todo.begin() + static_cast<std::ptrdiff_t>(at), todo.end());
  }
  // Closed before the test: what the stream still buffers goes out at the close, where a full disk fails it.
  out.close();
  return !out.fail();
}

cats_policy::~cats_policy() {
  // Never leave the runtime's meter installed past its life (a profiling iteration that threw).
  if (eng_.touch_sink() == annotations_.get()) eng_.set_touch_sink(previous_consumer_);
}

void cats_policy::switch_node(engine::worker& w, node* next) {
  worker_meter& m = meters_[w.id];
  std::uint64_t bytes = 0;
  if (use_counters_) {
    if (!m.opened) {  // on the worker's own thread: a perf_event counter counts the thread that opened it
      m.opened = true;
      std::string why;
      m.reader = profile::open_counter(why);
      m.counts = profile::counter_meter(static_cast<double>(eng_.topology().line_size()));
    }
    std::uint64_t v = 0;
    if (m.reader && m.reader->read(v)) bytes = m.counts.bytes_since_last(v);
  } else {
    bytes = m.touched.take_distinct_bytes();
  }
  if (node* now = m.crediting.load(std::memory_order_relaxed)) profile::soid_tree::credit(*now, bytes);
  m.crediting.store(next, std::memory_order_relaxed);
}

void cats_policy::iteration_begin() {
  ++iterations_;
  const bool reprofile = reprofile_.exchange(false, std::memory_order_acq_rel);
  if (reprofile || mode_.load(std::memory_order_relaxed) == mode::profiling) {
    // A fresh profile before any worker can see the mode (idle workers look at it in steal()): the tree,
    // and the meters an earlier profile left (a worker that ended its last task after that profile ended
    // never switched its meter off). No worker touches its meter while the mode is not profiling.
    tree_.clear();
    for (worker_meter& m : meters_) {
      if (!m.crediting.load(std::memory_order_relaxed)) continue;  // clean (and the first profile's)
      m.crediting.store(nullptr, std::memory_order_relaxed);
      m.touched.take_distinct_bytes();
      m.counts = profile::counter_meter(static_cast<double>(eng_.topology().line_size()));
    }
    if (!use_counters_) {
      // Restored at the iteration's end. A profiling iteration whose end never came (its run threw) left the
      // meter installed: then what was there before it stays the one to pass on to (not the meter itself).
      touch_consumer* prev = eng_.set_touch_sink(annotations_.get());
      if (prev != annotations_.get()) previous_consumer_ = prev;
      annotations_->forward_to(previous_consumer_);
    }
    iteration_start_ns_ = platform::os::now_ns();
    mode_.store(mode::profiling, std::memory_order_release);
  }
}

void cats_policy::iteration_end() {
  if (mode_.load(std::memory_order_relaxed) != mode::profiling) return;
  // Idle workers meter in their profiling rounds of stealing (steal()): out of that mode, and those rounds
  // ended, before the profile is read, so that nothing is credited to it while or after it is.
  mode_.store(mode::as_ws, std::memory_order_seq_cst);
  wait_for_random_rounds(mode::as_ws);
  if (!use_counters_) eng_.set_touch_sink(previous_consumer_);
  std::string decided = conclude(platform::os::now_ns() - iteration_start_ns_);
  {
    std::lock_guard<std::mutex> lk(decision_mu_);
    decision_ = std::move(decided);
  }
  const bool written = eng_.config().cats_profile.empty() || write_profile(eng_.config().cats_profile);
  const int write_errno = written ? 0 : (errno ? errno : EIO);  // before anything else may change it
  if (mode_.load(std::memory_order_relaxed) == mode::as_ws) name_own_deques();
  // The run() that profiled throws it (runtime.cpp), after the iteration ended, as a trace's write error.
  if (!written)
    throw std::system_error(write_errno, std::generic_category(),
                            "roost: " + eng_.config().cats_profile_source + "='" + eng_.config().cats_profile +
                                "': writing the profile failed");
}

std::string cats_policy::conclude(std::uint64_t ns) {
  const profile::soid_tree::summary s = tree_.finish(cache_bytes_);
  // Per worker-nanosecond: the iteration's footprint over the time of all its workers, so that the test does
  // not change with the worker count (over the wall time alone, twice the workers doubled the intensity).
  const double worker_ns = static_cast<double>(ns) * static_cast<double>(eng_.num_workers());
  const double intensity = ns ? static_cast<double>(s.root_soid) / worker_ns : 0.0;
  std::ostringstream why;
  why.precision(3);
  mode next = mode::as_ws;
  if (cache_bytes_ == 0) {
    why << "the topology describes no shared cache";
  } else if (s.root_soid == 0) {
    why << (use_counters_ ? "no footprint measured (the counters read nothing)" : "no footprint measured (no roost::touch annotations)");
  } else if (intensity < min_intensity_) {
    why << "CPU-bound: " << intensity << " bytes per worker-ns < ROOST_CATS_MIN_INTENSITY " << min_intensity_;
  } else {
    why << s.profiled << " tasks profiled, " << s.leaves << " leaf inter-socket tasks for a "
        << topo::format_bytes(cache_bytes_) << " socket cache";
    if (s.split) why << " (" << s.split << " split so that every socket has one)";
    why << " in " << s.classes << " data class" << (s.classes == 1 ? "" : "es");
    why << ", " << intensity << " bytes per worker-ns, at most " << s.peak_nodes << " profile nodes at once";
    if (!s.complete()) {
      // The bounds of the profile (soid_tree.hpp) stopped it above tasks whose subtrees still exceed the
      // cache: where their leaf inter-socket tasks lie is unknown, so no bi-tier schedule can be built.
      why << "; no boundary found below";
      if (s.cut_by_depth)
        why << " " << s.cut_by_depth << " inter-socket tasks at the profile's depth bound (" << s.depth << ")";
      if (s.cut_by_depth && s.cut_by_budget) why << " and";
      if (s.cut_by_budget)
        why << " " << s.cut_by_budget << " inter-socket tasks whose children exceeded its budget ("
            << tree_.limits().max_nodes << " nodes)";
    } else if (s.intra < s.leaves) {
      // Seed 000 §3.2's second constraint fails: an intra-socket subtree must be large enough to keep its
      // socket's cores busy. Here most leaf inter-socket tasks have no children (a flat task set, e.g.
      // sparselu's one task per block), and under bi-tier stealing only head cores run inter-socket tasks,
      // one subtree per socket at a time (§3.3): one core per socket would do all the work (sparselu ran
      // at the serial time on 2 cores). There is no socket-local work to keep together, so run as ws.
      why << "; only " << s.intra << " intra-socket tasks: too flat for bi-tier stealing (seed 000 §3.2's second "
          << "constraint)";
    } else if (sockets_with_workers().size() < 2) {
      // One socket: no subtree has another socket's cache to stay out of, and bi-tier stealing would only
      // keep the inter-socket tier on the head core (fft at 2 workers ran 1.26x ws's time).
      why << "; one socket: nothing to keep apart, run as ws";
    } else {
      next = mode::bi_tier;
    }
  }
  mode_.store(next, std::memory_order_seq_cst);
  if (next == mode::bi_tier) wait_for_random_rounds(mode::bi_tier);
  return why.str();
}

// An idle worker that read a random-stealing mode in steal() may still be in its round of up to P-1 attempts
// when the mode changes (a thread the OS paused, or a simulated worker whose failed attempts take virtual
// time). Still in a profiling round, it would credit the profile while conclude() reads it; still in a
// random round once bi-tier stealing began, it would take the next iteration's intra-socket tasks from any
// socket. So a round says it started (round_word, the mode still unread) before it reads the mode, then which
// mode it read; iteration_end (out of profiling) and conclude (into bi-tier stealing) store the new mode, then
// wait for each round that read another one, or may have, to end. Each side stores, then loads the other's
// variable, all sequentially consistent (Dekker): a worker seen outside a round, or in one that read the new
// mode, reads the new mode in its next rounds; one seen in a round of an older mode reads it in the rounds
// after that one, which stops at its next attempt (steal()). So the wait is an attempt per worker at most.
// Waiting instead for every worker to be seen between two rounds took, in virtual time, a round per worker,
// P-1 attempts each, since an idle worker starts its next round at once: the profiled iteration of fib(18)
// on 256 simulated workers took 120x ws's time, nearly all of it in this wait after the root had ended.
void cats_policy::wait_for_random_rounds(mode now) {
  const auto wanted = static_cast<std::uint32_t>(now);
  for (worker_meter& m : meters_)
    for (std::uint32_t v = m.random_round.load(std::memory_order_seq_cst); (v & kInRound) && (v >> 1 & 3) != wanted;
         v = m.random_round.load(std::memory_order_seq_cst))
      platform::os::cpu_relax();
}

// Between iterations no task of a correct program runs (runtime::run holds its iteration lock and the root
// has ended), and a worker reads its join_queue only in a task it got, through the queues, from the next
// iteration's root: the worker's own thread need not write it. A child of a group that escaped its run()
// may still run then; it reads the fields' old value or the new one, both queues it may join on (the
// fields are atomics for it, abi.hpp), and its own hooks may name a queue meanwhile: a worker may then keep
// none named while run as ws, so that its joins take the engine's path, slower and still exact, until a
// later profile names its queues again. Only a program that lets a group escape its run() meets this.
void cats_policy::name_own_deques() {
  for (unsigned i = 0; i < eng_.num_workers(); ++i) {
    engine::worker& w = eng_.worker_at(i);
    detail::name_join_queue_elsewhere(w, &w.deque);
  }
}

tier cats_policy::tier_of_child(const detail::task_id& parent, detail::task_id& child) const {
  if (parent.tier == static_cast<std::uint8_t>(tier::intra) || parent.tier == static_cast<std::uint8_t>(tier::leaf))
    return tier::intra;
  auto* pn = static_cast<const node*>(parent.sched_node);
  const node* cn = pn ? tree_.child(*pn, child.index) : nullptr;
  child.sched_node = const_cast<node*>(cn);
  // Unprofiled below an inter-socket task (the shape changed): inter-socket (see the header).
  return cn ? cn->t : tier::inter;
}

spawn_order cats_policy::order_slow(engine::worker&, detail::task_frame& f) {
  switch (mode_.load(std::memory_order_relaxed)) {
    case mode::profiling: {
      // A profiled parent (order() took the others): its child gets a node unless a bound refuses it.
      node& parent = *credited_node(*f.id.parent);  // the group's owner's (order())
      if (node* n = tree_.add_child(parent, f.id.index)) {
        f.id.sched_node = n;
        f.id.tier = kOwnsNode;
        return spawn_order::parent_first;  // §3.4: convenient for collecting SOIDs
      }
      // Credited to its parent's node, and spawned as ws spawns it: the stack of a parent-first parent runs
      // its children, and a deep tree's would not hold (UTS: 1,600 levels).
      f.id.sched_node = &parent;
      return spawn_order::child_first;
    }
    case mode::as_ws: return spawn_order::child_first;
    case mode::bi_tier: break;
  }
  tier t = tier_of_child(*f.id.parent, f.id);
  f.id.tier = static_cast<std::uint8_t>(t);
  return t == tier::intra ? spawn_order::child_first : spawn_order::parent_first;
}

void cats_policy::place(engine::worker& w, detail::task_frame* f) {
  if (mode_.load(std::memory_order_relaxed) != mode::bi_tier) return policy_base::place(w, f);
  // A leaf inter-socket task goes to its home socket's pool (the header says why).
  const auto* n = static_cast<const node*>(f->id.sched_node);
  if (f->id.tier == static_cast<std::uint8_t>(tier::leaf) && n && n->home != profile::soid_tree::kNoHome)
    return place_home(w, f, sockets_with_workers()[n->home]);
  cab_policy::place(w, f);
}

detail::job* cats_policy::steal(engine::worker& w) {
  const mode m = mode_.load(std::memory_order_acquire);  // a new profile's tree and meters with it
  if (m == mode::bi_tier) return cab_policy::steal(w);
  // A round of random stealing, announced (wait_for_random_rounds), with the mode read again after and
  // published. Only this worker writes its word.
  std::atomic<std::uint32_t>& word = meters_[w.id].random_round;
  const std::uint32_t count = (word.load(std::memory_order_relaxed) >> 3) + 1;
  word.store(round_word(count, kModeUnread, true), std::memory_order_seq_cst);
  const mode now = mode_.load(std::memory_order_seq_cst);
  if (now == mode::bi_tier) {
    word.store(round_word(count, 0, false), std::memory_order_release);
    return cab_policy::steal(w);
  }
  word.store(round_word(count, static_cast<std::uint32_t>(now), true), std::memory_order_release);
  // Out of work of its own: what this worker measured goes to its node now, not at its next task, which may
  // come after that node's task has ended (a task without a node that completed remotely).
  if (now == mode::profiling) meter_switch(w, nullptr);
  const unsigned n = eng_.num_workers();  // random work stealing
  detail::job* found = nullptr;
  // A round stops once the mode changed: a waiter (wait_for_random_rounds) waits for its end.
  for (unsigned i = 1; i < n && !found && mode_.load(std::memory_order_relaxed) == now; ++i) {
    unsigned victim = 0;
    found = steal_one_of(w, n, [&victim](unsigned k) { return victim = k; });
    // An unnamed half of an inline join has no node to go by: run it for the node its victim runs for.
    if (found && now == mode::profiling && found->is_unnamed())
      meter_switch(w, meters_[victim].crediting.load(std::memory_order_relaxed));
  }
  word.store(round_word(count, 0, false), std::memory_order_release);
  return found;
}

bool cats_policy::has_visible_work(engine::worker& w) const {
  return mode_.load(std::memory_order_relaxed) == mode::bi_tier && cab_policy::has_visible_work(w);
}

void cats_policy::on_task_start_slow(engine::worker& w, detail::task_id& id) {
  const mode m = mode_.load(std::memory_order_relaxed);
  if (m == mode::profiling) {
    if (!id.parent) {  // the root
      id.sched_node = tree_.make_root();
      id.tier = kOwnsNode;
    }
    meter_switch(w, credited_node(id));
    return;
  }
  if (m != mode::bi_tier) return;
  if (!id.parent) {  // the root: its own profiled tier
    const node* root = tree_.root();
    id.sched_node = const_cast<node*>(root);
    id.tier = static_cast<std::uint8_t>(root ? root->t : tier::inter);
  }
  if (id.tier == static_cast<std::uint8_t>(tier::leaf)) subtree_started_on(w);
}

void cats_policy::on_task_end_slow(engine::worker& w, detail::task_id& id) {
  // The mode changes only between iterations, so a task ends in the mode it started in.
  const mode m = mode_.load(std::memory_order_relaxed);
  if (m == mode::profiling) {  // a profiled task (on_task_end took the others)
    node* n = credited_node(id);
    // Its last interval is its own; what follows here until the next switch is its parent's, which
    // resumes here unless a thief took it (then that next switch is the thief's task or a steal).
    meter_switch(w, n->parent);
    tree_.end(*n, id.next_child, cache_bytes_);
    return;
  }
  if (m == mode::bi_tier && id.tier == static_cast<std::uint8_t>(tier::leaf)) subtree_ended_on(w, id);
}

std::string cats_policy::notes() const {
  std::string m = current_mode() == mode::profiling ? "profiling next iteration"
                  : current_mode() == mode::bi_tier ? "bi-tier"
                                                    : "running as ws";
  std::string decided;
  {
    std::lock_guard<std::mutex> lk(decision_mu_);
    decided = decision_;
  }
  return "footprint source: " + source_ + "; " + m + (decided.empty() ? "" : " (" + decided + ")");
}

}  // namespace roost::sched
