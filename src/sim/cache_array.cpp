#include "sim/cache_array.hpp"

#include <cassert>
#include <cstring>

namespace roost::sim {

std::size_t cache_array::set_block_bytes(unsigned ways) {
  // The constructor's layout (below), without making it.
  const bool small = ways <= kSmallWays;
  const std::size_t byte_row = set_kernels::round_up(ways, set_kernels::kByteStep);
  const std::size_t rank_bytes = ways > set_kernels::kMaxByteRanks ? sizeof(std::uint16_t) : 1;
  const std::size_t rank_row = set_kernels::round_up(ways * rank_bytes, set_kernels::kByteStep) / rank_bytes;
  const std::size_t ranks_at = (small ? 0 : byte_row) + byte_row;
  const std::size_t tags_at = set_kernels::round_up(ranks_at + rank_row * rank_bytes, sizeof(std::uint64_t));
  return set_kernels::round_up(tags_at + std::size_t{ways} * sizeof(std::uint64_t), 64);
}

cache_array::cache_array(std::uint64_t sets, unsigned ways)
    : sets_(sets), ways_(ways), pow2_((sets & (sets - 1)) == 0),
      small_(ways <= kSmallWays),
      wide_ranks_(ways > set_kernels::kMaxByteRanks),
      sig_vectors_((ways + 15) / 16),
      sig_mask_(ways >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << ways) - 1),
      mask_(sets - 1), block_(nullptr, block_free{0}) {
  assert(sets >= 1 && ways >= 1 && ways <= 1024);
  // One block per set: the head's rows padded to whole vectors (set_kernels.hpp), the tags after it, the
  // block to whole host cache lines. A small set has no signature row: 64 bytes in all.
  const std::size_t byte_row = set_kernels::round_up(ways, set_kernels::kByteStep);
  const std::size_t rank_bytes = wide_ranks_ ? sizeof(std::uint16_t) : 1;
  const std::size_t rank_row = set_kernels::round_up(ways * rank_bytes, set_kernels::kByteStep) / rank_bytes;
  const std::size_t sig_row = small_ ? 0 : byte_row;
  flags_at_ = sig_row;
  ranks_at_ = flags_at_ + byte_row;
  tags_at_ = set_kernels::round_up(ranks_at_ + rank_row * rank_bytes, sizeof(std::uint64_t));
  const std::size_t used = tags_at_ + std::size_t{ways} * sizeof(std::uint64_t);
  set_bytes_ = set_kernels::round_up(used, 64);
  assert(set_bytes_ == set_block_bytes(ways));
  const std::size_t bytes = sets * set_bytes_;
  block_ = std::unique_ptr<unsigned char[], block_free>(host_allocator<unsigned char>().allocate(bytes),
                                                         block_free{bytes});
  for (std::uint64_t i = 0; i < sets; ++i) {
    const set_ref s = set_of(i);  // line i is in set i
    std::memset(s.sigs, 0, sig_row);
    std::memset(s.flags, kInvalidated, byte_row);
    for (std::size_t w = 0; w < rank_row; ++w) {
      if (wide_ranks_)
        reinterpret_cast<std::uint16_t*>(s.ranks)[w] =
            w < ways ? static_cast<std::uint16_t>(w) : set_kernels::kRankPadOf<std::uint16_t>;
      else
        s.ranks[w] = w < ways ? static_cast<std::uint8_t>(w) : set_kernels::kRankPadOf<std::uint8_t>;
    }
    for (std::size_t w = 0; w < ways; ++w) s.tags[w] = kEmptyTag;
  }
}

}  // namespace roost::sim
