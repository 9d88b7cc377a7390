#include "jit/ir/types.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/error.hpp"

namespace tessera::ir {
namespace {
struct DTypeInfo { DType d; std::string_view name; int bits; };
constexpr DTypeInfo kDTypes[] = {
    {DType::I1, "i1", 1},     {DType::I8, "i8", 8},     {DType::I16, "i16", 16},
    {DType::I32, "i32", 32},  {DType::I64, "i64", 64},  {DType::U8, "u8", 8},
    {DType::U32, "u32", 32},  {DType::F16, "f16", 16},  {DType::BF16, "bf16", 16},
    {DType::F32, "f32", 32},  {DType::F64, "f64", 64},  {DType::Ptr, "ptr", 64},
    {DType::U16, "u16", 16},  {DType::U64, "u64", 64},  {DType::F8E4M3, "f8e4m3", 8},
    {DType::F8E5M2, "f8e5m2", 8},
};
static_assert([] {
  for (int i = 0; i < static_cast<int>(std::size(kDTypes)); ++i)
    if (static_cast<int>(kDTypes[i].d) != i) return false;
  return true;
}(), "kDTypes is indexed by the DType's value");
}  // namespace

std::string_view dtype_name(DType d) { return kDTypes[static_cast<int>(d)].name; }
int dtype_bits(DType d) { return kDTypes[static_cast<int>(d)].bits; }

std::optional<DType> dtype_from_name(std::string_view s) {
  for (const auto& info : kDTypes)
    if (info.name == s) return info.d;
  return std::nullopt;
}

bool is_fp8(DType d) { return d == DType::F8E4M3 || d == DType::F8E5M2; }
bool is_float(DType d) { return d == DType::F16 || d == DType::BF16 || d == DType::F32 || d == DType::F64 || is_fp8(d); }
bool is_int(DType d) { return !is_float(d) && d != DType::Ptr; }
bool is_float_downcast(DType from, DType to) {
  return is_float(from) && is_float(to) && dtype_bits(to) < dtype_bits(from);
}

AsmRegisters inline_asm_registers(DType d, int pack) {
  const int bits = dtype_bits(d);  // 8, 16, 32 or 64: inline_asm_problem refuses i1
  if (bits >= 32) return {pack, bits};
  const int total = bits * pack;
  return total <= 32 ? AsmRegisters{1, total} : AsmRegisters{total / 32, 32};
}

std::string inline_asm_problem(const std::vector<Type>& operands, const std::vector<Type>& results,
                               const std::string& constraints, std::int64_t pack) {
  if (pack < 1 || pack > 16 || (pack & (pack - 1)) != 0)
    return fmt::format("inline_asm_elementwise: pack must be a power of two from 1 to 16, got {}", pack);
  if (operands.empty() || results.empty())
    return "inline_asm_elementwise needs at least one argument and one result type";
  int registers = 0;
  const Type& first = operands[0];
  for (const auto* list : {&results, &operands})
    for (const Type& t : *list) {
      if (t.is_ptr() || t.dtype == DType::I1)
        return fmt::format("inline_asm_elementwise takes and gives numbers (not masks or pointers), got {}; convert "
                           "a mask to int8 first", to_string(t));
      if (t.shape != first.shape || t.layout != first.layout)
        return fmt::format("inline_asm_elementwise needs every argument and result of one shape, got {} and {}",
                           to_string(first), to_string(t));
      registers += inline_asm_registers(t.dtype, static_cast<int>(pack)).count;
    }
  // LLVM's syntax: one comma-separated entry per register; clobbers (~{...}) come on top.
  int entries = 0;
  std::size_t start = 0;
  while (start <= constraints.size()) {
    const std::size_t end = std::min(constraints.find(',', start), constraints.size());
    const std::string entry = constraints.substr(start, end - start);
    if (entry.empty()) return fmt::format("inline_asm_elementwise: constraints \"{}\" have an empty entry", constraints);
    if (entry[0] != '~') ++entries;
    start = end + 1;
  }
  if (entries != registers)
    return fmt::format("inline_asm_elementwise: constraints \"{}\" name {} registers; {} results and {} arguments at "
                       "pack {} need {} (an element narrower than 32 bits packs into 32-bit registers)",
                       constraints, entries, results.size(), operands.size(), pack, registers);
  return "";
}

bool is_unsigned(DType d) {
  return d == DType::U8 || d == DType::U16 || d == DType::U32 || d == DType::U64 || d == DType::I1;
}

std::string tile_shape_problem(std::span<const std::int64_t> shape, std::string_view type_text) {
  std::int64_t n = 1;
  bool overflow = false;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const std::int64_t s = shape[d];
    if (s <= 0) return fmt::format("dim {} of {} is {}, not positive", d, type_text, s);
    if ((s & (s - 1)) != 0) return fmt::format("dim {} of {} is {}, not a power of two", d, type_text, s);
    overflow = overflow || __builtin_mul_overflow(n, s, &n);
  }
  if (overflow || n > kMaxTileElements)
    return fmt::format("{} has {} elements, more than the limit of {} (2^20) elements per tile", type_text,
                       overflow ? "2^63 or more" : std::to_string(n), kMaxTileElements);
  return "";
}

std::int64_t Type::numel() const {
  std::int64_t n = 1;
  for (auto s : shape)
    if (__builtin_mul_overflow(n, s, &n))
      throw ProgramError(fmt::format("the element count of {} overflows 64 bits", to_string(*this)));
  return n;
}

bool Type::same_element_and_shape(const Type& o) const {
  return dtype == o.dtype && (dtype != DType::Ptr || pointee == o.pointee) && shape == o.shape && shared == o.shared &&
         encoding == o.encoding;
}

std::string to_string(const Layout& l) {
  if (l.kind == Layout::Kind::None) return "";
  std::string blocked = fmt::format("blocked<[{}], [{}], [{}], [{}]", fmt::join(l.size_per_thread, ","),
                                    fmt::join(l.threads_per_warp, ","), fmt::join(l.warps_per_cta, ","),
                                    fmt::join(l.order, ","));
  if (!l.lane_repeat.empty()) blocked += fmt::format(", lane_repeat = [{}]", fmt::join(l.lane_repeat, ","));
  blocked += ">";
  if (l.kind == Layout::Kind::Blocked) return "#" + blocked;
  return fmt::format("#slice<{}, {}>", l.slice_dim, blocked);
}

std::string to_string(const SharedEncoding& e) {
  switch (e.kind) {
    case SharedEncoding::Kind::RowMajor: return e.transposed ? "#transposed" : "";
    case SharedEncoding::Kind::Padded: return fmt::format("#padded<{}{}>", e.bytes, e.transposed ? ", transposed" : "");
    case SharedEncoding::Kind::Nvmma:
      return fmt::format("#nvmma<{}{}>", e.bytes, e.transposed ? ", transposed" : "");
  }
  return "#unknown";
}

std::string shared_type_problem(const Type& t) {
  const std::string text = to_string(t);
  if (t.shape.empty() || t.shape.size() > 4)
    return fmt::format("a shared buffer has 1 to 4 dims, {} has {}", text, t.shape.size());
  std::int64_t n = 1;
  for (std::size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] < 1) return fmt::format("dim {} of {} is {}, not positive", d, text, t.shape[d]);
    if (__builtin_mul_overflow(n, t.shape[d], &n) || n > (std::int64_t{1} << 22))
      return fmt::format("{} has more than 2^22 elements", text);
  }
  if (t.is_ptr()) return fmt::format("a shared buffer holds numbers, not pointers: {}", text);
  if (!t.layout.is_none()) return fmt::format("a shared buffer has no register layout: {}", text);
  const SharedEncoding& e = t.encoding;
  if (e.transposed && t.shape.size() < 2) return fmt::format("{}: a transposed encoding needs 2 dims or more", text);
  switch (e.kind) {
    case SharedEncoding::Kind::RowMajor: return "";
    case SharedEncoding::Kind::Padded:
      if (e.bytes < 4 || e.bytes % 4 != 0) return fmt::format("#padded<{}> in {}: the padding is a positive multiple of 4 bytes", e.bytes, text);
      return "";
    case SharedEncoding::Kind::Nvmma:
      if (e.bytes != 32 && e.bytes != 64 && e.bytes != 128)
        return fmt::format("#nvmma<{}> in {}: the swizzle is 32, 64 or 128 bytes", e.bytes, text);
      return "";
  }
  return fmt::format("{}: unknown shared encoding", text);
}

std::string to_string(const Type& t) {
  std::string elem = t.dtype == DType::Ptr ? fmt::format("ptr<{}>", dtype_name(t.pointee))
                                           : std::string(dtype_name(t.dtype));
  if (t.shared) {
    std::string s = "!smem<";
    for (auto d : t.shape) s += fmt::format("{}x", d);
    s += elem;
    if (const std::string e = to_string(t.encoding); !e.empty()) s += ", " + e;
    return s + ">";
  }
  if (!t.is_tile()) return elem;
  std::string s = "<";
  for (auto d : t.shape) s += fmt::format("{}x", d);
  s += elem;
  if (!t.layout.is_none()) s += ", " + to_string(t.layout);
  return s + ">";
}

std::string bitcast_problem(const Type& in, const Type& out) {
  if (in.shape != out.shape || in.layout != out.layout)
    return fmt::format("bitcast changes the shape: {} to {}", to_string(in), to_string(out));
  if (in.is_ptr() != out.is_ptr())
    return fmt::format("bitcast between a pointer and a number ({} to {}); a pointer bitcasts to another pointer only",
                       to_string(in), to_string(out));
  if (in.is_ptr()) return "";
  if (in.dtype == DType::I1 || out.dtype == DType::I1)
    return fmt::format("bitcast of i1 ({} to {}): a mask has no bit width to reinterpret; cast it", to_string(in),
                       to_string(out));
  if (dtype_bits(in.dtype) != dtype_bits(out.dtype))
    return fmt::format("bitcast between {} bits and {} bits ({} to {}); the widths must match", dtype_bits(in.dtype),
                       dtype_bits(out.dtype), to_string(in), to_string(out));
  return "";
}

std::string access_hints_problem(bool is_load, const std::string& cache, const std::string& eviction) {
  static const std::vector<std::string> load_caches{"ca", "cg", "cv"}, store_caches{"wb", "cg", "cs", "wt"},
      evictions{"evict_first", "evict_last"};
  const auto& caches = is_load ? load_caches : store_caches;
  auto known = [](const std::vector<std::string>& names, const std::string& s) {
    return std::find(names.begin(), names.end(), s) != names.end();
  };
  const char* what = is_load ? "load" : "store";
  if (!cache.empty() && !known(caches, cache))
    return fmt::format("a {} has no cache modifier '{}' (known: {})", what, cache, fmt::join(caches, ", "));
  if (!eviction.empty() && !known(evictions, eviction))
    return fmt::format("a {} has no eviction policy '{}' (known: {})", what, eviction, fmt::join(evictions, ", "));
  if (!cache.empty() && !eviction.empty())
    return fmt::format("a {} takes a cache modifier ('{}') or an eviction policy ('{}'), not both: PTX has no "
                       "instruction with both", what, cache, eviction);
  return "";
}

std::string assume_problem(const Type& x, const std::vector<std::int64_t>* contiguity,
                           const std::vector<std::int64_t>* divisibility) {
  if (!x.is_ptr() && (!is_int(x.dtype) || x.dtype == DType::I1))
    return fmt::format("a contiguity or divisibility hint applies to integers and pointers, got {}", to_string(x));
  if (!contiguity && !divisibility) return "assume needs a contiguity or a divisibility";
  const std::size_t dims = std::max<std::size_t>(1, x.shape.size());
  using Named = std::pair<const char*, const std::vector<std::int64_t>*>;
  for (const auto& [name, values] : {Named{"contiguity", contiguity}, Named{"divisibility", divisibility}})
    if (values && values->size() != dims)
      return fmt::format("{} hint has {} entries for {}: give one per dim ({})", name, values->size(), to_string(x), dims);
  for (std::size_t d = 0; divisibility && d < dims; ++d)
    if ((*divisibility)[d] < 1)
      return fmt::format("divisibility hint {} for dim {} of {}: it must be at least 1", (*divisibility)[d], d, to_string(x));
  for (std::size_t d = 0; contiguity && d < dims; ++d) {
    const std::int64_t c = (*contiguity)[d], size = x.is_tile() ? x.shape[d] : 1;
    if (c < 1 || (c & (c - 1)) != 0 || size % c != 0)
      return fmt::format("contiguity hint {} for dim {} of {}: it must be a power of two dividing the dim ({})", c, d,
                         to_string(x), size);
  }
  return "";
}

}  // namespace tessera::ir
