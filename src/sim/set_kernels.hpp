// The loops over one cache set (cache_array): find the ways whose signature byte matches, move a way to the
// front of the LRU order, find the way at a given place in that order, count the valid ways, and two of
// those fused into one pass (a fill's: find the last way and move it to the front; an invalidation's: move
// a way back behind the valid ones). A miss-heavy
// trace spends most of the model's time here (src/sim/README.md, "Speed"), so they are SSE2 loops on x86-64
// (every such CPU has SSE2: no dispatch) and plain loops elsewhere; both give the same answers.
//
// Layout they assume (cache_array keeps it): a set's signatures, flags and LRU ranks are rows, each padded to
// whole vectors (16 bytes). Padding ranks are kRankPadOf, above every real rank; padding flags are invalid;
// padding signatures may match (match_signature masks them off).
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace roost::sim::set_kernels {

inline constexpr unsigned kByteStep = 16;  // rows are whole vectors: lengths in bytes are multiples of this

constexpr std::size_t round_up(std::size_t n, std::size_t step) { return (n + step - 1) / step * step; }

// The kernels' template argument V: a row's vectors where the caller knows them at compile time
// (cache_array::with_row_vectors: 1 to 4), so that the loop is unrolled whole; 0: counted at run time. The
// loops' own count and test were a fifth of the walk's kernel instructions (callgrind, heat on a simulated
// 4 x Opteron 8380: 52 M of 250 M).
template <unsigned V>
constexpr unsigned row_vectors(unsigned runtime_vectors) { return V ? V : runtime_vectors; }

// Set bits of a 32-bit word, without the library call __builtin_popcount makes on a host built without POPCNT.
inline unsigned bit_count(std::uint32_t x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  return (((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

// Bit i set for each of the `vectors` x 16 signatures at `sigs` (up to 64) that is `sig`; the caller masks off
// the padding.
template <unsigned V = 0>
inline std::uint64_t match_signature(const std::uint8_t* sigs, unsigned vectors, std::uint8_t sig) {
  std::uint64_t bits = 0;
#if defined(__SSE2__)
  // The byte in every lane: one multiply and a move, not SSE2's four-instruction byte broadcast.
  const __m128i k = _mm_set1_epi64x(static_cast<long long>(sig * 0x0101010101010101ull));
  for (unsigned i = 0; i < row_vectors<V>(vectors); ++i) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sigs + 16 * i));
    bits |= std::uint64_t{static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, k)))} << (16 * i);
  }
#else
  for (unsigned w = 0; w < 16 * vectors; ++w) bits |= std::uint64_t{sigs[w] == sig} << w;
#endif
  return bits;
}

// The ranks are bytes for sets of up to kMaxByteRanks ways (a 48-way set's ranks are three vectors), 16-bit
// words for wider ones. Compares are signed, so padding ranks sit at the type's largest positive value.
inline constexpr unsigned kMaxByteRanks = 127;
template <class Rank>
inline constexpr Rank kRankPadOf = sizeof(Rank) == 1 ? 0x7F : 0x7FFF;

// The same four as plain loops over exactly `ways` entries: a host without SSE2.
namespace plain {
template <class Rank>
inline void promote(Rank* ranks, unsigned ways, unsigned way) {
  const Rank r = ranks[way];
  for (unsigned w = 0; w < ways; ++w) ranks[w] = static_cast<Rank>(ranks[w] + (ranks[w] < r));
  ranks[way] = 0;
}
template <class Rank>
inline void demote(Rank* ranks, unsigned ways, unsigned way, unsigned to) {
  const Rank r = ranks[way];
  for (unsigned w = 0; w < ways; ++w) ranks[w] = static_cast<Rank>(ranks[w] - (ranks[w] > r && ranks[w] <= to));
  ranks[way] = static_cast<Rank>(to);
}
template <class Rank>
inline unsigned way_of_rank(const Rank* ranks, unsigned ways, unsigned rank) {
  for (unsigned w = 0; w < ways; ++w)
    if (ranks[w] == rank) return w;
  return ways;
}
inline unsigned count_valid(const std::uint8_t* flags, unsigned ways, std::uint8_t invalid) {
  unsigned n = 0;
  for (unsigned w = 0; w < ways; ++w) n += (flags[w] & invalid) == 0;
  return n;
}
inline void demote_to_last_valid(std::uint8_t* ranks, const std::uint8_t* flags, unsigned ways, unsigned way,
                                 std::uint8_t invalid) {
  const unsigned r = ranks[way];
  unsigned moved = 0;
  for (unsigned w = 0; w < ways; ++w)
    if ((flags[w] & invalid) == 0 && ranks[w] > r) {
      --ranks[w];
      ++moved;
    }
  ranks[way] = static_cast<std::uint8_t>(r + moved);
}
inline unsigned promote_last(std::uint8_t* ranks, unsigned ways) {
  const unsigned out = way_of_rank(ranks, ways, ways - 1);
  promote(ranks, ways, out);
  return out;
}
}  // namespace plain

#if defined(__SSE2__)
namespace detail {
template <class Rank>
inline __m128i splat(unsigned v) {
  if constexpr (sizeof(Rank) == 1) return _mm_set1_epi8(static_cast<char>(v));
  else return _mm_set1_epi16(static_cast<short>(v));
}
template <class Rank>
inline __m128i greater(__m128i a, __m128i b) {
  if constexpr (sizeof(Rank) == 1) return _mm_cmpgt_epi8(a, b);
  else return _mm_cmpgt_epi16(a, b);
}
template <class Rank>
inline __m128i equal(__m128i a, __m128i b) {
  if constexpr (sizeof(Rank) == 1) return _mm_cmpeq_epi8(a, b);
  else return _mm_cmpeq_epi16(a, b);
}
template <class Rank>
inline __m128i add(__m128i a, __m128i b) {
  if constexpr (sizeof(Rank) == 1) return _mm_add_epi8(a, b);
  else return _mm_add_epi16(a, b);
}
template <class Rank>
inline __m128i sub(__m128i a, __m128i b) {
  if constexpr (sizeof(Rank) == 1) return _mm_sub_epi8(a, b);
  else return _mm_sub_epi16(a, b);
}
}  // namespace detail
#endif

// Way `way` becomes rank 0; the ways ranked before it move one place back.
template <unsigned V = 0, class Rank>
inline void promote(Rank* ranks, unsigned ways, unsigned way) {
#if defined(__SSE2__)
  const __m128i rv = detail::splat<Rank>(ranks[way]);
  for (unsigned i = 0; i < row_vectors<V>((ways * sizeof(Rank) + 15) / 16); ++i) {
    auto* p = reinterpret_cast<__m128i*>(ranks) + i;
    const __m128i v = _mm_loadu_si128(p);
    _mm_storeu_si128(p, detail::sub<Rank>(v, detail::greater<Rank>(rv, v)));  // ranked before it: one back
  }
  ranks[way] = 0;
#else
  plain::promote(ranks, ways, way);
#endif
}

// Way `way` moves back to rank `to` (>= its rank); the ways ranked after it, up to `to`, move one place up.
template <class Rank>
inline void demote(Rank* ranks, unsigned ways, unsigned way, unsigned to) {
#if defined(__SSE2__)
  const __m128i rv = detail::splat<Rank>(ranks[way]), tv = detail::splat<Rank>(to);
  for (unsigned w = 0; w < ways; w += 16 / sizeof(Rank)) {
    auto* p = reinterpret_cast<__m128i*>(ranks + w);
    const __m128i v = _mm_loadu_si128(p);
    const __m128i between = _mm_andnot_si128(detail::greater<Rank>(v, tv), detail::greater<Rank>(v, rv));  // r < v <= to
    _mm_storeu_si128(p, detail::add<Rank>(v, between));  // one up (+(-1))
  }
  ranks[way] = static_cast<Rank>(to);
#else
  plain::demote(ranks, ways, way, to);
#endif
}

// Byte ranks of a set whose valid ways (flags without `invalid`) hold ranks 0..valid-1: way `way` (valid)
// moves back to the last valid rank, the valid ways ranked after it one place up. One pass: the ways that
// move are counted as they move, so the last valid rank is the way's own plus their number.
template <unsigned V = 0>
inline void demote_to_last_valid(std::uint8_t* ranks, const std::uint8_t* flags, unsigned ways, unsigned way,
                                 std::uint8_t invalid) {
#if defined(__SSE2__)
  const unsigned r = ranks[way];
  unsigned moved = 0;
  const __m128i rv = detail::splat<std::uint8_t>(r), inv = _mm_set1_epi8(static_cast<char>(invalid)),
                zero = _mm_setzero_si128();
  __m128i count = zero;  // per lane: the ways that moved (at most ways / 16 each)
  for (unsigned i = 0; i < row_vectors<V>((ways + 15) / 16); ++i) {
    auto* p = reinterpret_cast<__m128i*>(ranks) + i;
    const __m128i v = _mm_loadu_si128(p);
    const __m128i valid =
        _mm_cmpeq_epi8(_mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(flags) + i), inv), zero);
    const __m128i up = _mm_and_si128(_mm_cmpgt_epi8(v, rv), valid);  // valid and ranked after it
    _mm_storeu_si128(p, _mm_add_epi8(v, up));                       // one up (+(-1))
    count = _mm_sub_epi8(count, up);
  }
  const __m128i sums = _mm_sad_epu8(count, zero);  // the lanes added up, in each half
  moved = static_cast<unsigned>(_mm_cvtsi128_si32(sums) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(sums, sums)));
  ranks[way] = static_cast<std::uint8_t>(r + moved);
#else
  plain::demote_to_last_valid(ranks, flags, ways, way, invalid);
#endif
}

// Byte ranks: the way ranked last (`ways` - 1) becomes rank 0, every other way one place back, in one pass.
// Returns that way.
template <unsigned V = 0>
inline unsigned promote_last(std::uint8_t* ranks, unsigned ways) {
#if defined(__SSE2__)
  const __m128i last = detail::splat<std::uint8_t>(ways - 1);
  unsigned out = ways;
  for (unsigned i = 0; i < row_vectors<V>((ways + 15) / 16); ++i) {
    auto* p = reinterpret_cast<__m128i*>(ranks) + i;
    const __m128i v = _mm_loadu_si128(p);
    const auto hit = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, last)));
    if (hit) out = 16 * i + static_cast<unsigned>(__builtin_ctz(hit));
    _mm_storeu_si128(p, _mm_sub_epi8(v, _mm_cmpgt_epi8(last, v)));  // ranked before it: one back
  }
  ranks[out] = 0;
  return out;
#else
  return plain::promote_last(ranks, ways);
#endif
}

// The way ranked `rank` (the ranks are a permutation: there is exactly one).
template <class Rank>
inline unsigned way_of_rank(const Rank* ranks, unsigned ways, unsigned rank) {
#if defined(__SSE2__)
  const __m128i k = detail::splat<Rank>(rank);
  for (unsigned w = 0; w < ways; w += 16 / sizeof(Rank)) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ranks + w));
    const auto bits = static_cast<unsigned>(_mm_movemask_epi8(detail::equal<Rank>(v, k)));
    if (bits) return w + static_cast<unsigned>(__builtin_ctz(bits)) / sizeof(Rank);
  }
  return ways;
#else
  return plain::way_of_rank(ranks, ways, rank);
#endif
}

// How many of the ways' flags have none of the bits of `invalid`.
inline unsigned count_valid(const std::uint8_t* flags, unsigned ways, std::uint8_t invalid) {
#if defined(__SSE2__)
  unsigned n = 0;
  const __m128i inv = _mm_set1_epi8(static_cast<char>(invalid)), zero = _mm_setzero_si128();
  for (unsigned w = 0; w < ways; w += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(flags + w));
    n += bit_count(static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, inv), zero))));
  }
  return n;
#else
  return plain::count_valid(flags, ways, invalid);
#endif
}

}  // namespace roost::sim::set_kernels
