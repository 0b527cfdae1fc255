#include "sim/host_memory.hpp"
#include "platform/fork_hold.hpp"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>

namespace roost::sim {

namespace {

constexpr std::size_t kHuge = std::size_t{2} << 20;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kMinBlock = 64;  // a host cache line: a 64-byte cache set is one, not two
constexpr std::size_t kSlab = std::size_t{4} << 20;
constexpr int kClasses = 13;  // 64 B .. 256 KiB
constexpr std::size_t kLargestPooled = kMinBlock << (kClasses - 1);

int class_of(std::size_t bytes) {
  int c = 0;
  while ((kMinBlock << c) < bytes) ++c;
  return c;
}

void* map(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}

// Blocks up to kLargestPooled come from slabs, by power-of-two class, and go back to their class's free list;
// larger ones are mappings of their own (2 MiB-aligned and advised huge from 2 MiB on). Allocations are
// rare (the model's construction, its tables' growth), so one lock serves every thread.
struct pool {
  std::mutex mu;
  void* free[kClasses] = {};
  char* slab = nullptr;
  std::size_t slab_left = 0;

  void* take(std::size_t bytes) {
    const int c = class_of(bytes);
    const std::size_t size = kMinBlock << c;
    std::lock_guard<std::mutex> lk(mu);
    if (void* p = free[c]) {
      free[c] = *static_cast<void**>(p);
      return p;
    }
    if (slab_left < size) {  // what is left of the slab is lost: at most a class's size, once per slab
      slab = static_cast<char*>(map(kSlab));
      slab_left = kSlab;
    }
    void* p = slab;
    slab += size;
    slab_left -= size;
    return p;
  }
  void give(void* p, std::size_t bytes) {
    const int c = class_of(bytes);
    std::lock_guard<std::mutex> lk(mu);
    *static_cast<void**>(p) = free[c];
    free[c] = p;
  }
};

std::atomic<std::size_t> g_in_use{0};  // bytes handed out and not given back (host_memory_in_use)

pool& the_pool() {
  static pool* p = new pool;  // never destroyed: a model may be freed during static destruction
  return *p;
}
std::mutex& pool_mutex() { return the_pool().mu; }
// Held across fork() (platform/fork_hold.hpp): a child forked while another thread built a simulated
// runtime's model would wait for it for ever.
__attribute__((constructor)) void watch_forks_for_pool() {
  platform::hold_across_forks_of<&pool_mutex>();
}

std::size_t mapped_bytes(std::size_t bytes) {
  return bytes >= kHuge ? (bytes + kHuge - 1) / kHuge * kHuge : (bytes + kPage - 1) / kPage * kPage;
}

}  // namespace

std::size_t host_memory_in_use() { return g_in_use.load(std::memory_order_relaxed); }

void* host_memory_alloc(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes <= kLargestPooled) {
    void* p = the_pool().take(bytes);
    g_in_use.fetch_add(kMinBlock << class_of(bytes), std::memory_order_relaxed);
    return p;
  }
  const std::size_t size = mapped_bytes(bytes);
  g_in_use.fetch_add(size, std::memory_order_relaxed);  // before the map, which may throw: taken back there
  struct uncount {
    std::size_t size;
    bool done = false;
    ~uncount() {
      if (!done) g_in_use.fetch_sub(size, std::memory_order_relaxed);
    }
  } guard{size};
  if (size < kHuge) {
    void* p = map(size);
    guard.done = true;
    return p;
  }
  // 2 MiB-aligned: map a huge page more, and give back what lies outside the aligned block.
  char* raw = static_cast<char*>(map(size + kHuge));
  char* p = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(raw) + kHuge - 1) / kHuge * kHuge);
  if (p > raw) ::munmap(raw, static_cast<std::size_t>(p - raw));
  if (char* end = p + size; end < raw + size + kHuge) ::munmap(end, static_cast<std::size_t>(raw + size + kHuge - end));
  ::madvise(p, size, MADV_HUGEPAGE);  // advice only: without it the array still works, on small pages
  guard.done = true;
  return p;
}

void host_memory_free(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  if (bytes == 0) bytes = 1;
  if (bytes <= kLargestPooled) {
    the_pool().give(p, bytes);
    g_in_use.fetch_sub(kMinBlock << class_of(bytes), std::memory_order_relaxed);
    return;
  }
  ::munmap(p, mapped_bytes(bytes));
  g_in_use.fetch_sub(mapped_bytes(bytes), std::memory_order_relaxed);
}

}  // namespace roost::sim
