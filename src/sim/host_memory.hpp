// Memory for the simulator's own state (cache sets, the coherence directory's tables, the page map, the
// model's per-PU and per-cache arrays), kept off the program's malloc heap, in mappings of its own
// (host_memory.cpp). Two reasons:
//  * Reproducibility. The program's heap objects are simulated at their host offsets inside a page: which
//    lines a buffer spans depends on where malloc put it, and so on every allocation made before it. The
//    model's own allocations depend on host_threads (one shard or two), and on the heap they moved the
//    program's later buffers: host_threads=1 and 2 gave different reports for a program of small heap
//    vectors (a parameter documented as speed only). So the model's construction, temporaries included,
//    allocates nothing on the malloc heap.
//  * Speed. Blocks of 2 MiB or more are 2 MiB-aligned and marked MADV_HUGEPAGE before the vector first
//    writes them, so that the kernel backs them with transparent huge pages where it is set to "madvise"
//    (the default of many distributions): a miss-heavy trace reads these arrays at random, and with 4 KiB
//    pages nearly every access also missed the TLB (tens of MiB of tags for a 64-core machine). Smaller
//    blocks are aligned to host cache lines: a 64-byte cache set is one line, not two.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#include <sys/mman.h>

namespace roost::sim {

// 64-byte aligned, never null (std::bad_alloc when the host has no memory); free with the same size.
void* host_memory_alloc(std::size_t bytes);
void host_memory_free(void* p, std::size_t bytes) noexcept;
// Bytes handed out and not freed, by block (the pool's classes, whole mappings): what leak tests add to
// the malloc heap's count.
std::size_t host_memory_in_use();

template <class T>
struct host_allocator {
  using value_type = T;
  static_assert(alignof(T) <= 64, "host_memory_alloc aligns to 64 bytes");

  host_allocator() = default;
  template <class U>
  host_allocator(const host_allocator<U>&) {}

  T* allocate(std::size_t n) { return static_cast<T*>(host_memory_alloc(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { host_memory_free(p, n * sizeof(T)); }

  template <class U>
  bool operator==(const host_allocator<U>&) const { return true; }
};

template <class T>
using host_vector = std::vector<T, host_allocator<T>>;

// A zero-filled array of T (T all-zero bytes: its empty state) whose pages the kernel provides on first write:
// a table sized for the largest it can get costs only the memory its entries reach.
template <class T>
class zeroed_array {
 public:
  zeroed_array() = default;
  explicit zeroed_array(std::size_t n) : bytes_(n * sizeof(T)) {
    if (bytes_ == 0) return;
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    if (bytes_ >= (std::size_t{2} << 20)) ::madvise(p, bytes_, MADV_HUGEPAGE);
    data_ = static_cast<T*>(p);
  }
  zeroed_array(zeroed_array&& o) noexcept : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  zeroed_array& operator=(zeroed_array&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~zeroed_array() {
    if (data_) ::munmap(data_, bytes_);
  }
  T* data() { return data_; }
  const T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace roost::sim
