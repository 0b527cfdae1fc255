// One set-associative cache with exact LRU replacement: the arrays of the memory-hierarchy model (DESIGN §6),
// kept apart from the coherence directory as ZSim keeps its arrays apart from MESI.
//
// Each set is a row of `ways` 64-bit entries ordered from most to least recently used, as pycachesim keeps
// its sets, so that both replace the same line. An entry is (line << 3) | flags: a line's dirty and
// exclusive (no other core holds it: a write needs no invalidation) bits, or its "invalidated by another
// core's write" mark, which keeps the tag so that the next miss on the line is told apart as a coherence
// miss. Valid entries always precede invalid ones. No allocation after construction.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "sim/huge_pages.hpp"

namespace roost::sim {

using line_addr = std::uint64_t;  // a byte address divided by the line size; below 2^61 - 1 (an empty way is all ones)

struct cache_counters {
  std::uint64_t accesses = 0;          // lookups: reads and writes of the core, fills for the level above
  std::uint64_t hits = 0;
  std::uint64_t write_hits = 0;        // the hits of writes (counted in hits too)
  std::uint64_t misses = 0;
  std::uint64_t coherence_misses = 0;  // misses on a line another core's write took from here (in misses)
  std::uint64_t evictions = 0;         // valid lines replaced
  std::uint64_t writebacks = 0;        // dirty lines replaced (in evictions), written to the next level
  std::uint64_t invalidations = 0;     // lines another core's write removed
};

class cache_array {
 public:
  static constexpr int miss = -1;            // lookup: not present
  static constexpr int coherence_miss = -2;  // lookup: not present, invalidated by another core's write

  struct victim {
    bool valid = false;
    bool dirty = false;
    line_addr line = 0;
    int way = 0;  // where the inserted line went: always the front
  };

  // sets >= 1 and ways >= 1 (the model checks the geometry before it builds an array).
  cache_array(std::uint64_t sets, unsigned ways);

  std::uint64_t sets() const { return sets_; }
  unsigned ways() const { return ways_; }

  // A lookup of the core or of the level above: counted. On a hit returns the line's way, after moving it to
  // most-recently-used unless update_lru is false; else miss or coherence_miss.
  int lookup(line_addr line, bool is_write, bool update_lru) {
    std::uint64_t* s = set_of(line);
    ++counts.accesses;
    const unsigned w = scan(s, line << 3);
    if (w < ways_ && (s[w] & kInvalidated) == 0) {
      ++counts.hits;
      counts.write_hits += is_write;
      if (!update_lru || w == 0) return static_cast<int>(w);
      shift_down(s, w);
      missed_line_ = kNoLine;  // the set changed
      return 0;
    }
    ++counts.misses;
    remember_miss(line, w);
    if (w < ways_) {  // the line's own invalidation mark
      ++counts.coherence_misses;
      return coherence_miss;
    }
    return miss;
  }

  // The line's way, or miss; neither counted nor reordered.
  int find(line_addr line) {
    const std::uint64_t* s = set_of(line);
    const unsigned w = scan(s, line << 3);
    if (w < ways_ && (s[w] & kInvalidated) == 0) return static_cast<int>(w);
    remember_miss(line, w);
    return miss;
  }
  int find(line_addr line) const {
    const std::uint64_t* s = set_of(line);
    const unsigned w = scan(s, line << 3);
    return w < ways_ && (s[w] & kInvalidated) == 0 ? static_cast<int>(w) : miss;
  }

  // Puts `line` (not present) at most-recently-used. The least recently used entry leaves, or the line's own
  // invalidated entry when it has one (both are invalid then, or it is the last). Returns what left.
  victim insert(line_addr line, bool dirty) {
    std::uint64_t* s = set_of(line);
    // The miss that led here scanned the set already (nothing changed it since: a fill of this level follows
    // the lookup of the same line, with only other arrays touched in between); else scan again.
    unsigned out = line == missed_line_ ? missed_out_ : scan(s, line << 3);
    if (out >= ways_) out = ways_ - 1;
    missed_line_ = kNoLine;
    victim v;
    const std::uint64_t e = s[out];
    v.valid = (e & kInvalidated) == 0;
    if (v.valid) {
      v.dirty = (e & kDirty) != 0;
      v.line = e >> 3;
      ++counts.evictions;
      counts.writebacks += v.dirty;
    }
    shift_down(s, out);
    s[0] = (line << 3) | (dirty ? kDirty : 0);
    return v;
  }

  // Flags of a present line at `way` (from lookup, find or insert: 0).
  void set_dirty(line_addr line, int way) { set_of(line)[way] |= kDirty; }
  bool exclusive(line_addr line, int way) const { return (set_of(line)[way] & kExclusive) != 0; }
  void set_exclusive(line_addr line, int way, bool on) {
    std::uint64_t& e = set_of(line)[way];
    e = on ? (e | kExclusive) : (e & ~kExclusive);
  }

  // Another core wrote the line: drops it (its data goes with the writer, not to the next level) and keeps
  // the tag marked, after the valid entries. Returns whether it was present.
  bool invalidate(line_addr line);

  cache_counters counts;

 private:
  static constexpr std::uint64_t kDirty = 1, kExclusive = 2, kInvalidated = 4;
  static constexpr std::uint64_t kFlags = kDirty | kExclusive | kInvalidated;
  static constexpr line_addr kNoLine = ~line_addr{0};
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};        // invalid, matches no line

  // Moves entry `w` of set `s` to the front, the ones before it one way back. A plain loop: sets are short, a
  // call to memmove costs more than the move, and the list keeps a set in as few host cache lines as its
  // tags (use stamps instead of an order were slower here: twice the bytes per set for the misses).
  // memmove (vector moves) for the long shifts of a highly associative level (a fill of a 48-way L3 moves 47).
  static void shift_down(std::uint64_t* s, unsigned w) {
    const std::uint64_t e = s[w];
    if (w > 8) {
      std::memmove(s + 1, s, w * sizeof(std::uint64_t));
    } else {
      for (; w > 0; --w) s[w] = s[w - 1];
    }
    s[0] = e;
  }

  // The way holding `key`'s line, valid or marked invalidated (a set holds a line at most once), or ways_ when
  // none: one pass serves a hit, a coherence miss and the fill's choice of way. The most recently used ways
  // one at a time (hits gather there; a repeated access ends at way 0), then four per test: one branch per
  // four compares through the rest of a wide set.
  unsigned scan(const std::uint64_t* s, std::uint64_t key) const {
    unsigned w = 0;
    for (; w < 4 && w < ways_; ++w)
      if ((s[w] & ~kFlags) == key) return w;
    for (; w + 4 <= ways_; w += 4) {
      const bool any = ((s[w] & ~kFlags) == key) | ((s[w + 1] & ~kFlags) == key) | ((s[w + 2] & ~kFlags) == key) |
                       ((s[w + 3] & ~kFlags) == key);
      if (any) break;
    }
    for (; w < ways_; ++w)
      if ((s[w] & ~kFlags) == key) return w;
    return ways_;
  }
  void remember_miss(line_addr line, unsigned w) {
    missed_line_ = line;
    missed_out_ = w;
  }

  std::uint64_t* set_of(line_addr line) {
    return entries_.data() + (pow2_ ? (line & mask_) : (line % sets_)) * ways_;
  }
  const std::uint64_t* set_of(line_addr line) const {
    return entries_.data() + (pow2_ ? (line & mask_) : (line % sets_)) * ways_;
  }

  std::uint64_t sets_;
  unsigned ways_;
  bool pow2_;
  std::uint64_t mask_;
  line_addr missed_line_ = kNoLine;  // the last line lookup or find missed, and the way it had (scan's result)
  unsigned missed_out_ = 0;
  std::vector<std::uint64_t, huge_page_allocator<std::uint64_t>> entries_;  // sets x ways
};

}  // namespace roost::sim
