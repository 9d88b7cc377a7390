// Layout math shared by the layout pass and the lowering: the default blocked layout of a shape,
// and which elements each thread owns under a layout.
//
// Under a blocked layout applied to a shape S (a slice layout applies its parent to S with a 1
// inserted at the slice dim), thread t owns, along each dim d, the indices
//   (base_d(t) + off_d(j)) mod S_d   for its slots j = 0 .. n_d-1, where
//   base_d(t) = (warp_d(t) * threads_per_warp_d * rep_d + lane_d(t)) * size_per_thread_d,
//   off_d(j)  = (g / rep_d) * cta_tile_d + (g % rep_d) * spt_d * tpw_d + j % spt_d,  g = j / spt_d,
//   cta_tile_d = spt_d * tpw_d * rep_d * wpc_d,   n_d = min(spt_d * r_d * max(1, S_d / cta_tile_d), S_d),
// where rep_d is the layout's lane_repeat along d (1 but for tensor-core accumulators) and
// r_d = min(rep_d, max(1, S_d / (spt_d * tpw_d))) the repeats that fit the dim.
// lane_d/warp_d decompose the lane and warp ids along `order` (order[0] varies fastest). A shape
// smaller than the CTA tile is replicated: several threads own the same element. A thread's slots
// are numbered row-major over the per-dim slot indices, so consecutive slots along the last dim
// are consecutive elements in memory for a row-major tile: that is what vectorizes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "jit/ir/ir.hpp"
#include "jit/ir/types.hpp"

namespace tessera::analysis {

// The blocked layout tessera uses for a rank-r tile of `shape` in a program of `num_warps` warps
// of `warp_size` threads: `vector` contiguous elements per thread along the last dim, threads then
// warps spread from the last dim to the first.
ir::Layout default_blocked_layout(const std::vector<std::int64_t>& shape, int num_warps, int warp_size,
                                  int vector);
// The same with `vector` elements along order[0] and threads then warps spread along `order`
// (fastest first): the layout that makes a warp touch contiguous memory along order[0].
ir::Layout blocked_layout(const std::vector<std::int64_t>& shape, int num_warps, int warp_size, int vector,
                          const std::vector<int>& order);

ir::Layout slice_layout(const ir::Layout& parent, int dim);

// Whether `dot` runs on mma.sync m16n8 tensor-core instructions (warps of 32; f16 or bf16 operands,
// k16; f32 with input_precision tf32 or tf32x3, k8; i8 with K a multiple of 32, k32) rather than as fma loops from shared
// memory (f32 "ieee", warps of 64).
bool dot_uses_mma(const ir::Op& dot, int warp_size);
// The layout of an mma.sync m16n8 accumulator of an M x N tile (M, N >= 16, powers of two) as a
// blocked layout: size_per_thread [1,2], threads_per_warp [8,4], warps_per_cta [Wm,Wn]. Lane l of
// warp (wm, wn) holds rows 8*wm + l/4 + 8*Wm*i and columns 8*wn + 2*(l%4) + {0,1} + 8*Wn*j: the
// PTX fragment c0..c3 of one m16n8 tile is row slots (2i, 2i+1) x column slots (2j, 2j+1), its
// fragment row r <-> tile row 8*wm + r%8 + 8*Wm*(2i + r/8), fragment column c <-> tile column
// 8*wn + c + 8*Wn*j. The tensor core does not care which tile row a fragment row is, so long as
// the operands are fetched with the same map (lower_dot.cpp). Wm <= M/16 so that row slots pair.
ir::Layout mma_v2_layout(const std::vector<std::int64_t>& shape, int num_warps);

// What the layout pass needs to know of the target (the rest of a pass's context is the module's
// num_warps and num_stages).
struct TargetInfo {
  int warp_size = 32;
  bool wgmma = false;  // warpgroup MMA (sm_90a; the host target emulates it)
};
// The one check of a target's name (the compile, tessera-opt and every pass context ask it):
// sm_NN, sm_NNa, gfxNNN, host and host64 (the host SIMT targets, backends/host/); any other name
// is a tessera::Error naming the known ones.
TargetInfo target_info(const std::string& target_name);

// Whether `dot` can run on wgmma.mma_async m64nNk16 (f16/bf16 operands only, warps of 32, whole
// warpgroups of 4 warps, every warp 16 rows of each 64-row slab: M a multiple of 16 * num_warps,
// N <= 256, K a multiple of 16). The layout pass marks such dots with the attribute "wgmma"
// on a target that has it; the shared-memory plan and the lowering read the mark.
bool wgmma_eligible(const ir::Op& dot, int num_warps, int warp_size);
bool dot_uses_wgmma(const ir::Op& dot);
// The wgmma accumulator in wgmma's own fragment order, as a blocked layout with a lane repeat:
// size_per_thread [1,2], threads_per_warp [8,4], lane_repeat [2,1], warps_per_cta [num_warps,1].
// Lane l of warp w holds rows 16*w + 8*h + l/4 + 16*num_warps*s (h < 2: row slot 2s + h) and
// columns 2*(l%4) + {0,1} + 8*j: warp w%4 of warpgroup g = w/4 holds rows 16*(w%4) + 8*h + l/4
// of the 64-row slab s*(num_warps/4) + g, which is the PTX fragment of D. So A's rows are stored
// in tile order (lower_wgmma.cpp): an M-major A's 16-byte copies keep the lane order that full
// cp.async throughput needs (notes/tensor-cores.md, session 17).
ir::Layout wgmma_layout(const std::vector<std::int64_t>& shape, int num_warps);
// Whether a wgmma dot reads its A from registers rather than shared memory: A is a register tile
// in the wgmma layout of its own shape and the dot's warps (attention's P, computed elementwise
// from the first dot's accumulator). wgmma's register A fragment of a k16 step is, per warp of the
// warpgroup, mma.m16n8k16's (PTX ISA), and accumulator registers 8kk..8kk+7 of that layout hold
// exactly it: columns 16kk.., rows 16*(w%4) + l/4 (+8) of the warpgroup's slab. No stores or
// fence then stand between the two dots (lower_wgmma.cpp).
bool wgmma_a_in_registers(const ir::Op& dot);
// The accumulator layout of a tensor-core dot (wgmma, else mma.sync); a none layout for the fma
// lowering.
ir::Layout dot_accumulator_layout(const ir::Op& dot, int num_warps, int warp_size);

// Along `axis` of a blocked tile: the lanes and the warps that hold distinct positions (fewer
// than threads_per_warp / warps_per_cta where the tile is smaller than the layout's CTA tile and
// threads repeat it), and the lane-id distance between neighbours along the axis. What a
// reduction or scan exchanges across lanes (shuffles) and across warps (shared memory).
std::int64_t lanes_along_axis(const ir::Type& t, int axis);
std::int64_t warps_along_axis(const ir::Type& t, int axis);
std::int64_t lane_stride(const ir::Layout& l, int axis);

struct Distribution {
  std::vector<std::int64_t> shape;     // the parent-rank shape (slice dim inserted as 1)
  std::vector<std::int64_t> slots;     // n_d per parent dim
  std::vector<std::int64_t> cta_tile;
  ir::Layout layout;                   // the blocked parent
  int slice_dim = -1;

  std::int64_t num_slots() const;
  // Per-dim slot indices of slot k (row-major over `slots`).
  std::vector<std::int64_t> slot_coords(std::int64_t k) const;
  std::int64_t slot_index(const std::vector<std::int64_t>& coords) const;
  // off_d(j) of the comment above.
  std::int64_t offset(int d, std::int64_t j) const;
  // Host evaluation (tests, conversions): the element index along dim d owned by thread `tid`.
  std::int64_t base(int d, int tid, int warp_size) const;
};

Distribution distribute(const ir::Type& t);

// The elements of a tile that each thread holds contiguously along the last dim as consecutive
// slots, starting at slots that are multiples of it, at most 16 bytes (1 for a slice layout or
// one whose threads run down another dim first): the unit a conversion through shared memory
// writes or reads as one vector.
std::int64_t row_run(const ir::Type& t);

}  // namespace tessera::analysis
