#include "jit/analysis/register_conversion.hpp"

#include "jit/analysis/layouts.hpp"
#include "jit/analysis/linear_layout.hpp"

namespace tessera::analysis {

namespace {
bool blocked_or_slice(const ir::Layout& l) { return l.kind == ir::Layout::Kind::Blocked || l.kind == ir::Layout::Kind::Slice; }

int warp_size_of(const ir::Layout& l) {
  int threads = 1;
  for (int t : l.threads_per_warp) threads *= t;
  return threads;
}
}  // namespace

std::optional<std::vector<std::int64_t>> register_renaming(const ir::Type& src, const ir::Type& dst) {
  if (!src.is_tile() || !dst.is_tile() || src.shape != dst.shape || !blocked_or_slice(src.layout) || !blocked_or_slice(dst.layout))
    return std::nullopt;
  const int warp_size = warp_size_of(src.layout);
  if (warp_size != warp_size_of(dst.layout)) return std::nullopt;
  const LinearLayout from = blocked_to_linear(src.layout, src.shape, warp_size);
  const LinearLayout to = blocked_to_linear(dst.layout, dst.shape, warp_size);
  if (from.in_size("lane") != to.in_size("lane") || from.in_size("warp") != to.in_size("warp") || !from.is_surjective())
    return std::nullopt;
  const ConversionPlan plan = plan_conversion(from, to);
  if (plan.kind != ConversionPlan::Kind::Identity && plan.kind != ConversionPlan::Kind::RegisterPermutation) return std::nullopt;
  // The source register must not depend on the lane or the warp: each of their bits maps to
  // itself alone, so that the source of (r, lane, warp) is (src_register[r], lane, warp).
  for (const char* dim : {"lane", "warp"})
    for (int b = 0; b < to.in_bits(dim); ++b) {
      LinearLayout::Basis self{0, 0, 0};
      self[dim[0] == 'l' ? 1 : 2] = std::int64_t{1} << b;
      if (plan.source.basis(dim, b) != self) return std::nullopt;
    }
  if (static_cast<std::int64_t>(plan.src_register.size()) != distribute(dst).num_slots() ||
      from.in_size("register") != distribute(src).num_slots())
    return std::nullopt;
  return plan.src_register;
}

}  // namespace tessera::analysis
