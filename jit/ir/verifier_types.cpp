// The verifier's rule for types on their own (verifier_rules.hpp): every value's type, whatever
// op makes it. The layout math (analysis/layouts.cpp) divides by and multiplies these numbers, so
// they are bounded here: positive powers of two whose products fit a warp and the module's warps.
#include <fmt/format.h>

#include <cstdint>

#include "jit/ir/verifier_rules.hpp"

namespace tessera::ir {
namespace {

bool is_pow2(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The product of a list of positive powers of two, each at most `max`; or "" and the problem.
std::string pow2_list_problem(const std::vector<int>& list, const char* what, std::int64_t max,
                              std::int64_t& product) {
  product = 1;
  for (std::size_t d = 0; d < list.size(); ++d) {
    if (!is_pow2(list[d]) || list[d] > max)
      return fmt::format("{} [{}] is {}, not a power of two from 1 to {}", what, d, list[d], max);
    // The rank is unbounded (dims of 1 are free), so the product saturates instead of wrapping.
    if (__builtin_mul_overflow(product, std::int64_t{list[d]}, &product)) product = INT64_MAX;
  }
  return "";
}

std::string layout_problem(const Type& t, int num_warps) {
  const Layout& l = t.layout;
  const std::string type = to_string(t);
  if (!t.is_tile()) return fmt::format("scalar type {} cannot carry a layout", type);
  int r = l.parent_rank();
  if (static_cast<int>(l.threads_per_warp.size()) != r || static_cast<int>(l.warps_per_cta.size()) != r ||
      static_cast<int>(l.order.size()) != r || (!l.lane_repeat.empty() && static_cast<int>(l.lane_repeat.size()) != r))
    return fmt::format("layout of {} has lists of different lengths", type);
  int expected = l.kind == Layout::Kind::Slice ? t.rank() + 1 : t.rank();
  if (r != expected) return fmt::format("layout of {} has rank {}, expected {}", type, r, expected);
  if (l.kind == Layout::Kind::Slice && (l.slice_dim < 0 || l.slice_dim >= r))
    return fmt::format("slice dim {} out of range in {}", l.slice_dim, type);
  std::int64_t spt = 1, lanes = 1, warps = 1;
  std::string p = pow2_list_problem(l.size_per_thread, "size_per_thread", kMaxTileElements, spt);
  if (p.empty()) p = pow2_list_problem(l.threads_per_warp, "threads_per_warp", 64, lanes);
  if (p.empty()) p = pow2_list_problem(l.warps_per_cta, "warps_per_cta", 64, warps);
  std::int64_t repeats = 1;  // lane_repeat (types.hpp): empty, or powers of two
  if (p.empty()) p = pow2_list_problem(l.lane_repeat, "lane_repeat", kMaxTileElements, repeats);
  if (!p.empty()) return fmt::format("layout of {}: {}", type, p);
  if (lanes != 32 && lanes != 64)
    return fmt::format("layout of {}: threads_per_warp multiply to {}, not a warp (32 or 64 lanes)", type, lanes);
  if (warps != num_warps)
    return fmt::format("layout of {}: warps_per_cta multiply to {}, but the kernel has num_warps = {}", type, warps,
                       num_warps);
  std::vector<bool> seen(r, false);
  for (int d : l.order) {
    if (d < 0 || d >= r || seen[d]) return fmt::format("layout of {}: order is not a permutation of its dims", type);
    seen[d] = true;
  }
  return "";
}

}  // namespace

std::string type_problem(const Type& t, int num_warps) {
  if (t.shared) return shared_type_problem(t);
  if (t.is_tile())
    if (auto p = tile_shape_problem(t.shape, to_string(t)); !p.empty()) return p;
  if (t.layout.is_none()) return "";
  return layout_problem(t, num_warps);
}

}  // namespace tessera::ir
