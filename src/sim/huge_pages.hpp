// Memory for the model's arrays (cache sets, the coherence directory's tables, the page map): smaller blocks
// are aligned to host cache lines; blocks of 2 MiB or more are 2 MiB-aligned and marked MADV_HUGEPAGE before
// the vector first writes them, so that the kernel backs them with transparent huge pages where it is set to
// "madvise" (the default of many distributions).
// A miss-heavy trace reads these arrays at random: with 4 KiB pages nearly every access also missed the TLB
// (tens of MiB of tags for a 64-core machine); with 2 MiB pages it seldom does. Only speed depends on it.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

#include <sys/mman.h>

namespace roost::sim {

template <class T>
struct huge_page_allocator {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  static constexpr std::size_t kLine = 64;

  huge_page_allocator() = default;
  template <class U>
  huge_page_allocator(const huge_page_allocator<U>&) {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHuge) {  // host cache lines: a 64-byte cache set is one, not two
      if (void* p = std::aligned_alloc(kLine, (bytes + kLine - 1) / kLine * kLine + (bytes ? 0 : kLine)))
        return static_cast<T*>(p);
      throw std::bad_alloc();
    }
    const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (!p) throw std::bad_alloc();
    ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without it the array still works, on small pages
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { std::free(p); }

  template <class U>
  bool operator==(const huge_page_allocator<U>&) const { return true; }
};

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
    if (bytes_ >= huge_page_allocator<T>::kHuge) ::madvise(p, bytes_, MADV_HUGEPAGE);
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
