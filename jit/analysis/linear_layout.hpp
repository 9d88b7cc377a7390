// Linear layouts: "which register, lane and warp holds which tensor coordinate" as one linear map
// over GF(2) (the idea of Triton 3.x's LinearLayout and of the paper "Linear Layouts", 2025; this
// is tessera's own code).
//
// A layout has named input dims ("register", "lane", "warp"; "offset" for a shared-memory buffer;
// "block" if ever needed), each of size 2^k and given by k basis vectors, and named output dims
// (the tensor's dim0, dim1, ...) of power-of-two sizes. A basis vector is, for one input bit, the
// output coordinates (one int per output dim). The layout maps an input to the XOR, per output
// dim, of the bases of its set bits:
//   L(register = 5, lane = 2) = B_register[0] ^ B_register[2] ^ B_lane[1].
// A zero basis vector is broadcast: the lanes (or warps, registers) that differ in that bit hold
// the same element. Every encoding tessera has is such a map because every size is a power of
// two: blocked layouts place thread and slot indices in disjoint bit ranges (so + is ^), the
// wrap `mod S_d` of a tile smaller than the CTA tile is a mask, and the MMA fragments and the
// swizzles are bit patterns by construction.
//
// Why one algebra: composition, inversion, slicing and swizzles then need no per-encoding code;
// a conversion between two layouts is A^-1 ∘ B, and whether it needs shared memory, shuffles or
// only register renaming is read off its bases (plan_conversion).
//
// Text form (to_string, parse_linear_layout; whitespace is free):
//   {register=[[0,1],[8,0]], lane=[[0,2],[0,4],[1,0],[2,0],[4,0]], warp=[]} -> [dim0=16, dim1=8]
// The input dims in order, each with its bases lowest bit first, each basis one int per output
// dim in the order of the list after "->"; an input dim of size 1 is written `name=[]`. The
// empty layout is `{} -> []`.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jit/ir/types.hpp"

namespace tessera::analysis {

class LinearLayout {
 public:
  using Basis = std::vector<std::int64_t>;  // one coordinate per output dim
  struct InDim {
    std::string name;
    std::vector<Basis> bases;  // bases[i]: the image of bit i; the dim has size 2^bases.size()
    bool operator==(const InDim&) const = default;
  };
  struct OutDim {
    std::string name;
    std::int64_t size = 1;  // a power of two
    bool operator==(const OutDim&) const = default;
  };
  // An input to apply(): values per named input dim; dims not named are 0.
  using Inputs = std::vector<std::pair<std::string, std::int64_t>>;

  LinearLayout() = default;
  // Checks: names unique and non-empty, sizes powers of two, each basis has one coordinate per
  // output dim and each coordinate lies in [0, size). Throws InternalError naming the problem.
  LinearLayout(std::vector<InDim> ins, std::vector<OutDim> outs);

  // `in` of size `size` mapped onto `out` of the same size, bit i to 2^i.
  static LinearLayout identity_1d(std::int64_t size, const std::string& in, const std::string& out);
  // `in` of size `size` broadcast: every bit maps to 0 of `out` (of size 1 unless `out` is
  // multiplied with a layout that has it).
  static LinearLayout zeros_1d(std::int64_t size, const std::string& in, const std::string& out);

  const std::vector<InDim>& in_dims() const { return ins_; }
  const std::vector<OutDim>& out_dims() const { return outs_; }
  bool has_in_dim(std::string_view name) const { return in_index(name) >= 0; }
  bool has_out_dim(std::string_view name) const { return out_index(name) >= 0; }
  int in_index(std::string_view name) const;   // -1 when absent
  int out_index(std::string_view name) const;  // -1 when absent
  // log2 of the dim's size; 0 (size 1) when the layout has no such dim.
  int in_bits(std::string_view name) const;
  int out_bits(std::string_view name) const;
  std::int64_t in_size(std::string_view name) const { return std::int64_t{1} << in_bits(name); }
  std::int64_t out_size(std::string_view name) const { return std::int64_t{1} << out_bits(name); }
  int total_in_bits() const;
  int total_out_bits() const;
  const Basis& basis(std::string_view in, int bit) const;

  // The output coordinates (in out_dims() order) of an input. Values must lie in [0, size).
  std::vector<std::int64_t> apply(const Inputs& inputs) const;
  // The common case: register, lane, warp.
  std::vector<std::int64_t> apply_rlw(std::int64_t reg, std::int64_t lane, std::int64_t warp) const;

  // Rank of the map over GF(2): surjective when it equals total_out_bits (every coordinate is
  // held somewhere), injective when it equals total_in_bits (no two inputs hold one element).
  int rank() const;
  bool is_surjective() const { return rank() == total_out_bits(); }
  bool is_injective() const { return rank() == total_in_bits(); }
  bool is_bijective() const { return is_surjective() && is_injective(); }
  // How many bases of `in` are zero: log2 of that dim's pure broadcast factor.
  int free_bits(std::string_view in) const;

  // The layout restricted to the given input dims and projected on the given output dims (both
  // in the order given; names the layout lacks are an error).
  LinearLayout sublayout(const std::vector<std::string>& ins, const std::vector<std::string>& outs) const;
  // The same map with the output (input) dims listed in another order.
  LinearLayout transpose_outs(const std::vector<std::string>& outs) const;
  LinearLayout transpose_ins(const std::vector<std::string>& ins) const;
  // Output dims renamed position by position (`names` has one name per output dim).
  LinearLayout rename_outs(const std::vector<std::string>& names) const;

  bool operator==(const LinearLayout&) const = default;

 private:
  std::vector<InDim> ins_;
  std::vector<OutDim> outs_;
};

std::string to_string(const LinearLayout& l);
// Parses the text form above. Throws ProgramError saying what was expected and where (the
// character offset), or what is inconsistent (a basis of the wrong length, a size that is not a
// power of two, a coordinate out of range).
LinearLayout parse_linear_layout(std::string_view text);

// Product: `a` and `b` side by side. Input dims of one name concatenate their bases (b's bits
// become the higher ones); output dims of one name stack (b's coordinates are scaled by a's size
// along it, so b tiles copies of a); dims only one side has are kept. Dims of `a` come first.
// This builds a blocked layout from per-dim pieces: identity(spt) * identity(tpw) * ... .
LinearLayout operator*(const LinearLayout& a, const LinearLayout& b);

// outer ∘ inner: inner's output dims must be input dims of outer, each no larger than outer's.
// The result has inner's inputs and outer's outputs.
LinearLayout compose(const LinearLayout& outer, const LinearLayout& inner);

// The inverse of a bijective layout: inputs are this layout's outputs and vice versa.
LinearLayout invert(const LinearLayout& l);
// For a surjective layout: a right inverse P (l ∘ P = identity) that picks, for each coordinate,
// one input holding it. Where several inputs hold it (free or dependent bits), it prefers the
// lowest bits in in_dims() order: registers before lanes before warps, zero bits never used.
LinearLayout pseudo_invert(const LinearLayout& l);
// a^-1 ∘ b: a map C from b's inputs to a's inputs with a(C(x)) == b(x) for every x: for what b's
// register/lane/warp holds, a register/lane/warp of `a` that holds it. `a` must cover every
// coordinate (surjective); both must have the same output dims (names and sizes; order may
// differ). Preference among a's inputs as in pseudo_invert.
LinearLayout invert_and_compose(const LinearLayout& a, const LinearLayout& b);

// ---- Named constructors: tessera's encodings as linear layouts. Output dims are dim0..dimR-1. ----

// A Blocked or Slice ir::Layout applied to `shape` (powers of two), exactly as
// analysis::distribute: register k is Distribution slot k (slots row-major over per-dim slot
// indices), lane = tid % warp_size, warp = tid / warp_size.
LinearLayout blocked_to_linear(const ir::Layout& layout, const std::vector<std::int64_t>& shape, int warp_size);

// The layout of a reduction's result along output dim `dim`: that dim dropped, the register bits
// that are then zero dropped (they walked only along it: one thread combines them; a register
// bit that was already zero goes too), lanes and warps that walked along it become broadcast;
// later dims renumbered (dim{d+1} becomes dim{d}).
// blocked_to_linear(slice_layout(L, d), shape without d) == slice(blocked_to_linear(L, shape), d).
LinearLayout slice(const LinearLayout& l, int dim);

// mma.sync m16n8 accumulator (f32/i32 C and D) over shape {M, N} (M % 16 == 0, N % 8 == 0) with
// warps_per_cta {Wm, Wn}, warp id = wm * Wn + wn. Register order: the fragment's column pair,
// then its row half, then repetitions along N, then along M.
LinearLayout mma_v2_accumulator(const std::vector<std::int64_t>& shape, const std::vector<int>& warps_per_cta);
// mma.sync A (op_idx 0, shape {M, K}) or B (op_idx 1, shape {K, N}) fragments for elements of
// `element_bits` (16: m16n8k16 f16/bf16, 8: m16n8k32 int8/fp8, 32: m16n8k8 tf32), warps as in
// the accumulator (A is broadcast over the warps along N, B over those along M). Register order:
// the PTX fragment's element index a_i / b_i, then repetitions along K, then along M (A) / N (B).
LinearLayout mma_v2_operand(int op_idx, int element_bits, const std::vector<std::int64_t>& shape,
                            const std::vector<int>& warps_per_cta);
// wgmma m64nNk16 accumulator over {M, N}: warp w of a warpgroup owns rows 16*(w%4) .. +15 with
// the m16n8 accumulator pattern over N/8 column groups (PTX register d[i]: col pair, row half,
// column group). num_warps % 4 == 0; further warpgroups tile M in steps of 64 while M allows,
// then split N; M repeats in registers beyond that.
LinearLayout wgmma_accumulator(const std::vector<std::int64_t>& shape, int num_warps);

// An NVMMA shared-memory tile: input "offset" (element offset in the buffer) to {dim0 = row,
// dim1 = col} of shape {rows, cols}, cols contiguous (or rows contiguous when `transposed`: the
// buffer holds the transpose). swizzle_bytes 0: plain row-major. 32/64/128: the buffer is split
// into column blocks swizzle_bytes wide, each rows x swizzle_bytes row-major, and within a block
// the 16-byte chunk index (address bits 4..) is XORed with address bits 7.. (CUTLASS
// Swizzle<log2(swizzle_bytes/16), 4, 3>, what TMA and wgmma use): chunk ^= (row / (128 /
// swizzle_bytes)) % (swizzle_bytes / 16). Needs rows % 8 == 0 and cols * bytes % swizzle_bytes == 0.
LinearLayout nvmma_shared(const std::vector<std::int64_t>& shape, int element_bits, int swizzle_bytes,
                          bool transposed = false);
// The swizzle width for rows of `contiguous_row_bytes` contiguous bytes: 128 if that is a
// multiple of 128, else 64, else 32 (multiples of those), else 0 (no swizzle).
int swizzle_bytes_for(std::int64_t contiguous_row_bytes);

// ---- Conversions ----

struct ConversionPlan {
  enum class Kind {
    Identity,             // same layout: nothing to do
    RegisterPermutation,  // each thread already holds what it needs: rename registers
    IntraWarp,            // each warp holds what it needs: warp shuffles
    SharedMemory,         // data crosses warps: through shared memory
  } kind = Kind::SharedMemory;
  // For Identity, RegisterPermutation and IntraWarp: a linear map from the destination's
  // (register, lane, warp) to a source (register, lane, warp) holding the same element, with the
  // warp unchanged (IntraWarp) or warp and lane unchanged (RegisterPermutation). For SharedMemory:
  // invert_and_compose(src, dst), for information.
  LinearLayout source;
  // IntraWarp and RegisterPermutation: per destination register r, the source register and the
  // source lane that lane 0 of warp 0 reads: source(r, 0, 0).
  std::vector<std::int64_t> src_register, src_lane;
  // IntraWarp: true when every destination register is one `shfl.xor` away: the source lane is
  // lane ^ src_lane[r] and the source register src_register[r] whatever the lane.
  bool xor_shuffles = false;
  // The source (register, lane, warp) of destination (reg, lane, warp).
  std::vector<std::int64_t> source_of(std::int64_t reg, std::int64_t lane, std::int64_t warp) const;
};
std::string_view to_string(ConversionPlan::Kind k);

// Classifies the conversion from `src` to `dst` (both over register/lane/warp, same output dims;
// src must hold every coordinate).
ConversionPlan plan_conversion(const LinearLayout& src, const LinearLayout& dst);

}  // namespace tessera::analysis
