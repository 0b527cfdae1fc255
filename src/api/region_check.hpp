// The address-space rules shared by a data declaration (roost::data::add) and a forwarded annotation
// (roost::touch, roost::touch_rows): a region of `rows` rows of `row_bytes`, `stride` bytes apart, from
// `base`, must name bytes that can exist. What is wrong with it, or nullptr.
#pragma once
#include <cstddef>
#include <cstdint>

namespace roost::detail {

const char* region_outside_address_space(const void* base, std::size_t row_bytes, std::size_t rows,
                                         std::size_t stride);

}  // namespace roost::detail
