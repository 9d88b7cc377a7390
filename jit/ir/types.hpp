// Element types, layouts and tile types of the tile IR.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/dtype.hpp"

namespace tessera::ir {

// Scalar element types (the public tessera::DType). `Ptr` is a pointer whose pointee is Type::pointee.
using DType = tessera::DType;

std::string_view dtype_name(DType d);
std::optional<DType> dtype_from_name(std::string_view s);
int dtype_bits(DType d);           // Ptr is 64
inline int dtype_bytes(DType d) { return dtype_bits(d) <= 8 ? 1 : dtype_bits(d) / 8; }
bool is_float(DType d);            // includes the fp8 formats
bool is_fp8(DType d);              // F8E4M3, F8E5M2: stored as bytes, computed in f32 (ops.def)
bool is_int(DType d);              // includes I1 and the unsigned types
bool is_unsigned(DType d);         // U8, U16, U32, U64 and I1 (a mask compares as unsigned)
bool is_float_downcast(DType from, DType to);  // float to a narrower float (f32 -> f16, f64 -> bf16, ...)
// inline_asm (ops.def): how many registers hold `pack` elements of type d, and each one's width
// in bits. Narrower than 32 bits: packed into 32-bit registers (one narrower register when all of
// them fit in less); 32 bits or wider: one register per element.
struct AsmRegisters {
  int count, bits;
};
AsmRegisters inline_asm_registers(DType d, int pack);

// Triton's limits on a tile: at most 2^20 elements, every dim a power of two (the layouts split
// dims among threads and warps by halving). The parser, the verifier and the DSL tracer all check
// a shape with tile_shape_problem, so that IR that passes any of them has element counts (and
// byte sizes: at most 2^20 * 8) far from overflowing int64.
inline constexpr std::int64_t kMaxTileElements = std::int64_t{1} << 20;
// "" when `shape` is a valid tile shape; else the problem, in words, naming the offending dim
// ("dim 0 of <3xi32> is 3, not a power of two"). `type_text` names the type in the message.
std::string tile_shape_problem(std::span<const std::int64_t> shape, std::string_view type_text);

// How a tile's elements are spread over the threads of a program (a CTA).
// Blocked: each thread owns size_per_thread contiguous elements per dim; threads_per_warp and
// warps_per_cta tile the shape, repeating when the shape is larger and replicating when smaller.
// lane_repeat (empty: 1 along every dim) puts register groups between the lanes and the warps:
// along dim d a thread holds lane_repeat[d] groups of size_per_thread elements that lie one
// warp's lane tile (size_per_thread * threads_per_warp) apart before the warps take over. It is
// what wgmma's accumulator needs (rows r and r + 8 in one thread, warps 16 rows apart:
// analysis::wgmma_layout, and the values computed and stored in it); every other layout leaves
// it empty.
// Slice: the parent blocked layout applied to the shape with a 1 inserted at `slice_dim`; it is
// the layout of a value that expand_dims turns into a parent-layout tile (and, later, of a
// reduction's result).
struct Layout {
  enum class Kind : std::uint8_t { None, Blocked, Slice } kind = Kind::None;
  std::vector<int> size_per_thread, threads_per_warp, warps_per_cta, order;  // of the parent
  std::vector<int> lane_repeat;  // of the parent; empty when 1 along every dim (the usual case)
  int slice_dim = -1;
  bool operator==(const Layout&) const = default;
  bool is_none() const { return kind == Kind::None; }
  int parent_rank() const { return static_cast<int>(size_per_thread.size()); }
  int repeat(int d) const { return lane_repeat.empty() ? 1 : lane_repeat[static_cast<std::size_t>(d)]; }
};

// How a shared buffer's elements lie in shared memory (ops.def, "Shared memory"): the lowering's
// concern; the interpreter keeps only the elements.
struct SharedEncoding {
  enum class Kind : std::uint8_t { RowMajor, Padded, Nvmma } kind = Kind::RowMajor;
  int bytes = 0;            // Padded: bytes after each row; Nvmma: the swizzle width (32, 64 or 128)
  // Elements adjacent along the next-to-last dim, not the last: the bytes of the transpose, laid
  // out as the kind says (#nvmma's K- or MN-major operands; smem_trans's views of any kind).
  bool transposed = false;
  bool operator==(const SharedEncoding&) const = default;
};

struct Type {
  DType dtype = DType::I32;
  DType pointee = DType::I32;         // meaningful only when dtype == Ptr
  std::vector<std::int64_t> shape;    // empty: a scalar
  Layout layout;                      // None until the layout pass runs
  // A shared buffer (`!smem<...>`, ops.def "Shared memory") rather than a value in registers: it
  // has a shape and an encoding but no layout, and is_tile() is false for it.
  bool shared = false;
  SharedEncoding encoding;            // meaningful only when shared

  static Type scalar(DType d) { return Type{d, DType::I32, {}, {}}; }
  static Type pointer(DType pointee) { return Type{DType::Ptr, pointee, {}, {}}; }
  Type with_shape(std::vector<std::int64_t> s) const { Type t = *this; t.shape = std::move(s); t.layout = {}; return t; }
  Type element() const { Type t = *this; t.shape.clear(); t.layout = {}; t.shared = false; t.encoding = {}; return t; }
  Type with_dtype(DType d) const { Type t = *this; t.dtype = d; return t; }
  // A shared buffer's elements as a tile in registers (no layout yet).
  Type as_register_tile() const { Type t = *this; t.shared = false; t.encoding = {}; return t; }
  bool is_tile() const { return !shape.empty() && !shared; }
  bool is_ptr() const { return dtype == DType::Ptr; }
  // The product of the dims (1 for a scalar). Throws ProgramError when it overflows int64, which
  // only a shape that tile_shape_problem refuses can do.
  std::int64_t numel() const;
  int rank() const { return static_cast<int>(shape.size()); }
  bool same_element_and_shape(const Type& o) const;
  bool operator==(const Type& o) const = default;
};

std::string to_string(const Type& t);
std::string to_string(const Layout& l);
std::string to_string(const SharedEncoding& e);  // "" for RowMajor

// "" when `t` (shared) is a well-formed shared buffer type: 1 to 4 dims, each at least 1, at most
// 2^22 elements, no pointer elements, a known encoding (Padded: bytes a positive multiple of 4;
// Nvmma: 32, 64 or 128; transposed only with 2 dims or more); else the problem, in words.
std::string shared_type_problem(const Type& t);

// What is wrong with an inline_asm of these operand and result types, constraints and pack, or ""
// (shared by the DSL, which names the user's line, and the verifier).
std::string inline_asm_problem(const std::vector<Type>& operands, const std::vector<Type>& results,
                               const std::string& constraints, std::int64_t pack);

// "" when `from` bitcasts to `to` (ops.def `bitcast`: same shape and layout; a pointer to a
// pointer, or a number to a number of its width, i1 excluded); else the problem, in words. The
// verifier and the DSL both ask it.
std::string bitcast_problem(const Type& from, const Type& to);

// "" when a load (is_load) or store may carry these hints (ops.def `load`: empty means absent);
// else the problem, in words.
std::string access_hints_problem(bool is_load, const std::string& cache, const std::string& eviction);

// "" when an `assume` of `x` with these attrs is well formed (ops.def `assume`: an int (not i1)
// or pointer; at least one attr; one entry per dim, one for a scalar; contiguities powers of two
// dividing their dim, divisibilities >= 1); else the problem, in words. Null: the attr is absent.
std::string assume_problem(const Type& x, const std::vector<std::int64_t>* contiguity,
                           const std::vector<std::int64_t>* divisibility);

}  // namespace tessera::ir
