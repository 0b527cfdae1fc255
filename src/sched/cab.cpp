#include "sched/cab.hpp"

#include <sstream>
#include <string>
#include <vector>

namespace roost::sched {

namespace {
// worker_abi::run_first for the inline join (abi.hpp): cab never has a job that must run before a join ends.
const std::atomic<detail::job*> kNothingRunsFirst{nullptr};

// With no level given: the least depth at which a binary task tree (parallel_for's, a two-way split's) has a
// leaf inter-socket task for every socket, so that every socket's head finds a subtree of its own (seed 000
// §3.1). The fixed 2 it replaces suits four sockets; on one socket it kept the top three levels of every
// tree on the head core and ran the four subtrees one after another (heat2d at 2 workers: 1.14x ws).
unsigned level_for_sockets(unsigned sockets) {
  unsigned level = 0;
  while ((1u << level) < sockets && level < 31) ++level;
  return level;
}

// The sockets a worker is placed on: a run with fewer workers than the topology's PUs leaves whole packages
// without one. Counting those, 4 workers on one package of four got level 2, and the top of every tree ran
// on the head core alone (2-2.8x ws's virtual time; an outside-user campaign).
unsigned staffed_sockets(const engine::engine_base& e) {
  const auto& tp = e.topology();
  std::vector<bool> seen(tp.num_packages(), false);
  unsigned n = 0;
  for (unsigned w = 0; w < e.num_workers(); ++w) {
    const unsigned s = tp.pu(e.placement().pu_of_worker[w]).package;
    if (!seen[s]) {
      seen[s] = true;
      ++n;
    }
  }
  return n;
}
}  // namespace

cab_policy::cab_policy(engine::engine_base& e)
    : cab_policy(e, e.config().cab_level.value_or(level_for_sockets(staffed_sockets(e))), e.config().cab_one_subtree) {}

cab_policy::cab_policy(engine::engine_base& e, unsigned level, bool one_subtree)
    : policy_base(e), level_(level), one_subtree_(one_subtree), preempting_(e.config().preempt) {
  const unsigned n = e.num_workers();
  const auto& tp = e.topology();
  socket_of_.resize(n);
  unsigned sockets = tp.num_packages();
  head_of_.assign(sockets, n);
  members_.resize(sockets);
  for (unsigned w = 0; w < n; ++w) {
    unsigned s = tp.pu(e.placement().pu_of_worker[w]).package;
    socket_of_[w] = s;
    members_[s].push_back(w);
    if (head_of_[s] == n) head_of_[s] = w;
    e.worker_at(w).run_first = &kNothingRunsFirst;
  }
  sockets_ = std::vector<socket>(sockets);
  for (unsigned s = 0; s < sockets; ++s)
    if (!members_[s].empty()) staffed_.push_back(s);
}

void cab_policy::place(engine::worker& w, detail::task_frame* f) {
  sockets_[socket_of_[w.id]].inter.push_bottom(f);
  // Only head cores take inter-socket tasks: make sure a sleeping one hears of it.
  eng_.idle().notify_all_new_work();
}

void cab_policy::place_home(engine::worker&, detail::task_frame* f, unsigned socket) {
  sockets_[socket].home.push_bottom(f);
  eng_.idle().notify_all_new_work();
}

void cab_policy::subtree_started(engine::worker& w) {
  socket& s = sockets_[socket_of_[w.id]];
  s.subtrees.fetch_add(1, std::memory_order_acq_rel);
  // The preemptions that let this one start are spent (subtree_may_start).
  if (preempting_) s.preemptions_at_start.store(preemptions_of(socket_of_[w.id]), std::memory_order_relaxed);
  // Leaves still waiting for this socket are now other heads' to take: wake them.
  if (!s.home.empty_hint()) eng_.idle().notify_all_new_work();
}

void cab_policy::subtree_ended(engine::worker& w, detail::task_id&) {
  // The subtree root may finish on another core of its socket (the last child resumes it), never on
  // another socket: its descendants are intra-socket tasks, stolen only inside the socket.
  sockets_[socket_of_[w.id]].subtrees.fetch_sub(1, std::memory_order_acq_rel);
}

// A socket runs one subtree at a time (seed 000 §3.3), but a tick that preempted a task of its cores
// (ROOST_PREEMPT) may have stopped a subtree that waits, spinning, for a sibling nobody started yet (a busy
// barrier among the leaf inter-socket tasks): with the socket closed to it while its own subtree stays
// "running", no head would ever start that sibling (an outside-user campaign: 3 such siblings on 2 sockets
// hung under signal-yield and KLT-switching). So the socket may start one more subtree for each preemption
// of its cores' tasks since its latest subtree began (each worker counts the tasks it resumed after a tick:
// a count that only grows, which the head reads whenever it looks, however briefly the task waited), and
// at once while one of its cores holds a preempted task. Without preemption, never.
std::uint64_t cab_policy::preemptions_of(unsigned s) const {
  std::uint64_t n = 0;
  for (unsigned m : members_[s]) n += eng_.worker_at(m).preemptions.load(std::memory_order_relaxed);
  return n;
}

bool cab_policy::subtree_may_start(unsigned s) const {
  const socket& sk = sockets_[s];
  if (!one_subtree_ || sk.subtrees.load(std::memory_order_acquire) == 0) return true;
  if (!preempting_) return false;
  if (preemptions_of(s) != sk.preemptions_at_start.load(std::memory_order_relaxed)) return true;
  for (unsigned m : members_[s])
    if (eng_.worker_at(m).preempted.holds_any()) return true;
  return false;
}

detail::job* cab_policy::take_inter(engine::worker& w) {
  const unsigned s = socket_of_[w.id];
  if (!subtree_may_start(s)) return nullptr;
  if (detail::job* j = sockets_[s].home.pop_bottom()) return j;
  if (detail::job* j = sockets_[s].inter.pop_bottom()) return j;
  // Steal an inter-socket task from another socket, starting at a random one: a homed leaf only while its
  // home runs a subtree (it would wait there), any other inter-socket task. Only sockets with workers: no
  // task is placed or homed on another (a search tried them as well, in vain, and reported a victim that
  // is no worker).
  const unsigned n = static_cast<unsigned>(staffed_.size());
  const unsigned start = static_cast<unsigned>(w.next_random() % n);
  for (unsigned i = 0; i < n; ++i) {
    const unsigned v = staffed_[(start + i) % n];
    if (v == s) continue;
    // The root ended, or the engine stops: no attempt more (policy.hpp, steal_one_of).
    if (w.should_leave() || eng_.stopping()) [[unlikely]] return nullptr;
    detail::job* j = nullptr;
    if (!sockets_[v].home.empty_hint() && sockets_[v].subtrees.load(std::memory_order_acquire) > 0)
      j = sockets_[v].home.steal_top();
    if (!j) j = sockets_[v].inter.steal_top();
    engine::observe_steal(w, head_of_[v], j != nullptr);  // the victim socket, by its head
    if (j) return j;
  }
  return nullptr;
}

detail::job* cab_policy::steal(engine::worker& w) {
  // Intra-socket work of this socket first (seed 000 §3.3).
  const auto& mine = members_[socket_of_[w.id]];
  if (mine.size() > 1) {
    for (std::size_t i = 1; i < mine.size(); ++i)
      if (detail::job* j = steal_one_of(w, static_cast<unsigned>(mine.size()), [&](unsigned k) { return mine[k]; }))
        return j;
  }
  if (is_head(w.id)) return take_inter(w);
  return nullptr;
}

detail::job* cab_policy::take_left_behind(engine::worker& w) {
  auto take_from = [](socket& s) -> detail::job* {
    if (detail::job* j = s.home.pop_bottom()) return j;
    return s.inter.pop_bottom();
  };
  if (is_head(w.id))
    if (detail::job* j = take_from(sockets_[socket_of_[w.id]])) return j;
  if (!eng_.stopping()) return nullptr;
  for (socket& s : sockets_)
    if (detail::job* j = take_from(s)) return j;
  return nullptr;
}

bool cab_policy::has_visible_work(engine::worker& w) const {
  if (!is_head(w.id)) return false;
  const unsigned mine = socket_of_[w.id];
  for (unsigned v = 0; v < sockets_.size(); ++v) {
    const socket& s = sockets_[v];
    if (!s.inter.empty_hint()) return true;
    // Another socket's homed leaf is this head's only while that socket is busy (take_inter).
    if (!s.home.empty_hint() && (v == mine || s.subtrees.load(std::memory_order_acquire) > 0)) return true;
  }
  return false;
}

std::string cab_policy::notes() const {
  std::ostringstream os;
  os << "boundary level " << level_ << (eng_.config().cab_level ? "" : " (from the topology)") << ", "
     << staffed_.size() << " socket" << (staffed_.size() == 1 ? "" : "s") << " with workers"
     << (staffed_.size() < sockets_.size() ? " of " + std::to_string(sockets_.size()) : std::string())
     << (one_subtree_ ? ", one subtree per socket at a time" : ", several subtrees per socket");
  return os.str();
}

}  // namespace roost::sched
