#include "platform/page_placement.hpp"

#include <numa.h>
#include <pthread.h>
#include <numaif.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <algorithm>
#include <map>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "platform/fork_hold.hpp"
#include "platform/platform.hpp"
#include "platform/sim_platform.hpp"
#include "roost/detail/sanitizers.hpp"
#include "roost/errors.hpp"

namespace roost::platform {

namespace {

// Registered ranges by base. Allocations are rare and lookups a few per dealt task: a shared lock suffices.
struct registry {
  std::shared_mutex mu;
  std::map<std::uintptr_t, placed_range> by_base;
  std::mutex listeners_mu;
  std::vector<std::pair<page_placement::removal_listener, void*>> listeners;
};
registry& ranges() {
  static registry* r = new registry;  // never destroyed: memory may be freed during static destruction
  return *r;
}
// Both locks are held across fork(), so that a child forked while another thread allocated or freed placed
// memory gets them free; taken in the order remove() nests them (a removal listener may look a range up).
// Registered before main.
void placements_before_fork() {
  preemption_off_for_fork();  // fork_hold.hpp
  ranges().listeners_mu.lock();
  ranges().mu.lock();
}
void placements_after_fork_in_parent() {
  ranges().mu.unlock();
  ranges().listeners_mu.unlock();
  preemption_back_after_fork();
}
// The child's thread has another thread id than the parent's that took the write lock, and glibc's rwlock
// unlock reads a writer by its id: unlocked there, it stayed write-locked and the child's first numa_alloc
// hung. The child's only thread holds the lock alone, so a new lock in its place is the same lock free.
void placements_after_fork_in_child() {
#ifdef ROOST_TSAN
  // TSan's view: the old lock released (else it took the child's thread for its holder for good, and saw
  // every lock the child takes later nested inside it). The real unlock does nothing useful here; the lock is
  // made anew below.
  ranges().mu.unlock();
#endif
  ::new (static_cast<void*>(&ranges().mu)) std::shared_mutex;
  ranges().listeners_mu.unlock();
  preemption_back_after_fork();
}
__attribute__((constructor)) void watch_forks_for_placements() {
  ::pthread_atfork(&placements_before_fork, &placements_after_fork_in_parent, &placements_after_fork_in_child);
}

bool libnuma_usable() {
  static const bool ok = ::numa_available() >= 0;
  return ok;
}

// The kernel's interleave policy puts the page at address a of an anonymous private mapping on the
// ((a / page) mod N)-th allowed node (mm/mempolicy.c, interleave_nid: the mapping's vm_pgoff is its start's
// page number), which is the allocator's own fine rule (page k of the allocation on node k mod N) when the
// mask holds the N usable nodes and the allocation starts at a page number that is a multiple of N
// (map_at_page_multiple; an outside-user campaign found the rule off by the start's phase).
// The usable nodes' system numbers (page_placement::native_nodes): the mbind masks below name these, not
// 0..n-1, which on a machine whose process may use node 1 alone (a cgroup's cpuset.mems) named node 0, and
// mbind refused every coarse allocation with EINVAL.
const std::vector<int>& usable_nodes() {
  static const std::vector<int> ids = [] {
    std::vector<int> none;
    if (!libnuma_usable()) return none;
    const int max = ::numa_max_node();
    if (max < 0) return none;
    std::vector<bool> allowed(static_cast<std::size_t>(max) + 1), with_memory(allowed.size());
    if (bitmask* mems = ::numa_get_mems_allowed()) {
      for (int i = 0; i <= max; ++i) allowed[static_cast<std::size_t>(i)] = ::numa_bitmask_isbitset(mems, i) != 0;
      ::numa_bitmask_free(mems);
    }
    for (int i = 0; i <= max; ++i) with_memory[static_cast<std::size_t>(i)] = ::numa_node_size64(i, nullptr) > 0;
    return page_placement::usable_among(allowed, with_memory);
  }();
  return ids;
}

void bind_native(const placed_range& r) {
  const unsigned n = page_placement::native_nodes();
  if (n <= 1 || r.rule == page_rule::first_touch) return;
  const std::vector<int>& ids = usable_nodes();
  auto fail = [&](const char* what) {
    throw config_error(std::string("roost data distribution: ") + what + " refused (" + std::strerror(errno) +
                       ") for " + std::to_string(r.bytes) + " bytes on " + std::to_string(n) + " nodes");
  };
  const unsigned bits = static_cast<unsigned>(ids.back()) + 1;  // the mask's length: up to the highest number
  std::vector<unsigned long> mask((bits + 63) / 64, 0);
  auto set = [&](int id) { mask[static_cast<unsigned>(id) / 64] |= 1ul << (static_cast<unsigned>(id) % 64); };
  if (r.rule == page_rule::round_robin) {
    // Interleaving goes over the mask's nodes in order of their numbers: the i-th usable node is node i.
    for (int id : ids) set(id);
    if (::mbind(reinterpret_cast<void*>(r.base), r.bytes, MPOL_INTERLEAVE, mask.data(), bits + 1, 0) != 0)
      fail("mbind(MPOL_INTERLEAVE)");
    return;
  }
  const std::size_t page = os::page_size(), pages = r.bytes / page;
  for (std::uint64_t p = 0; p < r.parts; ++p) {
    std::fill(mask.begin(), mask.end(), 0);
    set(ids[static_cast<std::size_t>((r.first_part + p) % n)]);
    const std::size_t off = part_first_page(r, pages, p) * page, len = part_first_page(r, pages, p + 1) * page - off;
    if (::mbind(reinterpret_cast<void*>(r.base + off), len, MPOL_BIND, mask.data(), bits + 1, 0) != 0)
      fail("mbind(MPOL_BIND)");
  }
}

}  // namespace

void* page_placement::map_at_page_multiple(std::size_t bytes, std::size_t multiple) {
  const std::size_t page = os::page_size();
  if (multiple <= 1) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  // Room for any phase, then the head and the tail given back.
  const std::size_t slack = (multiple - 1) * page;
  if (bytes > std::numeric_limits<std::size_t>::max() - slack) return nullptr;
  void* m = ::mmap(nullptr, bytes + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(m);
  const std::size_t first = start / page;
  const std::uintptr_t base = (first + (multiple - first % multiple) % multiple) * page;
  if (base > start) ::munmap(m, base - start);
  if (const std::size_t tail = start + bytes + slack - (base + bytes)) ::munmap(reinterpret_cast<void*>(base + bytes), tail);
  return reinterpret_cast<void*>(base);
}

void page_placement::add(const placed_range& r) {
  bind_native(r);
  std::unique_lock lk(ranges().mu);
  ranges().by_base[r.base] = r;
}

std::size_t page_placement::remove(std::uintptr_t base) {
  std::size_t bytes = 0;
  {
    std::unique_lock lk(ranges().mu);
    auto it = ranges().by_base.find(base);
    if (it == ranges().by_base.end()) return 0;
    bytes = it->second.bytes;
    ranges().by_base.erase(it);
  }
  // Every listener hears of it even if one throws (std::bad_alloc queueing it): the first error leaves last.
  std::lock_guard lk(ranges().listeners_mu);
  std::exception_ptr first_error;
  for (const auto& [fn, ctx] : ranges().listeners) try {
      fn(ctx, base, bytes);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  if (first_error) std::rethrow_exception(first_error);
  return bytes;
}

void page_placement::listen_to_removals(removal_listener fn, void* ctx) {
  std::lock_guard lk(ranges().listeners_mu);
  ranges().listeners.emplace_back(fn, ctx);
}

void page_placement::stop_listening(void* ctx) {
  std::lock_guard lk(ranges().listeners_mu);
  auto& l = ranges().listeners;
  l.erase(std::remove_if(l.begin(), l.end(), [ctx](const auto& e) { return e.second == ctx; }), l.end());
}

bool page_placement::find(std::uintptr_t addr, placed_range& out) {
  std::shared_lock lk(ranges().mu);
  auto& m = ranges().by_base;
  auto it = m.upper_bound(addr);
  if (it == m.begin()) return false;
  --it;
  if (addr - it->second.base >= it->second.bytes) return false;
  out = it->second;
  return true;
}

std::size_t page_placement::rule_page_bytes() {
  const std::size_t host = os::page_size();
  return t_sim && t_sim->page_bytes > host ? t_sim->page_bytes : host;
}

int page_placement::node_by_rule(const placed_range& r, std::uintptr_t addr, unsigned nodes) {
  if (nodes <= 1) return 0;
  const std::size_t off = addr - r.base;
  const std::size_t page = rule_page_bytes();
  switch (r.rule) {
    case page_rule::first_touch: return unknown;
    case page_rule::round_robin: return static_cast<int>((off / page) % nodes);
    case page_rule::per_part:
      return static_cast<int>((r.first_part + part_of_page(r, (r.bytes + page - 1) / page, off / page)) % nodes);
  }
  return unknown;
}

int page_placement::node_by_rule(std::uintptr_t addr, unsigned nodes) {
  placed_range r;
  return find(addr, r) ? node_by_rule(r, addr, nodes) : unknown;
}

int page_placement::node_of(const void* p, unsigned nodes) {
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  const int by_rule = node_by_rule(addr, nodes);
  return by_rule != unknown ? by_rule : node_now(addr, nodes);
}

int page_placement::node_now(std::uintptr_t addr, unsigned nodes) {
  if (nodes <= 1) return 0;
  if (t_sim) return t_sim->page_node ? t_sim->page_node(addr) : unknown;
  if (native_nodes() <= 1 || !libnuma_usable()) return unknown;  // a virtual topology over one node
  void* page = reinterpret_cast<void*>(addr & ~(os::page_size() - 1));
  int status = -1;
  if (::move_pages(0, 1, &page, nullptr, &status, 0) != 0 || status < 0) return unknown;  // not yet touched
  // A system number, made the usable node's number (it was taken as one: on node numbers 0 and 8, a page on
  // node 8 was unknown, and with node 0 left out by the cpuset every node was one off).
  const std::vector<int>& ids = usable_nodes();
  const auto at = std::find(ids.begin(), ids.end(), status);
  if (at == ids.end()) return unknown;
  const int node = static_cast<int>(at - ids.begin());
  return node < static_cast<int>(nodes) ? node : unknown;
}

std::vector<int> page_placement::usable_among(const std::vector<bool>& allowed, const std::vector<bool>& with_memory) {
  std::vector<int> ids;
  for (std::size_t i = 0; i < allowed.size() && i < with_memory.size(); ++i)
    if (allowed[i] && with_memory[i]) ids.push_back(static_cast<int>(i));
  return ids;
}

unsigned page_placement::native_nodes() {
  // At least 1: a process whose allowed nodes libnuma could not read places nothing itself (bind_native).
  static const unsigned n = std::max<unsigned>(1, static_cast<unsigned>(usable_nodes().size()));
  return n;
}

int page_placement::usable_native_node(unsigned node) {
  const std::vector<int>& ids = usable_nodes();
  return node < ids.size() ? ids[node] : -1;
}

std::size_t page_placement::native_node_bytes(unsigned node) {
  const int id = usable_native_node(node);
  if (id < 0) return 0;
  long long free_bytes = 0;
  const long long size = ::numa_node_size64(id, &free_bytes);
  return size > 0 ? static_cast<std::size_t>(size) : 0;
}

}  // namespace roost::platform
