// One set-associative cache with exact LRU replacement: the arrays of the memory-hierarchy model (DESIGN §6),
// kept apart from the coherence directory as ZSim keeps its arrays apart from MESI.
//
// A set is one block of host memory. Its head holds, per way (of more than four; smaller sets have no
// signatures and compare their tags), a signature byte (a hash of the line), the flags (dirty; "invalidated
// by another core's write", which keeps the tag so that the next miss on the line is told apart as a
// coherence miss) and an LRU rank (0 = most recently used; a permutation of 0..ways-1); its tail the ways'
// tags (the line, or all ones for an empty way). A lookup compares the signatures, a vector at a time, and
// reads a tag only where one matches: a miss, the common case of a miss-heavy trace, reads the head and the
// victim's tag, one or three host cache lines for an 8- to 48-way set instead of all its tags. Lines stay in
// the way they were filled into; a use changes ranks only. The rank order is pycachesim's list order (most
// recent first), so both replace the same line: the valid ways hold ranks 0..valid-1, then the invalidated
// marks (the most recently invalidated first), then the empty ways. No allocation after construction.
#pragma once
#include <cstdint>
#include <memory>
#include <type_traits>

#include "sim/host_memory.hpp"
#include "sim/set_kernels.hpp"

namespace roost::sim {

using line_addr = std::uint64_t;  // a byte address divided by the line size; never all ones (an empty way's tag)

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
    int way = 0;  // where the inserted line went
  };

  // sets >= 1 and 1 <= ways <= 1024 (the model checks the geometry before it builds an array).
  cache_array(std::uint64_t sets, unsigned ways);
  // The host bytes one set of `ways` ways takes (its block: signatures, flags, ranks, tags).
  static std::size_t set_block_bytes(unsigned ways);

  std::uint64_t sets() const { return sets_; }
  unsigned ways() const { return ways_; }

  // A lookup of the core or of the level above: counted. On a hit returns the line's way, after making it the
  // most recently used unless update_lru is false; else miss or coherence_miss.
  // V (here and below): 0, or the set's layout known at compile time where the count of sets is a power of
  // two (fixed_vectors() says which): 1 to 4, the vectors of the byte rows of a set with signatures and byte
  // ranks (5 to 64 ways); kSmallSet, a set of up to four ways, whose tags are compared without signatures.
  // The same operation with its layout constant, for a walk specialised to its geometry
  // (memory_model::access_fixed).
  template <unsigned V = 0>
  [[gnu::always_inline]] int lookup(line_addr line, bool is_write, bool update_lru) {
    const set_ref s = set_of<V>(line);
    ++counts.accesses;
    const unsigned w = way_of<V>(s, line);
    if (w < ways_ && (s.flags[w] & kInvalidated) == 0) {
      ++counts.hits;
      counts.write_hits += is_write;
      if (update_lru) promote<V>(s, w);
      return static_cast<int>(w);
    }
    ++counts.misses;
    remember_miss(line, s, w);
    if (w < ways_) {  // the line's own invalidation mark
      ++counts.coherence_misses;
      return coherence_miss;
    }
    return miss;
  }

  // The line's way, or miss; neither counted nor reordered.
  [[gnu::always_inline]] int find(line_addr line) {
    const set_ref s = set_of(line);
    const unsigned w = way_of(s, line);
    if (w < ways_ && (s.flags[w] & kInvalidated) == 0) return static_cast<int>(w);
    remember_miss(line, s, w);
    return miss;
  }
  int find(line_addr line) const {
    const set_ref s = set_of(line);
    const unsigned w = way_of(s, line);
    return w < ways_ && (s.flags[w] & kInvalidated) == 0 ? static_cast<int>(w) : miss;
  }

  // Puts `line` (not present) at most-recently-used. The least recently used way is replaced, or the line's own
  // invalidated way when it has one (both are invalid then, or it is the last). Returns what left.
  template <unsigned V = 0>
  [[gnu::always_inline]] victim insert(line_addr line, bool dirty) {
    // The miss that led here found the line's set and its mark, or none, already (nothing changed the set
    // since: a fill of this level follows the lookup of the same line, with only other arrays touched in
    // between); else look again.
    const bool known = line == missed_line_;
    const set_ref s = known ? ref_of<V>(missed_block_) : set_of<V>(line);
    unsigned out = known ? missed_out_ : way_of<V>(s, line);
    missed_line_ = kNoLine;
    // The usual fill replaces the least recently used way: found and promoted in one pass over byte ranks.
    bool promoted = false;
    if (out >= ways_) {
      if constexpr (V != 0) {
        out = set_kernels::promote_last<rank_vectors<V>()>(s.ranks, ways_);
        promoted = true;
      } else if (!wide_ranks_) {
        out = with_row_vectors([&](auto v) { return set_kernels::promote_last<v()>(s.ranks, ways_); });
        promoted = true;
      } else {
        out = oldest(s);
      }
    }
    victim v;
    v.way = static_cast<int>(out);
    const std::uint8_t f = s.flags[out];
    v.valid = (f & kInvalidated) == 0;
    if (v.valid) {
      v.dirty = (f & kDirty) != 0;
      v.line = s.tags[out];
      ++counts.evictions;
      counts.writebacks += v.dirty;
    }
    if (!promoted) promote<V>(s, out);
    if (V == 0 ? !small_ : V != kSmallSet) s.sigs[out] = signature(line);
    s.tags[out] = line;
    s.flags[out] = dirty ? kDirty : 0;
    return v;
  }

  // Marks the line dirty if present (valid); returns whether it was. Not counted, not reordered.
  template <unsigned V = 0>
  [[gnu::always_inline]] bool set_dirty_if_present(line_addr line) {
    const set_ref s = set_of<V>(line);
    const unsigned w = way_of<V>(s, line);
    if (w < ways_ && (s.flags[w] & kInvalidated) == 0) {
      s.flags[w] |= kDirty;
      return true;
    }
    remember_miss(line, s, w);
    return false;
  }

  // The flag of a present line at `way` (from lookup or insert).
  template <unsigned V = 0>
  void set_dirty(line_addr line, int way) { set_of<V>(line).flags[way] |= kDirty; }

  // Another core wrote the line: drops it (its data goes with the writer, not to the next level) and keeps
  // the tag marked, ranked after the valid ways. Returns whether it was present.
  // Inline: a write of a shared line invalidates one to a few copies, and a call each was a tenth of the walk.
  template <unsigned V = 0>
  [[gnu::always_inline]] bool invalidate(line_addr line) {
    const set_ref s = set_of<V>(line);
    const unsigned w = way_of<V>(s, line);
    if (w >= ways_ || (s.flags[w] & kInvalidated) != 0) return false;
    // The valid ways hold the first ranks: the mark goes to the last of them, so that it is replaced after the
    // empty ways and older marks and before every valid line.
    if constexpr (V != 0) {
      set_kernels::demote_to_last_valid<rank_vectors<V>()>(s.ranks, s.flags, ways_, w, kInvalidated);
    } else if (wide_ranks_) {
      const unsigned last_valid = set_kernels::count_valid(s.flags, ways_, kInvalidated) - 1;
      set_kernels::demote(reinterpret_cast<std::uint16_t*>(s.ranks), ways_, w, last_valid);
    } else {
      with_row_vectors([&](auto v) { set_kernels::demote_to_last_valid<v()>(s.ranks, s.flags, ways_, w, kInvalidated); });
    }
    s.flags[w] = kInvalidated;
    missed_line_ = kNoLine;
    ++counts.invalidations;
    return true;
  }

  // The V the templated operations above take for this array: its byte rows' vectors (1 to 4: 5 to 64
  // ways), kSmallSet (1 to 4 ways), or 0 for wide ranks or a count of sets that is not a power of two (the
  // operations then read the layout at run time).
  static constexpr unsigned kSmallSet = 8;
  unsigned fixed_vectors() const {
    if (wide_ranks_ || !pow2_) return 0;
    if (small_) return kSmallSet;
    return sig_vectors_ <= 4 ? sig_vectors_ : 0;
  }

  cache_counters counts;

 private:
  static constexpr std::uint8_t kDirty = 1, kInvalidated = 4;
  static constexpr line_addr kNoLine = ~line_addr{0};
  static constexpr std::uint64_t kEmptyTag = ~std::uint64_t{0};  // an empty way, or padding: matches no line
  // Up to this many ways a set has no signatures: its tags share the head's host line, and a lookup compares
  // them (a 2-way L1 set took 64 bytes of head for 16 of tags).
  static constexpr unsigned kSmallWays = 4;

  // The vectors of a known layout's rank row: a small set's ranks are one vector.
  template <unsigned V>
  static constexpr unsigned rank_vectors() { return V == kSmallSet ? 1 : V; }

  struct set_ref {
    std::uint8_t* sigs;
    std::uint8_t* flags;
    unsigned char* ranks;  // bytes, or 16-bit words when wide_ranks_
    std::uint64_t* tags;
  };
  template <unsigned V = 0>
  set_ref set_of(line_addr line) const {
    if constexpr (V != 0) return ref_of<V>(block_.get() + (line & mask_) * set_bytes_);
    return ref_of(block_.get() + (pow2_ ? (line & mask_) : (line % sets_)) * set_bytes_);
  }
  // With V known, the rows lie at 16V-byte steps: signatures, flags, ranks, then the tags (the constructor's
  // layout for a set with signatures and byte ranks).
  template <unsigned V = 0>
  set_ref ref_of(unsigned char* b) const {
    if constexpr (V == kSmallSet) return {b, b, b + 16, reinterpret_cast<std::uint64_t*>(b + 32)};  // no signatures
    if constexpr (V != 0) return {b, b + 16 * V, b + 32 * V, reinterpret_cast<std::uint64_t*>(b + 48 * V)};
    return {b, b + flags_at_, b + ranks_at_, reinterpret_cast<std::uint64_t*>(b + tags_at_)};
  }
  // Calls f(std::integral_constant<unsigned, V>) with V the vectors of the set's byte rows (signatures, flags,
  // byte ranks) where that is 1 to 4 (a set of up to 64 ways), else with V = 0 (set_kernels.hpp: the kernels
  // then loop). Together with every set operation forced inline into the walk: 14% fewer instructions in
  // heat's simulation, 0.90-0.92x its CPU time (src/sim/README.md, "Speed"). The same dispatch left to GCC
  // moved lookup, insert and way_of out of the walk and saved 0.3%.
  template <class F>
  [[gnu::always_inline]] std::invoke_result_t<F, std::integral_constant<unsigned, 0>> with_row_vectors(F&& f) const {
    switch (sig_vectors_) {
      case 1: return f(std::integral_constant<unsigned, 1>{});
      case 2: return f(std::integral_constant<unsigned, 2>{});
      case 3: return f(std::integral_constant<unsigned, 3>{});
      case 4: return f(std::integral_constant<unsigned, 4>{});
      default: return f(std::integral_constant<unsigned, 0>{});
    }
  }
  template <unsigned V = 0>
  [[gnu::always_inline]] void promote(const set_ref& s, unsigned w) {
    if constexpr (V != 0) {
      if (s.ranks[w] != 0) set_kernels::promote<rank_vectors<V>()>(s.ranks, ways_, w);
    } else if (wide_ranks_) {
      auto* r = reinterpret_cast<std::uint16_t*>(s.ranks);
      if (r[w] != 0) set_kernels::promote(r, ways_, w);
    } else if (s.ranks[w] != 0) {
      with_row_vectors([&](auto v) { set_kernels::promote<v()>(s.ranks, ways_, w); });
    }
  }
  unsigned oldest(const set_ref& s) const {
    return wide_ranks_ ? set_kernels::way_of_rank(reinterpret_cast<const std::uint16_t*>(s.ranks), ways_, ways_ - 1)
                       : set_kernels::way_of_rank(s.ranks, ways_, ways_ - 1);
  }
  // The line's signature: the top byte of a multiplicative hash of the whole line (the lines of one set share
  // their low bits, not this byte).
  static std::uint8_t signature(line_addr line) { return static_cast<std::uint8_t>((line * 0x9E3779B97F4A7C15ull) >> 56); }
  // The way holding the line (valid or its invalidation mark: a set holds a line at most once), or ways_.
  template <unsigned V = 0>
  [[gnu::always_inline]] unsigned way_of(const set_ref& s, line_addr line) const {
    if constexpr (V == kSmallSet) {
      for (unsigned w = 0; w < ways_; ++w)
        if (s.tags[w] == line) return w;
      return ways_;
    } else if constexpr (V != 0) {
      const std::uint64_t matches = set_kernels::match_signature<V>(s.sigs, V, signature(line));
      for (std::uint64_t bits = matches & sig_mask_; bits; bits &= bits - 1) {
        const unsigned w = static_cast<unsigned>(__builtin_ctzll(bits));
        if (s.tags[w] == line) return w;
      }
      return ways_;
    }
    if (small_) {  // a few ways: their tags share a host line with the head, no signature to look at first
      for (unsigned w = 0; w < ways_; ++w)
        if (s.tags[w] == line) return w;
      return ways_;
    }
    const std::uint8_t sig = signature(line);
    if (ways_ <= 64) {  // every cache of DESIGN §4's machines: one pass, its padding mask made once
      const std::uint64_t matches =
          with_row_vectors([&](auto v) { return set_kernels::match_signature<v()>(s.sigs, sig_vectors_, sig); });
      for (std::uint64_t bits = matches & sig_mask_; bits; bits &= bits - 1) {
        const unsigned w = static_cast<unsigned>(__builtin_ctzll(bits));
        if (s.tags[w] == line) return w;
      }
      return ways_;
    }
    for (unsigned base = 0; base < ways_; base += 64) {
      const unsigned n = ways_ - base < 64 ? ways_ - base : 64;
      std::uint64_t bits = set_kernels::match_signature(s.sigs + base, (n + 15) / 16, sig);
      if (n < 64) bits &= (std::uint64_t{1} << n) - 1;  // padding off
      for (; bits; bits &= bits - 1) {
        const unsigned w = base + static_cast<unsigned>(__builtin_ctzll(bits));
        if (s.tags[w] == line) return w;
      }
    }
    return ways_;
  }
  void remember_miss(line_addr line, const set_ref& s, unsigned w) {
    missed_line_ = line;
    missed_block_ = s.sigs;  // the set's block starts with its signature row (empty for a small set)
    missed_out_ = w;
  }

  struct block_free {
    std::size_t bytes;
    void operator()(unsigned char* p) const { host_allocator<unsigned char>().deallocate(p, bytes); }
  };

  std::uint64_t sets_;
  unsigned ways_;
  bool pow2_;
  bool small_;       // at most kSmallWays ways: no signatures
  bool wide_ranks_;  // more ways than byte ranks can order
  unsigned sig_vectors_;    // ways <= 64: the signature vectors of a set, ...
  std::uint64_t sig_mask_;  // ... and the bits of its ways (not the padding)
  std::uint64_t mask_;
  std::size_t flags_at_ = 0, ranks_at_ = 0, tags_at_ = 0, set_bytes_ = 0;  // a set's block: sigs, flags, ranks, tags
  line_addr missed_line_ = kNoLine;  // the last line lookup or find missed, and the way of its mark (or ways_)
  unsigned missed_out_ = 0;
  unsigned char* missed_block_ = nullptr;  // ... and its set's block
  std::unique_ptr<unsigned char[], block_free> block_;  // sets x set_bytes_
};

}  // namespace roost::sim
