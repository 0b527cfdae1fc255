// Where memory lives: the platform's half of seed 002's data distribution (§3). The allocator (src/mem)
// registers each distributed allocation here with its rule; the native platform applies the rule with
// libnuma when the memory is made, and the simulated one applies it when a task first touches a page
// (api/simulation.cpp), on the simulated machine's nodes. Whoever asks where a page lives (the numa
// scheduler's Algorithm 1) gets the rule's answer for registered memory and the page's actual node
// otherwise: the simulator's page map, or move_pages(2) on this machine.
//
// A rule names nodes by the count it is evaluated for, so the same allocation is spread over 8 nodes on
// a simulated 8-node machine and over this machine's nodes natively.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace roost::platform {

enum class page_rule : std::uint8_t {
  first_touch,  // seed 002's "standard": the node of the first core that touches the page
  round_robin,  // "fine": page k of the allocation on node k mod N
  per_part,     // "coarse": part p (of `parts`) of the allocation on node (first_part + p) mod N
};

struct placed_range {
  std::uintptr_t base = 0;
  std::size_t bytes = 0;  // a whole number of pages
  page_rule rule = page_rule::first_touch;
  // per_part: the allocation's pages split into `parts` runs as even as whole pages allow (their sizes
  // differ by a page at most; part_first_page), `part_bytes` the largest. Parts of one size, the ceiling,
  // made fewer than asked where it did not divide (9 pages in 8 parts were 5 parts of 2 pages).
  std::uint64_t parts = 1;
  std::size_t part_bytes = 0;
  std::uint64_t first_part = 0;  // per_part: the allocator's round-robin count at this allocation
};

// per_part: the part that holds page k (from the allocation's start) of r, which has `pages` pages; and
// the first page of part p (p == r.parts: the end). Part p holds pages [first_page(p), first_page(p + 1)).
inline std::uint64_t part_of_page(const placed_range& r, std::uint64_t pages, std::uint64_t k) {
  return static_cast<std::uint64_t>(static_cast<unsigned __int128>(k) * r.parts / pages);
}
inline std::uint64_t part_first_page(const placed_range& r, std::uint64_t pages, std::uint64_t p) {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(p) * pages + r.parts - 1) / r.parts);
}

class page_placement {
 public:
  static constexpr int unknown = -1;

  // Registers [base, base + bytes) (page-aligned, not overlapping a registered range) and, natively, binds
  // its pages with mbind(2) where the machine has more than one node. Throws roost::config_error when the
  // kernel refuses.
  static void add(const placed_range& r);
  // Maps `bytes` (whole pages) of anonymous read-write memory whose first page's number is a multiple of
  // `multiple` (1: anywhere), or nullptr when mmap(2) fails. The kernel's interleave policy puts the page at
  // address a on node (a / page) mod N, not page k of the mapping on node k mod N: a fine allocation mapped
  // at such an address is placed by the allocator's rule (page k on node k mod N) when `multiple` is N.
  static void* map_at_page_multiple(std::size_t bytes, std::size_t multiple);
  // Unregisters the range that starts at `base` and tells the removal listeners (below), on the calling
  // thread; returns its bytes, or 0 when no range starts there (never added, or removed already). The
  // lookup and the removal are one step under the registry's lock, so that of two threads removing the same
  // range exactly one does. What a listener throws comes out after all of them heard of it (the range is
  // unregistered either way).
  static std::size_t remove(std::uintptr_t base);
  // Called with each range removed (its memory is about to be unmapped): the simulated platform forgets its
  // pages, so that memory made again at the same addresses is placed afresh. `ctx` names the listener.
  using removal_listener = void (*)(void* ctx, std::uintptr_t base, std::size_t bytes);
  static void listen_to_removals(removal_listener fn, void* ctx);
  static void stop_listening(void* ctx);
  // The registered range holding addr, if any.
  static bool find(std::uintptr_t addr, placed_range& out);
  // The node the rule of the range holding addr gives on a machine of `nodes` nodes; unknown when no
  // range holds it or its rule is first touch.
  // The pages a rule numbers: this machine's, or in a task of a simulated runtime whose model pages are
  // larger (sim_params page_size), the model's, which the simulated machine places whole.
  static std::size_t rule_page_bytes();
  static int node_by_rule(std::uintptr_t addr, unsigned nodes);
  static int node_by_rule(const placed_range& r, std::uintptr_t addr, unsigned nodes);

  // Where the page of addr lives on a machine of `nodes` nodes: the rule for registered memory, else the
  // page's node now (the simulator's page map while simulating, move_pages on this machine), else unknown.
  static int node_of(const void* addr, unsigned nodes);
  // The second half of node_of alone: where the page lives now, for a caller that asked the rule already.
  static int node_now(std::uintptr_t addr, unsigned nodes);

  // NUMA nodes of this machine this process may place memory on (libnuma; 1 without NUMA support): the
  // nodes its cpuset allows (a container's or a batch job's cgroup may leave out some) that have memory,
  // numbered 0..n-1 in the order of their system numbers: hwloc's order (it shows the allowed nodes), which
  // the topology's nodes follow, where every node has cores; with memory-only nodes (KNL's MCDRAM, CXL)
  // hwloc may put them elsewhere, and the two numberings differ: this layer has no topology, so the numa
  // scheduler matches these nodes to the topology's by system number (numa_policy::topology_nodes_of).
  // The allocator's rules, move_pages' answers and native_node_bytes use these numbers;
  // usable_native_node(i) is node i's system number.
  static unsigned native_nodes();
  static int usable_native_node(unsigned node);
  // Bytes of memory node `node` (of native_nodes()) of this machine has (0 if unknown).
  static std::size_t native_node_bytes(unsigned node);
  // The usable nodes' system numbers among 0..allowed.size()-1: those both allowed and with memory. Apart
  // for tests: a machine of one node has nothing to leave out.
  static std::vector<int> usable_among(const std::vector<bool>& allowed, const std::vector<bool>& with_memory);
};

}  // namespace roost::platform
