// Attention forward (FlashAttention-2's loop, as Triton's tutorial 06): O = softmax(Q·Kᵀ·scale)·V
// per (batch, head), causal or not, without materializing the N x N scores. Shared by the
// example (attention.cpp) and the tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include <tessera/tessera.hpp>

namespace tessera_examples {
namespace ts = tessera;

// Q, K, V and O are [heads, n, HEAD_D] row-major (heads: batch x heads, any n). Program (i, h)
// takes BLOCK_M query rows of head h and walks the keys in blocks of BLOCK_N, keeping a running
// row max m, a running sum l of exp2 of the scaled scores less m, and the unnormalized output
// acc, both rescaled by exp2(m_old - m_new) when the max grows. P = exp2(scores - m) is cast to
// In as the second dot's left operand (chained dots). With CAUSAL, key j is seen by query i only
// if j <= i, and the loop stops after the block holding the program's last row. O in In.
// Offsets are 32-bit: heads * n * HEAD_D must stay below 2^31.
// The attention kernels' meta-parameters: BLOCK_M, BLOCK_N, HEAD_D, CAUSAL and EVEN (n a multiple
// of BLOCK_M and BLOCK_N: no block of queries or keys is partial, so that the loops' loads and,
// without CAUSAL, their scores take no mask).
struct AttentionMeta {
  int block_m, block_n, head_dim;
  bool causal;
};
inline AttentionMeta attention_meta() {
  return {static_cast<int>(ts::meta("BLOCK_M")), static_cast<int>(ts::meta("BLOCK_N")),
          static_cast<int>(ts::meta("HEAD_D")), ts::meta("CAUSAL") != 0};
}

// The query block of program (i, h) in the kernels that walk keys for a block of queries (the
// forward, dQ): with CAUSAL the last blocks see the most keys, so they take the first programs
// and the grid's tail is the cheap first blocks; otherwise block i.
inline ts::Int program_query_block(bool causal) {
  return causal ? ts::num_programs(0) - 1 - ts::program_id(0) : ts::program_id(0);
}

// Whether the scores of keys [k0, k0 + BN) against query rows [r0, r0 + BM) need their mask: a
// key past n, a row past n (where `rows_count`: the backward's P), or with CAUSAL a key past a
// row (the block's last key after its first row). Other blocks skip the select (behind an if).
inline auto block_needs_mask(ts::Int k0, int BN, ts::Int r0, int BM, ts::Int n, bool causal, bool rows_count) {
  auto partial = k0 + BN > n;
  if (rows_count) partial = partial | (r0 + BM > n);
  if (causal) partial = partial | (k0 + BN > r0 + 1);
  return partial;
}

struct AttentionRows {
  ts::Int head;        // the offset of this program's head in Q, K, V and O
  ts::Int rows, dims;  // its query rows [BLOCK_M] and the head dimensions [HEAD_D]
  ts::Float m, l, acc;
};
template <class In>
AttentionRows attention_rows(ts::Ptr<In> q, ts::Ptr<In> k, ts::Ptr<In> v, ts::Int n, ts::Float scale) {
  const auto [BM, BN, D, causal] = attention_meta();
  const float inf = std::numeric_limits<float>::infinity();
  auto head = ts::program_id(1) * n * D;
  auto block = program_query_block(causal);
  auto rows = block * BM + ts::arange(0, BM);
  auto dims = ts::arange(0, D);
  auto q_tile = ts::load(q + head + rows.col() * D + dims.row(), rows.col() < n, 0);
  auto scale_log2 = scale * ts::kLog2e;  // exp(x) = exp2(x * log2(e))
  auto m = ts::full<float>({BM}, -inf);
  auto l = ts::zeros<float>({BM});
  auto acc = ts::zeros<float>({BM, D});
  auto keys_end = causal ? ts::minimum(n, (block + 1) * BM) : n;
  // With EVEN no key is past n: no mask on the loads nor on the scores (sm_90a, fp16, head_dim 128,
  // 64x64/w4/s2: 1184 -> 1064 SASS instructions a thread, ptxas 13.0). H100, session 41, TFLOP/s
  // with / without: fp16 B4 H32 N4096 D128 64x64/w4/s2 455.8 / 424.1, 128x32/w8/s2 450.8 / 424.6,
  // D64 64x64/w4/s2 430.8 / 376.3. Not with CAUSAL, which keeps its mask: unmasked loads took the
  // op's bf16 D128 causal forward (128x32/w8/s2) from 1741 / 1737 to 1786 / 1831 us.
  const bool even = ts::meta("EVEN") != 0 && !causal;
  const bool positive_scale = ts::meta("SCALE_POSITIVE") != 0;
  ts::for_range(0, keys_end, BN, [&](ts::Int j0) {
    auto keys = j0 + ts::arange(0, BN);
    auto k_t = even ? ts::load(k + head + keys.row() * D + dims.col())  // D x BN
                    : ts::load(k + head + keys.row() * D + dims.col(), keys.row() < n, 0);
    // Key 0 is seen by every row from the first block on, so m is finite there and
    // exp2(m - m_new) is never exp2(-inf - -inf).
    // With SCALE_POSITIVE the row max is taken on the raw products and scaled once a row: a
    // product with a scale > 0 is monotonic in its rounding, so max(x) * c == max(x * c) bit for
    // bit, and exp2(x * c - m) becomes one FFMA a score where the scaled max needed its FMUL
    // first (sm_90a, fp16, head_dim 128, 64x64/w4/s2: 30 FMUL a thread fewer, 1064 -> 1040 SASS
    // instructions). Another scale (negative, zero) scales first and masks after: -inf times it
    // would be +inf or NaN.
    auto s = positive_scale ? ts::dot(q_tile, k_t) : ts::dot(q_tile, k_t) * scale_log2;
    if (!even) {
      ts::if_(block_needs_mask(j0, BN, block * BM, BM, n, causal, false), [&] {
        auto seen = keys.row() < n;
        if (causal) seen = seen & (keys.row() <= rows.col());
        s = ts::where(seen, s, -inf);
      });
    }
    auto m_new = ts::maximum(m, positive_scale ? ts::max(s, 1) * scale_log2 : ts::max(s, 1));
    // fast_exp2f (ex2.approx.ftz, as FlashAttention's softmax): a P below 2^-126 is 0, as it is
    // once cast to f16, and beside the row's exp2(0) = 1 in l; three SASS instructions fewer a score.
    auto p = ts::fast_exp2f(positive_scale ? ts::fma(s, scale_log2, -m_new.col()) : s - m_new.col());
    auto alpha = ts::fast_exp2f(m - m_new);
    l = l * alpha + ts::sum(p, 1);
    auto v_tile = even ? ts::load(v + head + keys.col() * D + dims.row())
                       : ts::load(v + head + keys.col() * D + dims.row(), keys.col() < n, 0);
    acc = ts::dot(p.template to<In>(), v_tile, acc * alpha.col());
    m = m_new;
  });
  return {head, rows, dims, m, l, acc};
}

template <class In>
auto make_attention(const char* name = "attention") {
  return ts::kernel(name, [](ts::Ptr<In> q, ts::Ptr<In> k, ts::Ptr<In> v, ts::Ptr<In> o, ts::Int n, ts::Float scale) {
    const int D = static_cast<int>(ts::meta("HEAD_D"));
    auto r = attention_rows(q, k, v, n, scale);
    ts::store(o + r.head + r.rows.col() * D + r.dims.row(), (r.acc / r.l.col()).template to<In>(), r.rows.col() < n);
  });
}

// The forward for training: O as make_attention's, and each row's log-sum-exp of the scaled
// scores in base 2 (lse[h, i] = m + log2(l), f32 [heads, n]), which the backward kernels take
// to recompute P = exp2(scores * scale * log2(e) - lse) without a second pass over the keys.
template <class In>
auto make_attention_fwd(const char* name = "attention_fwd") {
  return ts::kernel(name, [](ts::Ptr<In> q, ts::Ptr<In> k, ts::Ptr<In> v, ts::Ptr<In> o, ts::Ptr<float> lse, ts::Int n,
                             ts::Float scale) {
    const int D = static_cast<int>(ts::meta("HEAD_D"));
    auto r = attention_rows(q, k, v, n, scale);
    ts::store(o + r.head + r.rows.col() * D + r.dims.row(), (r.acc / r.l.col()).template to<In>(), r.rows.col() < n);
    ts::store(lse + ts::program_id(1) * n + r.rows, r.m + ts::log2(r.l), r.rows < n);
  });
}

// ---- The backward pass (FlashAttention-2's, as Triton's tutorial 06): three kernels after
// make_attention_fwd. P is recomputed from the forward's lse; dS = P * (dP - delta), where
// dP = dO·Vᵀ and delta = rowsum(O * dO); dV = Pᵀ·dO, dK = scale · dSᵀ·Q, dQ = scale · dS·K.

// delta[h, i] = sum over d of O[h, i, d] * dO[h, i, d], f32 [heads, n]. Program (i, h): BLOCK_M rows.
template <class In>
auto make_attention_bwd_delta(const char* name = "attention_bwd_delta") {
  return ts::kernel(name, [](ts::Ptr<In> o, ts::Ptr<In> d_o, ts::Ptr<float> delta, ts::Int n) {
    const int BM = static_cast<int>(ts::meta("BLOCK_M")), D = static_cast<int>(ts::meta("HEAD_D"));
    auto rows = ts::program_id(0) * BM + ts::arange(0, BM);
    auto offs = ts::program_id(1) * n * D + rows.col() * D + ts::arange(0, D).row();
    auto mask = rows.col() < n;
    auto prod = ts::load(o + offs, mask, 0).template to<float>() * ts::load(d_o + offs, mask, 0).template to<float>();
    ts::store(delta + ts::program_id(1) * n + rows, ts::sum(prod, 1), rows < n);
  });
}

// dK and dV of BLOCK_N keys of head h (program (j, h)), summed over the query blocks that see
// them. The scores are computed transposed (Sᵀ = K·Qᵀ, [BLOCK_N, BLOCK_M]) so that Pᵀ and dSᵀ
// are the left operands of the dots that take them, as P is in the forward; Q and dO are loaded
// once as [BLOCK_M, HEAD_D] and read in both orientations (transposed for the scores and
// dPᵀ = V·dOᵀ, as loaded for dV += Pᵀ·dO and dK += dSᵀ·Q). With CAUSAL the loop starts at the
// query block holding the program's first key.
template <class In>
auto make_attention_bwd_dkdv(const char* name = "attention_bwd_dkdv") {
  return ts::kernel(name, [](ts::Ptr<In> q, ts::Ptr<In> k, ts::Ptr<In> v, ts::Ptr<In> d_o, ts::Ptr<float> lse,
                             ts::Ptr<float> delta, ts::Ptr<In> dk, ts::Ptr<In> dv, ts::Int n, ts::Float scale) {
    const auto [BM, BN, D, causal] = attention_meta();
    const bool even = ts::meta("EVEN") != 0;
    auto head = ts::program_id(1) * n * D;
    auto stats = ts::program_id(1) * n;
    auto keys = ts::program_id(0) * BN + ts::arange(0, BN);
    auto dims = ts::arange(0, D);
    auto kv_offs = head + keys.col() * D + dims.row();
    auto k_tile = ts::load(k + kv_offs, keys.col() < n, 0);  // BN x D
    auto v_tile = ts::load(v + kv_offs, keys.col() < n, 0);
    auto dk_acc = ts::zeros<float>({BN, D});
    auto dv_acc = ts::zeros<float>({BN, D});
    auto scale_log2 = scale * ts::kLog2e;
    auto query_block = [&](ts::Int i0) {
      auto rows = i0 + ts::arange(0, BM);
      auto r_offs = head + rows.col() * D + dims.row();  // BM x D
      // Each of Q and dO is loaded once and read by two dots, once transposed: the pipeline
      // pass copies it into one ring that the transposed dot reads through smem_trans.
      auto q_tile = even ? ts::load(q + r_offs) : ts::load(q + r_offs, rows.col() < n, 0);
      auto do_tile = even ? ts::load(d_o + r_offs) : ts::load(d_o + r_offs, rows.col() < n, 0);
      auto lse_i = even ? ts::load(lse + stats + rows) : ts::load(lse + stats + rows, rows < n, 0.0f);
      auto delta_i = even ? ts::load(delta + stats + rows) : ts::load(delta + stats + rows, rows < n, 0.0f);
      auto p_t = ts::fast_exp2f(ts::dot(k_tile, ts::trans(q_tile)) * scale_log2 - lse_i.row());  // BN x BM
      if (causal || !even) {
        ts::if_(block_needs_mask(ts::program_id(0) * BN, BN, i0, BM, n, causal, true), [&] {
          auto seen = (rows.row() < n) & (keys.col() < n);
          if (causal) seen = seen & (keys.col() <= rows.row());
          p_t = ts::where(seen, p_t, 0.0f);
        });
      }
      dv_acc = ts::dot(p_t.template to<In>(), do_tile, dv_acc);
      auto ds_t = p_t * (ts::dot(v_tile, ts::trans(do_tile)) - delta_i.row());
      dk_acc = ts::dot(ds_t.template to<In>(), q_tile, dk_acc);
    };
    if (causal) ts::for_range((ts::program_id(0) * BN / BM) * BM, n, BM, query_block);
    else ts::for_range(0, n, BM, query_block);
    ts::store(dk + kv_offs, (dk_acc * scale).template to<In>(), keys.col() < n);
    ts::store(dv + kv_offs, dv_acc.template to<In>(), keys.col() < n);
  });
}

// dQ of BLOCK_M query rows of head h (program (i, h)), over the key blocks they see (with
// CAUSAL, up to the block holding the program's last row, as the forward).
template <class In>
auto make_attention_bwd_dq(const char* name = "attention_bwd_dq") {
  return ts::kernel(name, [](ts::Ptr<In> q, ts::Ptr<In> k, ts::Ptr<In> v, ts::Ptr<In> d_o, ts::Ptr<float> lse,
                             ts::Ptr<float> delta, ts::Ptr<In> dq, ts::Int n, ts::Float scale) {
    const auto [BM, BN, D, causal] = attention_meta();
    const bool even = ts::meta("EVEN") != 0;
    auto head = ts::program_id(1) * n * D;
    auto stats = ts::program_id(1) * n;
    auto block = program_query_block(causal);
    auto rows = block * BM + ts::arange(0, BM);
    auto dims = ts::arange(0, D);
    auto r_offs = head + rows.col() * D + dims.row();
    auto q_tile = ts::load(q + r_offs, rows.col() < n, 0);  // BM x D
    auto do_tile = ts::load(d_o + r_offs, rows.col() < n, 0);
    auto lse_i = ts::load(lse + stats + rows, rows < n, 0.0f);
    auto delta_i = ts::load(delta + stats + rows, rows < n, 0.0f);
    auto dq_acc = ts::zeros<float>({BM, D});
    auto scale_log2 = scale * ts::kLog2e;
    auto keys_end = causal ? ts::minimum(n, (block + 1) * BM) : n;
    ts::for_range(0, keys_end, BN, [&](ts::Int j0) {
      auto keys = j0 + ts::arange(0, BN);
      auto t_offs = head + keys.row() * D + dims.col();  // D x BN
      auto k_offs = head + keys.col() * D + dims.row();  // BN x D, read twice
      auto k_tile = even ? ts::load(k + k_offs) : ts::load(k + k_offs, keys.col() < n, 0);
      auto v_t = even ? ts::load(v + t_offs) : ts::load(v + t_offs, keys.row() < n, 0);
      auto p = ts::fast_exp2f(ts::dot(q_tile, ts::trans(k_tile)) * scale_log2 - lse_i.col());  // BM x BN
      if (causal || !even) {
        ts::if_(block_needs_mask(j0, BN, block * BM, BM, n, causal, true), [&] {
          auto seen = (keys.row() < n) & (rows.col() < n);
          if (causal) seen = seen & (keys.row() <= rows.col());
          p = ts::where(seen, p, 0.0f);
        });
      }
      auto ds = p * (ts::dot(do_tile, v_t) - delta_i.col());
      dq_acc = ts::dot(ds.template to<In>(), k_tile, dq_acc);
    });
    ts::store(dq + r_offs, (dq_acc * scale).template to<In>(), rows.col() < n);
  });
}

struct AttentionConfig {
  std::int64_t block_m = 128, block_n = 64;
  int num_warps = 8, num_stages = 1;
  int maxnreg = 0;  // registers per thread at most (CompileOptions::maxnreg); 0: ptxas decides
};

// Head_dim above 64: 128 query rows per program on 8 warps, keys in blocks of 32 (64 spills
// 52-64 bytes on sm_80 there: the O accumulator alone is 64 registers a thread). Head_dim 64: 64
// query rows on 4 warps, keys by 64 (two or more programs per SM: 64x64/w4/s2 350.9 TFLOP/s
// against 334.7 for 128x64/w8/s2 on an H100, 325.9 against 312.7 on the H200; session 32).
// num_stages = 2: Q stored into shared memory once, K and V copied one block ahead into rings
// (pipeline_loads.hpp); at head_dim 128 that took 169 registers on sm_90a and 182 on sm_80
// against 214 and 243 at num_stages = 1, and 128 on sm_90a once P was staged from the layout it
// is computed in (ptxas 13.0, session 31).
inline AttentionConfig attention_config(std::int64_t head_dim) {
  if (head_dim > 64) return {.block_m = 128, .block_n = 32, .num_warps = 8, .num_stages = 2};
  return {.block_m = 64, .block_n = 64, .num_warps = 4, .num_stages = 2};
}

// The launch of every attention kernel but for the forward's scale: a program per BLOCK_M query
// rows and per head (the backward's attention_bwd_options changes the grid).
inline ts::LaunchOptions attention_launch(std::int64_t heads, std::int64_t n, std::int64_t head_dim, bool causal,
                                          const AttentionConfig& cfg, ts::Executor ex) {
  const bool even = n % cfg.block_m == 0 && n % cfg.block_n == 0;
  return {.grid = {(n + cfg.block_m - 1) / cfg.block_m, heads},
          .meta = {{"BLOCK_M", cfg.block_m}, {"BLOCK_N", cfg.block_n}, {"HEAD_D", head_dim}, {"CAUSAL", causal ? 1 : 0},
                   {"EVEN", even ? 1 : 0}},
          .num_warps = cfg.num_warps,
          .num_stages = cfg.num_stages,
          .executor = ex,
          .compile = {.maxnreg = cfg.maxnreg}};
}

// The forward kernels' launch (make_attention, make_attention_fwd), for the scale they will be
// given: SCALE_POSITIVE (scale > 0) lets them take each row's max before the scale (attention_rows).
inline ts::LaunchOptions attention_options(std::int64_t heads, std::int64_t n, std::int64_t head_dim, bool causal,
                                           float scale, const AttentionConfig& cfg = {},
                                           ts::Executor ex = ts::Executor::Auto) {
  ts::LaunchOptions o = attention_launch(heads, n, head_dim, causal, cfg, ex);
  o.meta.emplace_back("SCALE_POSITIVE", scale > 0 ? 1 : 0);
  return o;
}

// The backward's tiles (dK/dV: BLOCK_N keys a program, BLOCK_M query rows a step; dQ and delta:
// BLOCK_M rows a program, BLOCK_N keys a step), by the target the kernels compile for
// (ts::target_name()). dK/dV holds two f32 [BLOCK_N, HEAD_D] accumulators.
// - sm_90a: dK/dV on 4 warps (one warpgroup; every dot has 64 rows, on wgmma), 64 keys a
//   program and 32 query rows a step (64 at head_dim 128 without a mask; 3 stages at head_dim 64
//   without one),
//   dQ on 128 rows and 8 warps, 32 keys a step at head_dim 128 (64 when causal), else 64.
//   Measured on an H100 (session 34, tests/bench/torch_attention_bench.py --profile, fp16
//   B4 H32 N4096 D128 / bf16 causal): dK/dV 5.43 / 3.36 ms against 8.30 / 5.00 on 16x128/w8
//   and 6.35 / 4.05 on 32x128/w8; at D64 3.15 ms against 4.94 on 32x128/w8 and 3.58 on 64x64/w4.
//   Session 35, after Q and dO were read once (one ring each): dK/dV at D128 on 64x64/w4/s2 4.66
//   ms against 5.35 on 32x64/w4/s2 (32x128/w8 5.78, 16x64/w4 6.73); at D64 32x64/w4/s3 2.73 ms,
//   64x64/w4/s2 2.81, 64x128/w8 3.86 (fp16 B4 H32 N4096, H100).
//   dQ at 32 keys is capped at 128 registers: two programs of 8 warps a SM. Reading K once
//   (smem_trans, session 35) took it from 126 to 130 registers, one program a SM, and from 3.2
//   to 4.7 ms; capped, ptxas fits it in 126 without spills.
//   dQ at D128 3.21 ms on 128x32/w8/s2 and 4.26 on 128x64/w8/s3, but causal 3.13 and 2.47; at D64
//   1.92 on 128x64/w8/s2 against 2.29 on 128x32.
// - elsewhere (sm_80, the host targets, the interpreter): 8 warps, every dot of 128 rows, and
//   16 query rows a step for dK/dV at head_dim 128 (32 spill on sm_80: 255 registers at 16).
// ptxas 13.0 compiles each without spilling, on sm_80 and sm_90a, causal or not
// (tests/pipeline/codegen_attention_test.cpp).
struct AttentionBackwardConfig {
  AttentionConfig dkdv, dq;
};
inline AttentionBackwardConfig attention_bwd_config(std::int64_t head_dim, bool causal, std::string_view target) {
  if (target == "sm_90a") {
    const std::int64_t dq_keys = head_dim > 64 && !causal ? 32 : 64;
    // dK/dV, H100 (notes/attention.md): at head_dim 128, 64x64/w4/s2 with or without the mask
    // (causal bf16 B4 H32 N4096: 2593 us against 2784 for 32x64/w4/s2, 2825 for 32x64/w4/s3, 4176
    // for 64x64/w4/s3); at 64, 32x64/w4/s3 without it and 32x64/w4/s2 with it (causal bf16 B8
    // H16 N2048: 421 us against 426 for s3, 442 for 64x64/w4/s2).
    const AttentionConfig dkdv = head_dim > 64 ? AttentionConfig{.block_m = 64, .block_n = 64, .num_warps = 4, .num_stages = 2}
                                 : causal      ? AttentionConfig{.block_m = 32, .block_n = 64, .num_warps = 4, .num_stages = 2}
                                               : AttentionConfig{.block_m = 32, .block_n = 64, .num_warps = 4, .num_stages = 3};
    return {dkdv,
            {.block_m = 128,
             .block_n = dq_keys,
             .num_warps = 8,
             .num_stages = dq_keys == 64 && head_dim > 64 ? 3 : 2,
             .maxnreg = dq_keys == 32 ? 128 : 0}};
  }
  const AttentionConfig dq{.block_m = 128, .block_n = 32, .num_warps = 8, .num_stages = 2};
  const std::int64_t dkdv_rows = head_dim > 64 ? 16 : 32;
  return {{.block_m = dkdv_rows, .block_n = 128, .num_warps = 8, .num_stages = 2}, dq};
}

// The backward kernels' launch: a program per BLOCK_M query rows (delta, dQ) or, with by_keys, per
// BLOCK_N keys (dK and dV), and per head.
inline ts::LaunchOptions attention_bwd_options(std::int64_t heads, std::int64_t n, std::int64_t head_dim, bool causal,
                                               const AttentionConfig& cfg, bool by_keys,
                                               ts::Executor ex = ts::Executor::Auto) {
  ts::LaunchOptions o = attention_launch(heads, n, head_dim, causal, cfg, ex);
  const std::int64_t block = by_keys ? cfg.block_n : cfg.block_m;
  o.grid = {(n + block - 1) / block, heads};
  return o;
}

// The tensors of one attention forward and backward, [heads, n, head_dim] each (lse and delta:
// [heads, n] f32), as ts::Buffers or host vectors: whatever the launch takes.
template <class Tensor, class Stats>
struct AttentionTensors {
  Tensor &q, &k, &v, &o, &d_o, &dq, &dk, &dv;
  Stats &lse, &delta;
};

// The forward for training (O and lse), then delta, dK/dV and dQ for dO, on one executor, in the
// order a training step runs them. num_warps, when not 0, replaces every config's (the host tests
// run each lowering).
template <class In, class Tensor, class Stats>
void attention_forward_backward(AttentionTensors<Tensor, Stats> t, std::int64_t heads, std::int64_t n,
                                std::int64_t head_dim, float scale, bool causal, const AttentionConfig& fwd,
                                const AttentionBackwardConfig& bwd, ts::Executor ex, int num_warps = 0) {
  static auto forward = make_attention_fwd<In>();
  static auto delta = make_attention_bwd_delta<In>();
  static auto dkdv = make_attention_bwd_dkdv<In>();
  static auto dq = make_attention_bwd_dq<In>();
  auto warps = [&](ts::LaunchOptions o) {
    if (num_warps != 0) o.num_warps = num_warps;
    return o;
  };
  const auto nn = static_cast<std::int32_t>(n);
  forward[warps(attention_options(heads, n, head_dim, causal, scale, fwd, ex))](t.q, t.k, t.v, t.o, t.lse, nn, scale);
  delta[warps(attention_bwd_options(heads, n, head_dim, causal, bwd.dq, false, ex))](t.o, t.d_o, t.delta, nn);
  dkdv[warps(attention_bwd_options(heads, n, head_dim, causal, bwd.dkdv, true, ex))](t.q, t.k, t.v, t.d_o, t.lse,
                                                                                   t.delta, t.dk, t.dv, nn, scale);
  dq[warps(attention_bwd_options(heads, n, head_dim, causal, bwd.dq, false, ex))](t.q, t.k, t.v, t.d_o, t.lse, t.delta,
                                                                                t.dq, nn, scale);
}

// Row i of head h of softmax(Q·Kᵀ·scale)·V in double from the same inputs, [heads, n, d]
// row-major (the benchmark checks sampled rows).
template <class In>
std::vector<double> attention_reference_row(std::span<const In> q, std::span<const In> k, std::span<const In> v,
                                            std::int64_t n, std::int64_t d, double scale, bool causal, std::int64_t h,
                                            std::int64_t i) {
  auto at = [&](std::span<const In> t, std::int64_t row, std::int64_t col) {
    return static_cast<double>(static_cast<float>(t[static_cast<std::size_t>((h * n + row) * d + col)]));
  };
  const std::int64_t keys = causal ? i + 1 : n;
  std::vector<double> s(static_cast<std::size_t>(keys)), o(static_cast<std::size_t>(d));
  double mx = -std::numeric_limits<double>::infinity(), sum = 0;
  for (std::int64_t j = 0; j < keys; ++j) {
    double dotp = 0;
    for (std::int64_t t = 0; t < d; ++t) dotp += at(q, i, t) * at(k, j, t);
    s[static_cast<std::size_t>(j)] = dotp * scale;
    mx = std::max(mx, s[static_cast<std::size_t>(j)]);
  }
  for (double x : s) sum += std::exp(x - mx);
  for (std::int64_t j = 0; j < keys; ++j) {
    const double p = std::exp(s[static_cast<std::size_t>(j)] - mx) / sum;
    for (std::int64_t t = 0; t < d; ++t) o[static_cast<std::size_t>(t)] += p * at(v, j, t);
  }
  return o;
}

// Every row of every head, [heads, n, d].
template <class In>
std::vector<double> attention_reference(std::span<const In> q, std::span<const In> k, std::span<const In> v,
                                        std::int64_t heads, std::int64_t n, std::int64_t d, double scale, bool causal) {
  std::vector<double> o;
  o.reserve(static_cast<std::size_t>(heads * n * d));
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < n; ++i) {
      const auto row = attention_reference_row(q, k, v, n, d, scale, causal, h, i);
      o.insert(o.end(), row.begin(), row.end());
    }
  return o;
}

// dQ, dK and dV of softmax(Q·Kᵀ·scale)·V for the upstream gradient dO, in double from the
// same inputs ([heads, n, d] row-major each), computed from the exact P and O.
struct AttentionGradients {
  std::vector<double> dq, dk, dv;
};
template <class In>
AttentionGradients attention_backward_reference(std::span<const In> q, std::span<const In> k, std::span<const In> v,
                                                std::span<const In> d_o, std::int64_t heads, std::int64_t n,
                                                std::int64_t d, double scale, bool causal) {
  const auto count = static_cast<std::size_t>(heads * n * d);
  AttentionGradients g{std::vector<double>(count), std::vector<double>(count), std::vector<double>(count)};
  auto at = [&](std::span<const In> t, std::int64_t h, std::int64_t row, std::int64_t col) {
    return static_cast<double>(static_cast<float>(t[static_cast<std::size_t>((h * n + row) * d + col)]));
  };
  auto idx = [&](std::int64_t h, std::int64_t row, std::int64_t col) {
    return static_cast<std::size_t>((h * n + row) * d + col);
  };
  std::vector<double> p(static_cast<std::size_t>(n)), dp(static_cast<std::size_t>(n));
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t keys = causal ? i + 1 : n;
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (std::int64_t j = 0; j < keys; ++j) {
        double s = 0;
        for (std::int64_t t = 0; t < d; ++t) s += at(q, h, i, t) * at(k, h, j, t);
        p[static_cast<std::size_t>(j)] = s * scale;
        mx = std::max(mx, s * scale);
      }
      for (std::int64_t j = 0; j < keys; ++j) sum += std::exp(p[static_cast<std::size_t>(j)] - mx);
      for (std::int64_t j = 0; j < keys; ++j) p[static_cast<std::size_t>(j)] = std::exp(p[static_cast<std::size_t>(j)] - mx) / sum;
      // delta = rowsum(O * dO) with O = P·V.
      double delta = 0;
      for (std::int64_t t = 0; t < d; ++t) {
        double o = 0;
        for (std::int64_t j = 0; j < keys; ++j) o += p[static_cast<std::size_t>(j)] * at(v, h, j, t);
        delta += o * at(d_o, h, i, t);
      }
      for (std::int64_t j = 0; j < keys; ++j) {
        double s = 0;
        for (std::int64_t t = 0; t < d; ++t) s += at(d_o, h, i, t) * at(v, h, j, t);
        dp[static_cast<std::size_t>(j)] = s;
      }
      for (std::int64_t j = 0; j < keys; ++j) {
        const double pj = p[static_cast<std::size_t>(j)];
        const double ds = pj * (dp[static_cast<std::size_t>(j)] - delta);
        for (std::int64_t t = 0; t < d; ++t) {
          g.dv[idx(h, j, t)] += pj * at(d_o, h, i, t);
          g.dq[idx(h, i, t)] += scale * ds * at(k, h, j, t);
          g.dk[idx(h, j, t)] += scale * ds * at(q, h, i, t);
        }
      }
    }
  return g;
}

}  // namespace tessera_examples
