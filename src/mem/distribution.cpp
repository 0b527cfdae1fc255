// The data distribution allocator (seed 002 §3): memory from mmap, placed by the policy's rule
// (platform/page_placement.hpp) natively and in simulation, and the process-wide default policy.
#include "mem/distribution.hpp"

#include <sys/mman.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <limits>
#include <sstream>

#include "engine/engine_base.hpp"
#include "engine/worker.hpp"
#include "platform/fork_hold.hpp"
#include "platform/page_placement.hpp"
#include "platform/platform.hpp"
#include "platform/sim_platform.hpp"
#include "platform/trim_space.hpp"
#include "roost/detail/abi.hpp"
#include "roost/errors.hpp"
#include "roost/memory.hpp"

namespace roost {

namespace {

using platform::page_placement;
using platform::page_rule;
using platform::placed_range;

std::mutex g_default_mu;
__attribute__((constructor)) void watch_forks_for_default() {
  platform::hold_across_forks<g_default_mu>();  // a child's numa_alloc reads the default (platform/fork_hold.hpp)
}
bool g_default_set = false;
bool g_default_in_code = false;  // set_default_distribution: the variable is not read
distribution g_default = distribution::standard;

// Seed 002 §3: "the round-robin node selection counter for the coarse distribution policy". The process's,
// for allocations made outside every runtime's tasks; a runtime's tasks count on the runtime's own
// (engine_base::coarse_parts), which starts where this one stood when the runtime was made.
std::atomic<std::uint64_t> g_next_part{0};

// A distribution outside the enumeration (a cast from a number) is named, not read as standard.
void check_distribution(distribution d, const char* call) {
  if (d == distribution::standard || d == distribution::fine || d == distribution::coarse) return;
  std::ostringstream os;
  os << call << ": distribution " << static_cast<int>(d)
     << " is none of roost::distribution::standard, fine or coarse";
  throw usage_error(os.str());
}

}  // namespace

std::string to_string(distribution d) {
  switch (d) {
    case distribution::standard: return "standard";
    case distribution::fine: return "fine";
    case distribution::coarse: return "coarse";
  }
  // A cast from a number outside the enumeration: named as what it is (it was "?"), for the messages that
  // print one; every call that takes a distribution refuses it (check_distribution).
  return "distribution(" + std::to_string(static_cast<int>(d)) + ")";
}

distribution parse_distribution(const std::string& text, const std::string& what) {
  std::string t = platform::trim_space(text);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // An empty value as every other setting reads it (options.cpp, text_of): the allocator reads the variable
  // itself when no runtime gave it a default.
  if (t.empty())
    throw config_error(what + "='" + text + "': empty; must be standard, fine or coarse (" +
                       (what.rfind("ROOST_", 0) == 0 ? "unset " + what : "leave " + what + " unset") +
                       " for the default: standard)");
  if (t == "standard") return distribution::standard;
  if (t == "fine") return distribution::fine;
  if (t == "coarse") return distribution::coarse;
  throw config_error(what + "='" + text + "': must be one of standard (first touch), fine (pages round-robin over "
                     "the nodes), coarse (each allocation on one node, round-robin)");
}

// The two take the default's lock: a task is not preempted inside them, where another task of its worker's
// thread would find the lock taken (an outside-user campaign: tasks that made numa_allocators hung).
distribution default_distribution() {
  detail::no_preempt_scope np(detail::running_fiber());
  std::lock_guard lk(g_default_mu);
  if (!g_default_set) {
    if (const char* e = std::getenv("ROOST_DATA_DISTRIBUTION")) g_default = parse_distribution(e, "ROOST_DATA_DISTRIBUTION");
    g_default_set = true;
  }
  return g_default;
}

void set_default_distribution(distribution d) {
  check_distribution(d, "roost::set_default_distribution");
  detail::no_preempt_scope np(detail::running_fiber());
  std::lock_guard lk(g_default_mu);
  g_default = d;
  g_default_set = true;
  g_default_in_code = true;
}

std::uint64_t detail::coarse_parts_counted_outside_runtimes() { return g_next_part.load(std::memory_order_relaxed); }

bool detail::default_distribution_set_in_code() {
  std::lock_guard lk(g_default_mu);
  return g_default_in_code;
}

// The calls below take the placement registry's lock: a task is not preempted inside them, where another
// task of its worker's thread would find the lock taken (engine/preemption.cpp).
void* numa_alloc(std::size_t bytes) {
  detail::no_preempt_scope np(detail::running_fiber());
  return numa_alloc(bytes, default_distribution());
}

void* numa_alloc(std::size_t bytes, distribution d, std::size_t parts) {
  detail::no_preempt_scope np(detail::running_fiber());
  check_distribution(d, "roost::numa_alloc");
  const std::size_t page = platform::os::page_size();
  // Memory it cannot have: a std::bad_alloc, what operator new says, naming the call (a bare std::bad_alloc
  // named nothing: an outside-user campaign).
  auto refused = [&](const char* why) {
    return allocation_error("roost::numa_alloc(" + std::to_string(bytes) + " bytes, " + to_string(d) + "): " + why);
  };
  // No address space holds it (and bytes + page - 1 would wrap).
  if (bytes > std::numeric_limits<std::size_t>::max() / 2) throw refused("no address space holds that many bytes");
  const std::size_t pages = (bytes + page - 1) / page;
  if (parts == 0 || (bytes != 0 && parts > pages)) {
    std::ostringstream os;
    os << "roost::numa_alloc(" << bytes << " bytes, " << to_string(d) << ", parts=" << parts << "): parts must be ";
    // 0 bytes take any count of parts but 0 (nothing is placed): the bound is the pages' only for memory.
    if (bytes == 0) os << "at least 1";
    else os << "in [1, " << pages << "] (at most one per page)";
    throw usage_error(os.str());
  }
  if (bytes == 0) return nullptr;
  placed_range r;
  r.bytes = pages * page;
  r.rule = d == distribution::fine ? page_rule::round_robin : d == distribution::coarse ? page_rule::per_part
                                                                                         : page_rule::first_touch;
  if (r.rule == page_rule::per_part) {
    r.parts = parts;  // at most one per page (checked above): every part has a page
    r.part_bytes = (pages + parts - 1) / parts * page;  // the largest
    // A part lives whole on one node: it must fit one (of the simulated machine, in one of its tasks).
    const platform::sim_platform* sim = platform::t_sim;
    // One simulated node: nothing to place, whatever hwloc's default node size (1 GiB for a synthetic one).
    const std::size_t node_bytes = !sim ? page_placement::native_node_bytes(0) : sim->numa_nodes > 1 ? sim->numa_node_bytes : 0;
    if (node_bytes != 0 && r.part_bytes > node_bytes) {
      std::ostringstream os;
      os << "roost::numa_alloc(" << bytes << " bytes, coarse, parts=" << parts << "): a part of " << r.part_bytes
         << " bytes is larger than a " << (sim ? "simulated " : "") << "NUMA node (" << node_bytes
         << " bytes); use more parts, or fine";
      throw usage_error(os.str());
    }
    engine::worker* w = engine::current_worker();  // a task's: its runtime counts (engine_base::coarse_parts)
    r.first_part = (w ? w->eng->coarse_parts() : g_next_part).fetch_add(parts, std::memory_order_relaxed);
  }
  // Fine memory starts at a page number that is a multiple of this machine's nodes, where the kernel's
  // interleaving places it by the rule (page_placement.hpp).
  void* p = page_placement::map_at_page_multiple(
      r.bytes, r.rule == page_rule::round_robin ? std::max(1u, page_placement::native_nodes()) : 1);
  if (!p) throw refused("the system refused the memory (more than it can commit?)");
  // The kernel interleaves a transparent huge page by its own index (2 MiB on one node), not page by page:
  // fine memory asks for small pages (a hint; where huge pages are off it changes nothing).
  if (r.rule == page_rule::round_robin) ::madvise(p, r.bytes, MADV_NOHUGEPAGE);
  r.base = reinterpret_cast<std::uintptr_t>(p);
  try {
    page_placement::add(r);
  } catch (...) {
    ::munmap(p, r.bytes);
    throw;
  }
  return p;
}

void numa_free(void* p) {
  if (!p) return;
  detail::no_preempt_scope np(detail::running_fiber());
  placed_range r;
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  if (!page_placement::find(addr, r) || r.base != addr) {
    std::ostringstream os;
    os << "roost::numa_free(" << p << "): not an address roost::numa_alloc returned (or freed already)";
    throw usage_error(os.str());
  }
  // The lookup above names the error for most mistakes; the removal decides. Two threads freeing the same
  // block both found it, and both unmapped it (the second unmapping whatever had been mapped there since):
  // only the one whose removal took the range unmaps it, the other is told it was freed already.
  std::size_t bytes = 0;
  try {
    bytes = page_placement::remove(addr);
  } catch (...) {
    ::munmap(p, r.bytes);  // the memory goes back whatever a listener said (only the remover's listeners run)
    throw;
  }
  if (bytes == 0) {
    std::ostringstream os;
    os << "roost::numa_free(" << p << "): freed already (by another thread at the same time)";
    throw usage_error(os.str());
  }
  ::munmap(p, bytes);
}

void detail::check_allocator(distribution d, std::size_t parts) {
  check_distribution(d, "roost::numa_allocator");
  if (parts == 0)
    throw usage_error("roost::numa_allocator(" + to_string(d) + ", parts=0): parts must be at least 1 (an "
                      "allocation gets as many as it has pages, up to parts)");
}

void* detail::numa_alloc_up_to(std::size_t bytes, distribution d, std::size_t parts) {
  const std::size_t page = platform::os::page_size();
  const std::size_t pages = bytes / page + (bytes % page != 0);
  return numa_alloc(bytes, d, parts > pages && pages > 0 ? pages : parts);
}

int numa_node_of(const void* p) {
  if (!p) return -1;  // no page
  detail::no_preempt_scope np(detail::running_fiber());
  const platform::sim_platform* sim = platform::t_sim;  // a task of a simulated runtime: its machine
  return page_placement::node_of(p, sim ? sim->numa_nodes : page_placement::native_nodes());
}

}  // namespace roost
