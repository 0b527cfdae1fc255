// Data distribution over NUMA nodes (seed 002 §3): an allocator whose memory is placed by a policy, and a
// std::vector over it.
//
//   auto* a = static_cast<double*>(roost::numa_alloc(bytes, roost::distribution::fine));
//   roost::numa_vector<double> v(n, 0.0, roost::numa_allocator<double>(roost::distribution::coarse, 8));
//   ...
//   roost::numa_free(a);
//
// The policies (seed 002 Table 1; Table 3 says which suits a program):
//   standard  the machine's default: a page lives on the node of the core that first touches it
//   fine      the pages of an allocation round-robin over the nodes (what numactl --interleave does)
//   coarse    each allocation whole on one node, successive allocations on successive nodes; an allocation
//             made of `parts` parts counts each part as an allocation of its own, so parts == nodes cuts
//             one array into contiguous blocks, one per node (parts of whole pages, as even as that allows:
//             their sizes differ by one page at most). "Successive" counts per runtime: the allocations of
//             a runtime's tasks go on from where the process's count stood when the runtime was made, those
//             outside every task on the process's count, so one runtime's allocations never move another's
//             data (the same program run twice in one process places its data the same way)
// The default for numa_alloc(bytes) and numa_allocator<T>() is ROOST_DATA_DISTRIBUTION (standard, fine or
// coarse; read the first time the default is needed: the first numa_alloc without a distribution, or the
// first numa_allocator made without one), unless set_default_distribution() or a runtime made with
// options::data_distribution set one. numa_allocator<T>() takes the default when it is constructed: a
// container made before either keeps the distribution it found.
//
// Natively the pages are bound with libnuma (mbind); under the simulated platform (ROOST_PLATFORM=sim) the
// same rule places them on the simulated machine's nodes when a task first touches them, so one program
// distributes its data over 8 simulated nodes or over this machine's one. The simulated machine places its
// own pages whole (ROOST_SIM_PARAMS page_size): where they are larger than this machine's, the rule counts
// simulated pages, so coarse parts smaller than one simulated page share it, on the node of its first part.
// A distribution never changes results, only where the data lives.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <cstddef>
#include <type_traits>
#include <new>
#include <string>

namespace roost {

enum class distribution { standard, fine, coarse };

// "standard", "fine" or "coarse"; "distribution(7)" for a value outside the enumeration (a cast from a
// number), which every call that takes one refuses with a usage_error.
std::string to_string(distribution d);
// "standard", "fine" or "coarse", any case; a roost::config_error naming `what`, the text and the valid
// names otherwise.
distribution parse_distribution(const std::string& text, const std::string& what = "distribution");

distribution default_distribution();
void set_default_distribution(distribution d);

// Page-aligned, zero-filled memory of `bytes` bytes placed by `d` (parts: see above; at least 1, and at
// most one per page). nullptr for 0 bytes. A roost::usage_error for parts out of range or a coarse part
// larger than a node's memory; a roost::allocation_error (a std::bad_alloc naming the call and the size,
// roost/errors.hpp) for a size no address space holds or memory the system refuses.
void* numa_alloc(std::size_t bytes);
void* numa_alloc(std::size_t bytes, distribution d, std::size_t parts = 1);
// Frees what numa_alloc returned (nullptr: nothing). Anything else is a usage_error.
void numa_free(void* p);
// The node that holds p's page: the distribution's rule for numa_alloc memory, else where the page lives
// now; -1 when it is not placed yet (never touched), and for nullptr. The node of this machine, or, called
// from a task of a simulated runtime (ROOST_PLATFORM=sim), of the simulated machine. On a machine (or
// simulated topology) of one node, 0 for any other address.
int numa_node_of(const void* p);

namespace detail {
// numa_alloc with at most `parts` parts: as many as the allocation has pages where it has fewer (what
// numa_allocator asks for, whose containers make small allocations too).
void* numa_alloc_up_to(std::size_t bytes, distribution d, std::size_t parts);
// numa_allocator's settings, checked when it is made (its first allocation named numa_alloc's parameters,
// which the program never gave): a usage_error for a distribution outside the enumeration or parts == 0.
void check_allocator(distribution d, std::size_t parts);
}  // namespace detail

// A std::allocator-compatible allocator over numa_alloc: every allocation placed by one distribution, in up
// to `parts` parts (coarse: fewer where an allocation spans fewer pages, as a vector's first ones do).
// Every allocation is whole pages of its own (one mmap): made for arrays (std::vector), not for node-based
// containers, where each element would take a page (a std::list of 100,000 longs took 400 MB).
template <class T>
class numa_allocator {
  // numa_alloc's memory is page-aligned: at least 4 KiB, the smallest page of any machine roost runs on.
  static_assert(alignof(T) <= 4096, "roost::numa_allocator: an element aligned beyond a page (4096 bytes)");

 public:
  using value_type = T;
  // Any numa_allocator frees any other's memory (numa_free takes every block numa_alloc made), so the
  // placement moves with the memory: swapping two numa_vectors of different distributions is defined
  // (libstdc++ asserted on unequal allocators), and a move assignment takes the buffer whole instead of
  // copying it element by element into the destination's placement. A copy keeps the destination's.
  using propagate_on_container_swap = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  numa_allocator() : numa_allocator(default_distribution()) {}
  explicit numa_allocator(distribution d, std::size_t parts = 1) : dist_(d), parts_(parts) { detail::check_allocator(d, parts); }
  template <class U>
  numa_allocator(const numa_allocator<U>& o) : dist_(o.dist()), parts_(o.parts()) {}

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(detail::numa_alloc_up_to(n * sizeof(T), dist_, parts_));
  }
  void deallocate(T* p, std::size_t) { numa_free(p); }

  distribution dist() const { return dist_; }
  std::size_t parts() const { return parts_; }
  template <class U>
  bool operator==(const numa_allocator<U>& o) const { return dist_ == o.dist() && parts_ == o.parts(); }

 private:
  distribution dist_;
  std::size_t parts_;
};

}  // namespace roost

#include <vector>
namespace roost {
template <class T>
using numa_vector = std::vector<T, numa_allocator<T>>;
}  // namespace roost

#include "roost/detail/min_max_back.hpp"
