#include "jit/interp/memory.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace tessera::interp {
namespace {

std::string describe_lane(const Tile& ptrs, std::int64_t lane) {
  if (ptrs.shape().empty()) return "the scalar pointer";
  if (ptrs.shape().size() == 1) return fmt::format("element {} of the tile", lane);
  std::vector<std::int64_t> idx(ptrs.shape().size());
  std::int64_t rest = lane;
  for (std::size_t d = idx.size(); d-- > 0;) {
    idx[d] = rest % ptrs.shape()[d];
    rest /= ptrs.shape()[d];
  }
  return fmt::format("element {} (index [{}]) of the tile", lane, fmt::join(idx, ", "));
}

const char* access_name(bool is_store) { return is_store ? "store" : "load"; }

}  // namespace

MemoryMap::MemoryMap(const ir::Module& m, std::span<const ArgValue> args, std::span<const HostBuffer> extra) {
  const auto& params = m.entry().args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != ArgValue::Kind::Pointer || args[i].bytes == 0) continue;
    const std::string& hint = i < params.size() ? params[i]->name_hint : std::string();
    buffers_.push_back({reinterpret_cast<std::uint64_t>(args[i].p), args[i].bytes,
                        hint.empty() ? fmt::format("argument #{}", i) : fmt::format("argument '{}'", hint)});
    checked_ = true;
  }
  for (std::size_t k = 0; k < extra.size(); ++k)
    buffers_.push_back({reinterpret_cast<std::uint64_t>(extra[k].base), extra[k].bytes,
                        fmt::format("extra buffer #{}", k)});
}

bool MemoryMap::fits(std::uint64_t addr, std::uint64_t len) const {
  for (const auto& b : buffers_)
    if (addr >= b.base && len <= b.bytes && addr - b.base <= b.bytes - len) return true;
  return false;
}

void MemoryMap::check(const ir::Op& op, const Tile& ptrs, const std::uint8_t* mask, int elem_bytes,
                      bool is_store) const {
  // Fast path, one pass: if every active address is aligned and non-null and the whole span they
  // cover lies in one buffer, every lane is fine.
  const auto* p = ptrs.data<std::uint64_t>();
  const std::int64_t n = ptrs.numel();
  std::uint64_t lo = std::numeric_limits<std::uint64_t>::max(), hi = 0, low_bits = 0;
  bool any = false;
  for (std::int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i]) continue;
    any = true;
    lo = std::min(lo, p[i]);
    hi = std::max(hi, p[i]);
    low_bits |= p[i];
  }
  if (!any) return;
  const std::uint64_t eb = static_cast<std::uint64_t>(elem_bytes);
  const bool aligned = (low_bits & (eb - 1)) == 0;  // element sizes are powers of two
  if (lo != 0 && aligned && hi <= std::numeric_limits<std::uint64_t>::max() - eb && fits(lo, hi - lo + eb)) return;
  for (std::int64_t i = 0; i < n; ++i)
    if (!mask || mask[i]) check_lane(op, ptrs, i, elem_bytes, is_store);
}

void MemoryMap::check_lane(const ir::Op& op, const Tile& ptrs, std::int64_t lane, int elem_bytes,
                           bool is_store) const {
  const std::uint64_t addr = ptrs.data<std::uint64_t>()[lane];
  const std::uint64_t eb = static_cast<std::uint64_t>(elem_bytes);
  const char* what = access_name(is_store);
  const std::string where = op.loc.str();
  if (addr == 0)
    throw MemoryAccessError(fmt::format("null pointer {} at {}: {} is a null pointer", what, where,
                                        describe_lane(ptrs, lane)));
  if (addr % eb != 0)
    throw MemoryAccessError(fmt::format("misaligned {} at {}: {} at address {:#x} is not a multiple of the "
                                        "{}-byte element size", what, where, describe_lane(ptrs, lane), addr, eb));
  if (fits(addr, eb)) return;
  for (const auto& b : buffers_)
    if (addr >= b.base && addr - b.base < b.bytes)
      throw MemoryAccessError(fmt::format("out-of-bounds {} at {}: {} at address {:#x}: its {} bytes run past "
                                          "the end of the buffer of {} ({} bytes)", what, where,
                                          describe_lane(ptrs, lane), addr, eb, b.name, b.bytes));
  if (!checked_) return;  // raw pointers of unknown size: the user vouches for them
  // Name the buffer just below the address (the usual off-by-some overrun), else the one above.
  const Buffer* below = nullptr;
  const Buffer* above = nullptr;
  for (const auto& b : buffers_) {
    if (b.base <= addr && (!below || b.base > below->base)) below = &b;
    if (b.base > addr && (!above || b.base < above->base)) above = &b;
  }
  const Buffer* near = below ? below : above;
  const std::string distance = below ? fmt::format("at byte offset {} from its start", addr - below->base)
                                     : fmt::format("{} bytes before its start", above->base - addr);
  throw MemoryAccessError(fmt::format("out-of-bounds {} at {}: {} at address {:#x}, outside the buffer of {} "
                                      "({} bytes), {}", what, where, describe_lane(ptrs, lane), addr,
                                      near->name, near->bytes, distance));
}

}  // namespace tessera::interp
