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

const char* access_name(Access a) {
  switch (a) {
    case Access::Load: return "load";
    case Access::Store: return "store";
    case Access::Atomic: return "atomic";
  }
  return "access";
}

}  // namespace

MemoryMap::MemoryMap(const ir::Module& m, std::span<const ArgValue> args, std::span<const HostBuffer> extra,
                     RaceTracker* races)
    : buffer_of_arg_(args.size(), -1), raw_arg_(args.size(), false), races_(races) {
  const auto& params = m.entry().args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != ArgValue::Kind::Pointer) continue;
    if (!args[i].sized) {
      raw_arg_[i] = any_raw_ = true;
      continue;
    }
    const std::string& hint = i < params.size() ? params[i]->name_hint : std::string();
    buffer_of_arg_[i] = static_cast<int>(buffers_.size());
    buffers_.push_back({reinterpret_cast<std::uint64_t>(args[i].p), args[i].bytes,
                        hint.empty() ? fmt::format("argument #{}", i) : fmt::format("argument '{}'", hint)});
  }
  // Extra buffers describe memory that raw pointers reach: with them, raw pointers are bounded too.
  for (std::size_t k = 0; k < extra.size(); ++k)
    buffers_.push_back({reinterpret_cast<std::uint64_t>(extra[k].base), extra[k].bytes,
                        fmt::format("extra buffer #{}", k)});
  if (!extra.empty()) any_raw_ = false;
}

bool MemoryMap::Buffer::holds(std::uint64_t addr, std::uint64_t len) const {
  return addr >= base && len <= bytes && addr - base <= bytes - len;
}

const MemoryMap::Buffer* MemoryMap::find(std::uint64_t addr, std::uint64_t len) const {
  for (const auto& b : buffers_)
    if (b.holds(addr, len)) return &b;
  return nullptr;
}

bool MemoryMap::vouched_for(const Tile& ptrs) const {
  const int arg = ptrs.provenance();
  return arg >= 0 && static_cast<std::size_t>(arg) < raw_arg_.size() && raw_arg_[arg] && any_raw_;
}

void MemoryMap::check(const ir::Op& op, const Tile& ptrs, const std::uint8_t* mask, int elem_bytes,
                      Access access) const {
  // The bound of this access: the buffer of the argument the pointers derive from, when known.
  const int arg = ptrs.provenance();
  const bool known = arg >= 0 && static_cast<std::size_t>(arg) < buffer_of_arg_.size();
  const Buffer* bound = known && buffer_of_arg_[arg] >= 0 ? &buffers_[buffer_of_arg_[arg]] : nullptr;
  // Fast path, one pass: if every active address is aligned and non-null and the whole span they
  // cover lies in the bound (or in one known buffer), every lane is fine.
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
  bool ok = lo != 0 && aligned && hi <= std::numeric_limits<std::uint64_t>::max() - eb;
  if (ok) {
    const std::uint64_t span = hi - lo + eb;
    if (bound) ok = bound->holds(lo, span);
    else if (vouched_for(ptrs)) ok = true;
    else ok = find(lo, span) != nullptr;
  }
  if (!ok)
    for (std::int64_t i = 0; i < n; ++i)
      if (!mask || mask[i]) check_lane(op, ptrs, i, elem_bytes, access, bound);
  if (races_ && access != Access::Atomic) record_races(op, ptrs, mask, elem_bytes, access, bound);
}

void MemoryMap::check_lane(const ir::Op& op, const Tile& ptrs, std::int64_t lane, int elem_bytes, Access access,
                           const Buffer* bound) const {
  const std::uint64_t addr = ptrs.data<std::uint64_t>()[lane];
  const std::uint64_t eb = static_cast<std::uint64_t>(elem_bytes);
  const char* what = access_name(access);
  const std::string where = op.loc.str();
  if (addr == 0)
    throw MemoryAccessError(fmt::format("null pointer {} at {}: {} is a null pointer", what, where,
                                        describe_lane(ptrs, lane)));
  if (addr % eb != 0)
    throw MemoryAccessError(fmt::format("misaligned {} at {}: {} at address {:#x} is not a multiple of the "
                                        "{}-byte element size", what, where, describe_lane(ptrs, lane), addr, eb));
  if (bound) {
    if (bound->holds(addr, eb)) return;
    if (addr >= bound->base && addr - bound->base < bound->bytes)
      throw MemoryAccessError(fmt::format("out-of-bounds {} at {}: {} at address {:#x}: its {} bytes run past "
                                          "the end of the buffer of {} ({} bytes)", what, where,
                                          describe_lane(ptrs, lane), addr, eb, bound->name, bound->bytes));
    const std::string position =
        addr >= bound->base ? fmt::format("at byte offset {} from its start", addr - bound->base)
                            : fmt::format("{} bytes before its start", bound->base - addr);
    throw MemoryAccessError(fmt::format("out-of-bounds {} at {}: {} at address {:#x} is outside the buffer of {} "
                                        "({} bytes) it derives from, {}", what, where, describe_lane(ptrs, lane),
                                        addr, bound->name, bound->bytes, position));
  }
  if (vouched_for(ptrs) || find(addr, eb)) return;
  for (const auto& b : buffers_)
    if (addr >= b.base && addr - b.base < b.bytes)
      throw MemoryAccessError(fmt::format("out-of-bounds {} at {}: {} at address {:#x}: its {} bytes run past "
                                          "the end of the buffer of {} ({} bytes)", what, where,
                                          describe_lane(ptrs, lane), addr, eb, b.name, b.bytes));
  // Of mixed or unknown origin, outside every known buffer: a raw pointer argument may reach it.
  if (any_raw_ || buffers_.empty()) return;
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

void MemoryMap::record_races(const ir::Op& op, const Tile& ptrs, const std::uint8_t* mask, int elem_bytes,
                             Access access, const Buffer* bound) const {
  const auto* p = ptrs.data<std::uint64_t>();
  const auto eb = static_cast<std::uint64_t>(elem_bytes);
  for (std::int64_t i = 0; i < ptrs.numel(); ++i) {
    if (mask && !mask[i]) continue;
    const Buffer* b = bound ? bound : find(p[i], eb);
    if (!b) continue;  // memory behind a raw pointer: not tracked
    races_->record(op, access == Access::Store, static_cast<int>(b - buffers_.data()), b->name, p[i] - b->base, eb);
  }
}

}  // namespace tessera::interp
