// Per-worker free lists for task frames that must outlive their spawn call (help-first children). Blocks
// migrate: a frame allocated by one worker is freed into the pool of the worker that ran it. Every block is
// back in some pool when the runtime stops, and each pool deletes what it holds.
#pragma once
#include <cstddef>
#include <new>

namespace roost::engine {

class frame_pool {
  static constexpr std::size_t kClasses = 4;  // 64, 128, 256, 512 bytes; larger frames use operator new
  struct block { block* next; };
  static int class_of(std::size_t n) {
    if (n <= 64) return 0;
    if (n <= 128) return 1;
    if (n <= 256) return 2;
    if (n <= 512) return 3;
    return -1;
  }

 public:
  // Bytes to allocate outside the pool for a frame of n bytes that a pool will later free.
  static std::size_t block_bytes(std::size_t n) {
    int c = class_of(n);
    return c < 0 ? n : std::size_t{64} << c;
  }
  frame_pool() = default;
  frame_pool(const frame_pool&) = delete;
  ~frame_pool() {
    for (auto& h : heads_)
      while (block* b = h) {
        h = b->next;
        ::operator delete(b);
      }
  }
  void* alloc(std::size_t n) {
    int c = class_of(n);
    if (c < 0) return ::operator new(n);
    if (block* b = heads_[c]) {
      heads_[c] = b->next;
      return b;
    }
    return ::operator new(std::size_t{64} << c);
  }
  void free(void* p, std::size_t n) {
    int c = class_of(n);
    if (c < 0) {
      ::operator delete(p);
      return;
    }
    auto* b = static_cast<block*>(p);
    b->next = heads_[c];
    heads_[c] = b;
  }

 private:
  block* heads_[kClasses] = {};
};

}  // namespace roost::engine
