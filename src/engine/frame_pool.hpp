// Per-worker free lists for task frames that must outlive their spawn call (help-first children, roots).
// Blocks migrate: a frame allocated by one worker is freed into the pool of the worker that ran it. When
// that flow is one-way (one worker spawns, a thief that never spawns runs what it steals; a root made on
// worker 0 that ends on worker 1) the thief's lists would grow without end, so a list holds at most
// kMaxPerClass blocks and gives the rest back to the allocator, which returns them to the arena they came
// from: memory stays flat over any number of tasks and runs (tests/test_soak.cpp). Each pool deletes what it
// holds when the runtime stops. A frame aligned beyond what operator new gives (a closure that captures an
// alignas(32) object) bypasses the lists: aligned operator new and delete (it crashed on an AVX load from a
// frame 16-aligned in the pool, an outside-user campaign).
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>

namespace roost::engine {

class frame_pool {
  static constexpr std::size_t kClasses = 4;  // 64, 128, 256, 512 bytes; larger frames use operator new
  // At most 480 KiB per worker (the four classes together). A help-first spawner draws on its own list, so
  // the cap only decides how much a one-way flow keeps in hand, not how often the allocator is called.
  static constexpr std::uint32_t kMaxPerClass = 512;
  struct block { block* next; };
  static int class_of(std::size_t n) {
    if (n <= 64) return 0;
    if (n <= 128) return 1;
    if (n <= 256) return 2;
    if (n <= 512) return 3;
    return -1;
  }

 public:
  frame_pool() = default;
  frame_pool(const frame_pool&) = delete;
  ~frame_pool() {
    for (auto& h : heads_)
      while (block* b = h) {
        h = b->next;
        ::operator delete(b);
      }
  }
  void* alloc(std::size_t n, std::size_t align) {
    if (align > __STDCPP_DEFAULT_NEW_ALIGNMENT__) [[unlikely]] return ::operator new(n, std::align_val_t{align});
    int c = class_of(n);
    if (c < 0) return ::operator new(n);
    if (block* b = heads_[c]) {
      heads_[c] = b->next;
      --counts_[c];
      return b;
    }
    return ::operator new(std::size_t{64} << c);
  }
  void free(void* p, std::size_t n, std::size_t align) {
    if (align > __STDCPP_DEFAULT_NEW_ALIGNMENT__) [[unlikely]] {
      ::operator delete(p, std::align_val_t{align});
      return;
    }
    int c = class_of(n);
    if (c < 0) {
      ::operator delete(p);
      return;
    }
    if (counts_[c] == kMaxPerClass) [[unlikely]] {
      ::operator delete(p);
      return;
    }
    auto* b = static_cast<block*>(p);
    b->next = heads_[c];
    heads_[c] = b;
    ++counts_[c];
  }
  // Blocks held, all classes together (tests).
  std::size_t held() const {
    std::size_t n = 0;
    for (auto c : counts_) n += c;
    return n;
  }

 private:
  block* heads_[kClasses] = {};
  std::uint32_t counts_[kClasses] = {};
};

}  // namespace roost::engine
