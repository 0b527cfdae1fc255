// What every benchmark provides, independent of the parallel framework (compiled by GCC and clang).
#pragma once
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

// A prepared instance: inputs, the output the variants write, and the serial reference computed once.
class problem {
 public:
  virtual ~problem() = default;
  virtual void reset() = 0;         // before every repetition: inputs back to their initial state
  virtual bool check() const = 0;   // the output equals the serial reference (exactly, or within a stated tolerance)
  virtual std::string describe() const = 0;  // "1024x512 doubles, 100 iterations, 8 MiB"
};

using variant_fn = void (*)(problem&);

struct benchmark_def {
  const char* name;
  const char* seed;  // where it comes from
  const char* what;
  const char* default_size;
  const char* small_size;  // for tests
  const char* paper_size;
  std::unique_ptr<problem> (*prepare)(const std::string& size);  // throws size_error
  variant_fn serial;
  // nullptr: no such version (yet).
  variant_fn roost;        // called inside roost::runtime::run
  variant_fn tbb_tasks;    // called inside a tbb::task_arena
  variant_fn tbb_pfor;     // parallel_for with affinity_partitioner (loop-shaped benchmarks)
  variant_fn omp_tasks;    // called with the OpenMP thread count set
  variant_fn omp_static;   // parallel for schedule(static)
  variant_fn omp_dynamic;  // parallel for schedule(dynamic)
  // Single-threaded floors of the spawn overhead (fib/floor.cpp): not runtimes, the least any library pays.
  variant_fn floor_help = nullptr;    // help-first: push a frame pointer, pop, compare, call
  variant_fn floor_switch = nullptr;  // work-first: two Boost.Context switches per spawn
  variant_fn floor_call = nullptr;    // work-first: the child called on another stack (roost's ws, issue #25)
  variant_fn floor_linked = nullptr;  // help-first with the deque's private part linked through the frames
  variant_fn floor_erased = nullptr;  // floor_linked's two-way join calling the pushed half through its frame
  variant_fn floor_value = nullptr;   // a two-way join returning both results, the pushed closure in the slot
  variant_fn floor_bare = nullptr;    // parallel_invoke's shape, a join doing nothing but a push and a pop
};

struct size_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Deliberately wrong work hints, for the sensitivity study of seed 003 Fig. 4.22 (roost-bench --hint-error):
// deterministic error gives four siblings (1-a) : (1-a/2) : (1+a/2) : (1+a); random error 1 + r*a with r
// uniform in [-1, 1), drawn anew for every spawn. Hints only change speed: results are checked as always.
struct hint_error {
  enum class kind { none, deterministic, random } k = kind::none;
  double alpha = 0;
};
hint_error& current_hint_error();
double distorted_weight(int sibling, int siblings);  // 1.0 when no error is set

// "1024x512" -> {1024, 512}; "35" -> {35}. Throws size_error naming the benchmark and the expected form.
std::vector<long> parse_size(const std::string& bench, const std::string& size, std::size_t parts,
                             const char* form);
// Throws size_error when `bytes`, the benchmark's data at this size (reckoned in long double, from the parsed
// parts, before any product of them in long could overflow), is more than this machine's memory: sizes
// whose products wrapped around made small buffers and segfaulted, and sizes between the memory and the
// overcommit limit ran for minutes before the kernel killed them (an outside-user campaign).
void check_fits(const std::string& bench, const std::string& size, long double bytes);

// Where a buffer's memory comes from. roost-bench points these at roost::numa_alloc / numa_free with the
// distribution of ROOST_DATA_DISTRIBUTION (driver/main.cpp); alloc returns nullptr for "the default
// allocator" (standard distribution, and every binary that does not link roost, such as the clang helper).
struct buffer_placement {
  void* (*alloc)(std::size_t bytes, std::size_t parts) = nullptr;
  void (*free)(void*) = nullptr;
};
buffer_placement& current_buffer_placement();

// Page-aligned zeroed array that frees itself (the kernels want alignment and no first-touch surprises).
// parts: how many separately placed pieces it stands for (seed 002's coarse distribution puts each piece
// whole on one node, round-robin): the map's vectors, a grid's block rows.
template <class T>
class buffer {
 public:
  buffer() = default;
  explicit buffer(std::size_t n, std::size_t parts = 1) : n_(n) {
    void* p = nullptr;
    const buffer_placement& bp = current_buffer_placement();
    // Placed memory comes in whole pages, and parts start on page boundaries: no slack is added, which
    // would shift every part off its block.
    if (bp.alloc && n && (p = bp.alloc(n * sizeof(T), parts)) != nullptr) {
      data_ = std::unique_ptr<T, deleter>(static_cast<T*>(p), deleter{bp.free});
    } else {
      if (posix_memalign(&p, 4096, n * sizeof(T) + 64) != 0) throw std::bad_alloc();
      data_ = std::unique_ptr<T, deleter>(static_cast<T*>(p), deleter{nullptr});
    }
    for (std::size_t i = 0; i < n; ++i) data_.get()[i] = T{};
  }
  T* data() const { return data_.get(); }
  T& operator[](std::size_t i) const { return data_.get()[i]; }
  std::size_t size() const { return n_; }

 private:
  struct deleter {
    void (*release)(void*) = nullptr;  // nullptr: std::free
    void operator()(T* p) const {
      if (release) release(p);
      else std::free(p);
    }
  };
  std::unique_ptr<T, deleter> data_;
  std::size_t n_ = 0;
};

}  // namespace bench
