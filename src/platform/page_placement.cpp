#include "platform/page_placement.hpp"

#include <numa.h>
#include <numaif.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>
#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "platform/platform.hpp"
#include "platform/sim_platform.hpp"
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

bool libnuma_usable() {
  static const bool ok = ::numa_available() >= 0;
  return ok;
}

// The kernel's interleave policy puts the page at address a of an anonymous private mapping on the
// ((a / page) mod N)-th allowed node (mm/mempolicy.c, interleave_nid: the mapping's vm_pgoff is its start's
// page number), which is the allocator's own fine rule (page k of the allocation on node k mod N) when the
// mask holds nodes 0..N-1 and the allocation starts at a page number that is a multiple of N
// (map_at_page_multiple; an outside-user campaign found the rule off by the start's phase).
void bind_native(const placed_range& r) {
  const unsigned n = page_placement::native_nodes();
  if (n <= 1 || r.rule == page_rule::first_touch) return;
  auto fail = [&](const char* what) {
    throw config_error(std::string("roost data distribution: ") + what + " refused (" + std::strerror(errno) +
                       ") for " + std::to_string(r.bytes) + " bytes on " + std::to_string(n) + " nodes");
  };
  std::vector<unsigned long> mask((n + 63) / 64, 0);
  if (r.rule == page_rule::round_robin) {
    for (unsigned i = 0; i < n; ++i) mask[i / 64] |= 1ul << (i % 64);
    if (::mbind(reinterpret_cast<void*>(r.base), r.bytes, MPOL_INTERLEAVE, mask.data(), n + 1, 0) != 0)
      fail("mbind(MPOL_INTERLEAVE)");
    return;
  }
  const std::size_t page = os::page_size(), pages = r.bytes / page;
  for (std::uint64_t p = 0; p < r.parts; ++p) {
    const unsigned node = static_cast<unsigned>((r.first_part + p) % n);
    std::fill(mask.begin(), mask.end(), 0);
    mask[node / 64] |= 1ul << (node % 64);
    const std::size_t off = part_first_page(r, pages, p) * page, len = part_first_page(r, pages, p + 1) * page - off;
    if (::mbind(reinterpret_cast<void*>(r.base + off), len, MPOL_BIND, mask.data(), n + 1, 0) != 0)
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
  return status < static_cast<int>(nodes) ? status : unknown;
}

unsigned page_placement::native_nodes() {
  static const unsigned n = libnuma_usable() ? static_cast<unsigned>(::numa_max_node() + 1) : 1u;
  return n;
}

std::size_t page_placement::native_node_bytes(unsigned node) {
  if (!libnuma_usable()) return 0;
  long long free_bytes = 0;
  const long long size = ::numa_node_size64(static_cast<int>(node), &free_bytes);
  return size > 0 ? static_cast<std::size_t>(size) : 0;
}

}  // namespace roost::platform
