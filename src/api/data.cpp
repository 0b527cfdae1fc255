// Per-task data declarations (roost/data.hpp): the checks on each region, and the declared spawn, which
// hands the declaration to a policy that reads it (engine_base::uses_declarations) for the spawn's duration.
#include "roost/data.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>

#include "api/region_check.hpp"
#include "engine/engine_base.hpp"
#include "engine/worker.hpp"
#include "roost/errors.hpp"
#include "roost/task_group.hpp"

namespace roost {

namespace {

std::string describe(const region& r) {
  std::ostringstream os;
  os << "region{base=" << r.base << ", row_bytes=" << r.row_bytes << ", rows=" << r.rows << ", stride=" << r.stride
     << "}";
  return os.str();
}

[[noreturn]] void bad(const region& r, const std::string& why) {
  throw usage_error("roost::data::add(" + describe(r) + "): " + why);
}

// One past the region's last byte, as an address (checked not to wrap).
std::uintptr_t end_of(const region& r) {
  return reinterpret_cast<std::uintptr_t>(r.base) + (r.rows - 1) * r.stride + r.row_bytes;
}

// Whether the contiguous bytes [y, y + w) meet a row of tile t, whose rows are disjoint and ascending (a
// stride of at least row_bytes, checked before): only the first row that ends after y can, as every later
// one starts later still.
bool meets_a_row(std::uintptr_t y, std::size_t w, const region& t) {
  const std::uintptr_t p = reinterpret_cast<std::uintptr_t>(t.base);
  // Row i ends at p + i * stride + row_bytes: the first to end after y.
  std::size_t i = 0;
  if (y >= p + t.row_bytes) {
    if (t.rows == 1) return false;  // its one row ends at or before y (a one-row region's stride means nothing)
    i = (y - p - t.row_bytes) / t.stride + 1;
  }
  return i < t.rows && p + i * t.stride < y + w;
}


// Whether two non-empty regions share a byte. A region of one row against anything, and equal strides (the
// tiles of one matrix), are decided exactly in a few operations: with b = a + q*stride + m (0 <= m < stride),
// a row of b meets a row of a either q rows down at column m, or q+1 rows down at column m - stride.
// Different strides: the rows of the one with the larger stride that lie within the other's span, each
// checked as a row against the other, while `rows_left` (the declaration's budget, data.hpp) lasts; a pair
// with more rows than are left is not walked and is let through, and a later pair that fits what is left is
// still walked (data.hpp says so: a double-counted byte only skews where the task is dealt). About 2 ns a
// row (one pair of 65,000 rows: 123 us on the 2-vCPU AMD EPYC VM): the budget's 65,536 rows, an eighth of a
// millisecond. No product of row counts: it wrapped to 0 for 2^32 rows against 2^32, and the walk then never
// ended (an outside-user campaign).
bool overlap(const region& a, const region& b, std::size_t& rows_left) {
  std::uintptr_t pa = reinterpret_cast<std::uintptr_t>(a.base), pb = reinterpret_cast<std::uintptr_t>(b.base);
  if (end_of(a) <= pb || end_of(b) <= pa) return false;  // disjoint spans
  if (a.rows == 1) return meets_a_row(pa, a.row_bytes, b);
  if (b.rows == 1) return meets_a_row(pb, b.row_bytes, a);
  if (a.stride == b.stride) {
    const region& lo = pa <= pb ? a : b;
    const region& hi = pa <= pb ? b : a;
    const std::uintptr_t d = reinterpret_cast<std::uintptr_t>(hi.base) - reinterpret_cast<std::uintptr_t>(lo.base);
    const std::uintptr_t s = lo.stride, q = d / s, m = d % s;
    if (q < lo.rows && m < lo.row_bytes) return true;
    if (q + 1 < lo.rows && s - m < hi.row_bytes) return true;
    return false;
  }
  const region& wide = a.stride > b.stride ? a : b;  // fewer rows in any span
  const region& other = a.stride > b.stride ? b : a;
  const std::uintptr_t pw = reinterpret_cast<std::uintptr_t>(wide.base), po = reinterpret_cast<std::uintptr_t>(other.base);
  // wide's rows that end after other's start and start before its end.
  const std::size_t first = po >= pw + wide.row_bytes ? (po - pw - wide.row_bytes) / wide.stride + 1 : 0;
  const std::uintptr_t end = end_of(other);
  const std::size_t last = std::min<std::size_t>(wide.rows - 1, (end - 1 - pw) / wide.stride);  // end > pw: spans meet
  if (first > last) return false;
  if (last - first >= rows_left) return false;
  rows_left -= last - first + 1;
  for (std::size_t i = first; i <= last; ++i)
    if (meets_a_row(pw + i * wide.stride, wide.row_bytes, other)) return true;
  return false;
}

}  // namespace

namespace detail {

const char* region_outside_address_space(const void* base_ptr, std::size_t row_bytes, std::size_t rows,
                                         std::size_t stride) {
  if (row_bytes == 0 || rows == 0) return nullptr;  // empty: names no byte
  if (!base_ptr) return "a null base with a non-zero size; give the address of the data, or an empty region";
  const std::uintptr_t max = std::numeric_limits<std::uintptr_t>::max();
  const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(base_ptr);
  if (rows > 1 && stride > 0 && (rows - 1) > (max - base) / stride) return "its rows run past the end of the address space";
  const std::uintptr_t last_row = base + (rows - 1) * (rows > 1 ? stride : 0);
  // Its end, one past its last byte, must be an address: every user of a region computes it (base + bytes).
  if (row_bytes > max - last_row)
    return "it runs to the end of the address space or past it; its end (one past its last byte) must be an address";
  return nullptr;
}

}  // namespace detail

data& data::add(const region& r) {
  // A value cast to access that names none (a dealer would count its bytes as neither read nor written).
  if (static_cast<unsigned>(r.mode) > static_cast<unsigned>(access::read_write))
    bad(r, "mode " + std::to_string(static_cast<unsigned>(r.mode)) +
               " is no roost::access; valid: access::read, access::write, access::read_write");
  if (r.row_bytes == 0 || r.rows == 0) return *this;  // empty: nothing to deal by
  if (const char* why = detail::region_outside_address_space(r.base, r.row_bytes, r.rows, r.stride)) bad(r, why);
  if (r.rows > 1 && r.stride < r.row_bytes)
    bad(r, "rows longer than their stride overlap; the stride must be at least row_bytes");
  const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(r.base), end = end_of(r);
  // The rows this add walks come off the declaration's budget only once the region is in: an add that throws
  // leaves the declaration as it was.
  std::size_t rows_left = rows_left_to_walk_;
  auto shared = [&](const region& o) {
    if (overlap(o, r, rows_left)) bad(r, "it shares bytes with " + describe(o) + " of the same declaration; declare each byte once");
  };
  if (regions_.size() < kUnindexed) {
    for (const region& o : regions_) shared(o);
    regions_.push_back(r);
    if (regions_.size() == kUnindexed) {  // the last of the few: index them all, all or none
      std::map<std::uintptr_t, std::size_t> contiguous;
      std::multimap<std::uintptr_t, std::size_t> strided;
      std::uintptr_t longest = 0;
      try {
        for (std::size_t i = 0; i < regions_.size(); ++i) {
          const region& o = regions_[i];
          const std::uintptr_t ob = reinterpret_cast<std::uintptr_t>(o.base);
          if (o.rows == 1) contiguous.emplace(ob, i);
          else {
            strided.emplace(ob, i);
            longest = std::max(longest, end_of(o) - ob);
          }
        }
      } catch (...) {
        regions_.pop_back();
        throw;
      }
      contiguous_.swap(contiguous);
      strided_.swap(strided);
      longest_strided_span_ = longest;
    }
    rows_left_to_walk_ = rows_left;
    return *this;
  }
  // Contiguous regions: the one below r's base, if it reaches past it, and those that begin inside r's span.
  auto c = contiguous_.lower_bound(base);
  if (c != contiguous_.begin()) shared(regions_[std::prev(c)->second]);
  for (; c != contiguous_.end() && c->first < end; ++c) shared(regions_[c->second]);
  // Strided regions: a base no further below r's than the longest strided span.
  const std::uintptr_t from = base > longest_strided_span_ ? base - longest_strided_span_ : 0;
  for (auto it = strided_.lower_bound(from); it != strided_.end() && it->first < end; ++it) shared(regions_[it->second]);
  // An allocation that fails leaves the declaration as it was: the vector and its index agree.
  regions_.push_back(r);
  try {
    if (r.rows == 1) contiguous_.emplace(base, regions_.size() - 1);
    else strided_.emplace(base, regions_.size() - 1);
  } catch (...) {
    regions_.pop_back();
    throw;
  }
  if (r.rows > 1) longest_strided_span_ = std::max(longest_strided_span_, end - base);
  rows_left_to_walk_ = rows_left;
  return *this;
}

std::size_t data::bytes() const {
  std::size_t n = 0;
  for (const region& r : regions_) n += r.bytes();
  return n;
}

namespace detail {

void spawn_declared(worker_abi& wa, group_state& g, task_frame& f, const data& d) {
  auto& w = static_cast<engine::worker&>(wa);
  // In a final region (run_final) the spawn runs the child at once: nothing to place.
  if (!w.eng->uses_declarations() || w.final_depth != 0 || d.empty()) return wa.engine_spawn(wa, g, f);
  // The declaration is the worker's until the spawn has read it: no other task may run here meanwhile.
  no_preempt_scope np(w.current_fiber);
  w.spawn_decl = &d;
  try {
    wa.engine_spawn(wa, g, f);
  } catch (...) {
    w.spawn_decl = nullptr;
    throw;
  }
  w.spawn_decl = nullptr;
}

}  // namespace detail
}  // namespace roost
