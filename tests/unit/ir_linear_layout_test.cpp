// Linear layouts (jit/analysis/linear_layout.hpp): the GF(2) algebra checked by brute force, the
// named constructors against independent references (analysis::distribute for blocked and
// slice layouts; the PTX ISA fragment formulas and the CUTLASS swizzle, written out here as
// loops), the text form, and conversion plans.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "jit/analysis/layouts.hpp"
#include "jit/analysis/linear_layout.hpp"
#include "jit/analysis/register_conversion.hpp"
#include "tessera/error.hpp"

using namespace tessera;
using namespace tessera::analysis;
using Catch::Contains;
using I = std::int64_t;
using V = std::vector<I>;

namespace {

// A small deterministic generator: the sweeps are the same on every run.
struct Rng {
  std::uint64_t s = 0x9E3779B97F4A7C15ull;
  int operator()(int n) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return static_cast<int>(s % static_cast<std::uint64_t>(n));
  }
};

ir::Type tile(const V& shape, const ir::Layout& l) {
  ir::Type t = ir::Type::scalar(DType::F32).with_shape(shape);
  t.layout = l;
  return t;
}

// The reference: what distribute() says thread `tid` holds in slot k (parent-rank coordinates).
V dist_coords(const Distribution& d, int tid, I k, int ws) {
  V c;
  auto j = d.slot_coords(k);
  for (int dim = 0; dim < static_cast<int>(d.shape.size()); ++dim)
    c.push_back((d.base(dim, tid, ws) + d.offset(dim, j[dim])) % d.shape[dim]);
  return c;
}

// Checks `ll` against distribute(tile(shape, layout)) for every thread and slot; returns the
// number of (thread, slot) pairs compared.
I check_against_distribution(const LinearLayout& ll, const V& shape, const ir::Layout& layout, int ws) {
  auto d = distribute(tile(shape, layout));
  int warps = 1;
  for (int w : layout.warps_per_cta) warps *= w;
  REQUIRE(ll.in_size("register") == d.num_slots());
  REQUIRE(ll.in_size("lane") == ws);
  REQUIRE(ll.in_size("warp") == warps);
  I n = 0;
  for (int tid = 0; tid < warps * ws; ++tid)
    for (I k = 0; k < d.num_slots(); ++k, ++n) {
      V want = dist_coords(d, tid, k, ws);
      if (d.slice_dim >= 0) want.erase(want.begin() + d.slice_dim);
      V got = ll.apply_rlw(k, tid % ws, tid / ws);
      if (got != want) {
        INFO(to_string(ll) << " vs " << ir::to_string(layout) << " tid " << tid << " slot " << k);
        REQUIRE(got == want);
      }
    }
  return n;
}

void round_trips(const LinearLayout& l) {
  INFO(to_string(l));
  REQUIRE(parse_linear_layout(to_string(l)) == l);
}

// Every (register, lane, warp) of `l`, with `f` the reference for it.
template <class F>
void for_all_rlw(const LinearLayout& l, F&& f) {
  for (I w = 0; w < l.in_size("warp"); ++w)
    for (I ln = 0; ln < l.in_size("lane"); ++ln)
      for (I r = 0; r < l.in_size("register"); ++r) f(r, ln, w);
}

}  // namespace

TEST_CASE("linear layout: apply, product, rank and free bits", "[linear_layout]") {
  // 2 registers, then 4 lanes, then 2 registers again along one dim: the product stacks.
  auto l = LinearLayout::identity_1d(2, "register", "dim0") * LinearLayout::identity_1d(4, "lane", "dim0") *
           LinearLayout::identity_1d(2, "register", "dim0");
  REQUIRE(to_string(l) == "{register=[[1],[8]], lane=[[2],[4]]} -> [dim0=16]");
  for (I r = 0; r < 4; ++r)
    for (I ln = 0; ln < 4; ++ln) REQUIRE(l.apply({{"register", r}, {"lane", ln}}) == V{(r & 1) + 2 * ln + 8 * (r >> 1)});
  REQUIRE(l.is_bijective());
  // Broadcast: 8 more lanes that walk nowhere.
  auto b = LinearLayout::identity_1d(4, "lane", "dim0") * LinearLayout::zeros_1d(8, "lane", "dim1");
  REQUIRE(b.in_size("lane") == 32);
  REQUIRE(b.free_bits("lane") == 3);
  REQUIRE(b.is_surjective());
  REQUIRE_FALSE(b.is_injective());
  REQUIRE(b.rank() == 2);
  // Output dims side by side; unknown inputs of value 0 are fine, others are not.
  auto two = LinearLayout::identity_1d(4, "lane", "dim1") * LinearLayout::identity_1d(2, "warp", "dim0");
  REQUIRE(two.apply_rlw(0, 3, 1) == V{3, 1});
  REQUIRE_THROWS_AS(two.apply({{"register", 1}}), InternalError);
  REQUIRE_THROWS_WITH(two.apply({{"lane", 4}}), Contains("lane=4 is outside [0, 4)"));
  // Sublayouts and reorderings.
  auto t = two.transpose_outs({"dim0", "dim1"});
  REQUIRE(t.apply_rlw(0, 3, 1) == V{1, 3});
  REQUIRE(two.sublayout({"warp"}, {"dim0"}) == LinearLayout::identity_1d(2, "warp", "dim0"));
  REQUIRE(two.transpose_ins({"warp", "lane"}).in_dims()[0].name == "warp");
  REQUIRE_THROWS_WITH(two.sublayout({"block"}, {}), Contains("no input dim 'block'"));
  // Construction checks.
  using LL = LinearLayout;
  REQUIRE_THROWS_WITH(LL({}, {{"dim0", 3}}), Contains("size 3, not a power of two"));
  REQUIRE_THROWS_WITH(LL({{"lane", {{4}}}}, {{"dim0", 4}}), Contains("outside [0, 4) along 'dim0'"));
  REQUIRE_THROWS_WITH(LL({{"lane", {{1, 0}}}}, {{"dim0", 4}}), Contains("has 2 coordinates for 1 output dims"));
  REQUIRE_THROWS_WITH(LL({{"lane", {}}, {"lane", {}}}, {}), Contains("'lane' is listed twice"));
}

TEST_CASE("linear layout: compose, invert, pseudo-invert, invert_and_compose", "[linear_layout]") {
  const int ws = 32;
  auto exact = blocked_to_linear(blocked_layout({32, 64}, 4, ws, 4, {1, 0}), {32, 64}, ws);
  REQUIRE(exact.is_bijective());
  // compose with a register permutation: (exact ∘ p)(r, l, w) = exact(p(r), l, w).
  auto p = LinearLayout({{"register", {{2}, {1}, {4}, {8}}}}, {{"register", 16}}) * LinearLayout::identity_1d(32, "lane", "lane") *
           LinearLayout::identity_1d(4, "warp", "warp");
  REQUIRE(exact.in_size("register") == 16);
  auto c = compose(exact, p);
  for_all_rlw(c, [&](I r, I ln, I w) {
    I pr = ((r & 1) << 1) | ((r >> 1) & 1) | (r & ~I{3});
    REQUIRE(c.apply_rlw(r, ln, w) == exact.apply_rlw(pr, ln, w));
  });
  // invert: the inverse maps each coordinate back to the one register/lane/warp holding it.
  auto inv = invert(exact);
  REQUIRE(inv.out_dims()[0].name == "register");
  for_all_rlw(exact, [&](I r, I ln, I w) {
    auto x = exact.apply_rlw(r, ln, w);
    REQUIRE(inv.apply({{"dim0", x[0]}, {"dim1", x[1]}}) == V{r, ln, w});
  });
  // A replicated layout (an 8x8 tile over 4 warps of 32: one element per thread, warps 0 and 2
  // alike) is not invertible, but every coordinate has a holder: pseudo_invert finds one and
  // never uses the free warp bit.
  auto rep = blocked_to_linear(blocked_layout({8, 8}, 4, ws, 1, {1, 0}), {8, 8}, ws);
  REQUIRE(rep.is_surjective());
  REQUIRE_FALSE(rep.is_injective());
  REQUIRE(rep.in_size("register") == 1);
  REQUIRE(rep.free_bits("warp") == 1);
  REQUIRE(rep.free_bits("lane") == 0);
  REQUIRE_THROWS_WITH(invert(rep), Contains("not bijective"));
  auto pinv = pseudo_invert(rep);
  for (I i = 0; i < 8; ++i)
    for (I j = 0; j < 8; ++j) {
      auto h = pinv.apply({{"dim0", i}, {"dim1", j}});
      REQUIRE(h[2] <= 1);
      REQUIRE(rep.apply_rlw(h[0], h[1], h[2]) == V{i, j});
    }
  // A layout that misses coordinates has no right inverse.
  auto partial = LinearLayout({{"lane", {{1}, {0}}}}, {{"dim0", 4}});
  REQUIRE_THROWS_WITH(pseudo_invert(partial), Contains("not surjective"));
  // invert_and_compose(a, b): for what b's thread holds, where a holds it.
  auto a = blocked_to_linear(blocked_layout({64, 32}, 4, ws, 4, {1, 0}), {64, 32}, ws);
  auto bl = blocked_to_linear(blocked_layout({64, 32}, 4, ws, 2, {0, 1}), {64, 32}, ws);
  auto ac = invert_and_compose(a, bl);
  for_all_rlw(bl, [&](I r, I ln, I w) {
    auto s = ac.apply_rlw(r, ln, w);
    REQUIRE(a.apply_rlw(s[0], s[1], s[2]) == bl.apply_rlw(r, ln, w));
  });
  REQUIRE_THROWS_WITH(invert_and_compose(partial, LinearLayout::identity_1d(4, "lane", "dim0")), Contains("holds [2]"));
  REQUIRE_THROWS_WITH(invert_and_compose(a, rep), Contains("different output dims"));
}

TEST_CASE("linear layout: blocked and slice layouts match distribute", "[linear_layout]") {
  Rng rng;
  I pairs = 0;
  int configs = 0, sliced = 0;
  for (int it = 0; it < 360; ++it) {
    const int rank = 1 + it % 3;
    V shape(rank);
    int total = 0;
    for (auto& s : shape) {
      int b = rng(11);  // 1 .. 1024
      if (total + b > 13) b = std::max(0, 13 - total);
      total += b;
      s = I{1} << b;
    }
    const int nw = 1 << rng(6), ws = rng(2) ? 64 : 32, vec = 1 << rng(4);
    std::vector<int> order(rank);
    for (int d = 0; d < rank; ++d) order[d] = rank - 1 - d;
    for (int d = rank - 1; d > 0; --d) std::swap(order[d], order[rng(d + 1)]);
    auto layout = it % 5 == 0 ? default_blocked_layout(shape, nw, ws, vec) : blocked_layout(shape, nw, ws, vec, order);
    INFO("shape rank " << rank << " " << ir::to_string(layout) << " warp size " << ws);
    auto ll = blocked_to_linear(layout, shape, ws);
    pairs += check_against_distribution(ll, shape, layout, ws);
    ++configs;
    if (it % 4 == 0) round_trips(ll);
    if (rank == 1) continue;
    // Each slice: its own Distribution, and the slice of the parent's linear layout.
    for (int d = 0; d < rank; ++d) {
      V sub = shape;
      sub.erase(sub.begin() + d);
      auto sl = slice_layout(layout, d);
      auto sll = blocked_to_linear(sl, sub, ws);
      pairs += check_against_distribution(sll, sub, sl, ws);
      REQUIRE(slice(ll, d) == sll);
      ++sliced;
    }
  }
  REQUIRE(configs == 360);
  REQUIRE(sliced == 600);
  REQUIRE(pairs > 2000000);  // about 3 million (thread, slot) pairs
  REQUIRE_THROWS_WITH(blocked_to_linear(ir::Layout{}, {4}, 32), Contains("neither blocked nor a slice"));
  REQUIRE_THROWS_WITH(blocked_to_linear(default_blocked_layout({64}, 1, 32, 1), {64}, 64), Contains("not the warp size 64"));
}

TEST_CASE("linear layout: mma.sync accumulator matches the PTX fragment", "[linear_layout]") {
  for (auto [m, n] : {std::pair<I, I>{16, 8}, {32, 32}, {64, 16}, {128, 128}, {16, 64}})
    for (auto [wm, wn] : {std::pair<int, int>{1, 1}, {2, 2}, {4, 1}, {1, 4}, {2, 4}, {8, 2}}) {
      auto l = mma_v2_accumulator({m, n}, {wm, wn});
      INFO(m << "x" << n << " warps " << wm << "x" << wn << ": " << to_string(l));
      const I reps_n = std::max<I>(1, n / (8 * wn)), reps_m = std::max<I>(1, m / (16 * wm));
      REQUIRE(l.in_size("register") == 4 * reps_n * reps_m);
      REQUIRE(l.in_size("warp") == wm * wn);
      for_all_rlw(l, [&](I r, I lane, I w) {
        const I i = r % 4, rep = r / 4, rn = rep % reps_n, rm = rep / reps_n;
        const I group = lane >> 2, tig = lane % 4;
        I row = i < 2 ? group : group + 8;  // PTX: row = groupID for c0, c1, + 8 for c2, c3
        I col = tig * 2 + (i & 1);
        row = (row + 16 * (w / wn) + 16 * wm * rm) % m;
        col = (col + 8 * (w % wn) + 8 * wn * rn) % n;
        REQUIRE(l.apply_rlw(r, lane, w) == V{row, col});
      });
      round_trips(l);
    }
  REQUIRE_THROWS_WITH(mma_v2_accumulator({24, 8}, {1, 1}), Contains("not a power of two"));
  REQUIRE_THROWS_WITH(mma_v2_accumulator({8, 8}, {1, 1}), Contains("not a multiple of the 16x8 tile"));
}

namespace {
// The PTX ISA operand fragments, transcribed as the ISA writes them: (row, col) of element i of
// lane's fragment within one instruction tile.
std::pair<I, I> ptx_a(int bits, I lane, I i) {
  const I g = lane >> 2, t = lane % 4;
  if (bits == 16) {  // m16n8k16 .f16/.bf16
    I row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
    I col = i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
    return {row, col};
  }
  if (bits == 8) {  // m16n8k32 .s8/.u8/.e4m3/.e5m2
    I row = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
    I col = i < 8 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
    return {row, col};
  }
  // m16n8k8 .tf32
  I row = (i == 0 || i == 2) ? g : g + 8;
  I col = i < 2 ? t : t + 4;
  return {row, col};
}
std::pair<I, I> ptx_b(int bits, I lane, I i) {
  const I g = lane >> 2, t = lane % 4;
  if (bits == 16) return {i < 2 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8, g};
  if (bits == 8) return {i < 4 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16, g};
  return {i == 0 ? t : t + 4, g};
}
}  // namespace

TEST_CASE("linear layout: mma.sync operands match the PTX fragments", "[linear_layout]") {
  for (int bits : {16, 8, 32}) {
    const I k_tile = bits == 16 ? 16 : bits == 8 ? 32 : 8;
    const I frag_a = bits == 16 ? 8 : bits == 8 ? 16 : 4, frag_b = frag_a / 2;
    for (int op : {0, 1})
      for (auto [wm, wn] : {std::pair<int, int>{1, 1}, {2, 2}, {4, 1}, {1, 2}})
        for (auto [mn, k] : {std::pair<I, I>{16, k_tile}, {64, 2 * k_tile}, {32, 4 * k_tile}}) {
          const V shape = op == 0 ? V{mn, k} : V{k, mn};
          auto l = mma_v2_operand(op, bits, shape, {wm, wn});
          INFO("op " << op << " bits " << bits << " " << shape[0] << "x" << shape[1] << " warps " << wm << "x" << wn << ": "
                     << to_string(l));
          const I frag = op == 0 ? frag_a : frag_b, tile_mn = op == 0 ? 16 * wm : 8 * wn;
          const I reps_k = k / k_tile, reps_mn = std::max<I>(1, mn / tile_mn);
          REQUIRE(l.in_size("register") == frag * reps_k * reps_mn);
          for_all_rlw(l, [&](I r, I lane, I w) {
            const I i = r % frag, rk = (r / frag) % reps_k, rmn = r / frag / reps_k;
            if (op == 0) {
              auto [row, col] = ptx_a(bits, lane, i);
              row = (row + 16 * (w / wn) + 16 * wm * rmn) % mn;
              REQUIRE(l.apply_rlw(r, lane, w) == V{row, col + k_tile * rk});
            } else {
              auto [row, col] = ptx_b(bits, lane, i);
              col = (col + 8 * (w % wn) + 8 * wn * rmn) % mn;
              REQUIRE(l.apply_rlw(r, lane, w) == V{row + k_tile * rk, col});
            }
          });
          round_trips(l);
        }
  }
  REQUIRE_THROWS_WITH(mma_v2_operand(2, 16, {16, 16}, {1, 1}), Contains("op_idx is 2"));
  REQUIRE_THROWS_WITH(mma_v2_operand(0, 4, {16, 64}, {1, 1}), Contains("4-bit elements"));
  REQUIRE_THROWS_WITH(mma_v2_operand(0, 8, {16, 16}, {1, 1}), Contains("16x32 fragment"));
}

TEST_CASE("linear layout: wgmma accumulator matches the PTX fragment", "[linear_layout]") {
  for (auto [m, n] : {std::pair<I, I>{64, 8}, {64, 256}, {128, 128}, {256, 64}})
    for (int nw : {4, 8, 16}) {
      const I groups = nw / 4, gm = std::min<I>(groups, m / 64), gn = groups / gm, npg = n / gn;
      if (npg < 8) continue;
      auto l = wgmma_accumulator({m, n}, nw);
      INFO(m << "x" << n << " warps " << nw << ": " << to_string(l));
      const I per_instr = npg / 2;  // d0 .. d{N/2-1}
      REQUIRE(l.in_size("register") == per_instr * (m / (64 * gm)));
      for_all_rlw(l, [&](I r, I lane, I w) {
        const I i = r % per_instr, rm = r / per_instr, g = lane >> 2, t = lane % 4, wg = w / 4;
        I row = 16 * (w % 4) + g + 8 * ((i / 2) % 2);
        I col = 8 * (i / 4) + 2 * t + (i & 1);
        row += 64 * (wg % gm) + 64 * gm * rm;
        col += npg * (wg / gm);
        REQUIRE(l.apply_rlw(r, lane, w) == V{row, col});
      });
      round_trips(l);
    }
  REQUIRE_THROWS_WITH(wgmma_accumulator({64, 64}, 2), Contains("num_warps is 2"));
  REQUIRE_THROWS_WITH(wgmma_accumulator({32, 64}, 4), Contains("not a multiple of 64x8"));
}

// The layout the lowering gives a wgmma dot's result (a blocked layout with a lane repeat) must
// put every element in the thread that wgmma writes it to: the same set of (row, col) per thread
// as the PTX fragment above, for the shapes analysis::wgmma_eligible admits. Its slices (a bias
// row, a per-row scale) follow distribute() too.
TEST_CASE("linear layout: wgmma_layout holds what the wgmma fragment writes", "[linear_layout]") {
  int checked = 0;
  for (auto [m, n] : {std::pair<I, I>{64, 16}, {64, 256}, {128, 128}, {128, 256}, {256, 64}})
    for (int nw : {4, 8}) {
      if (m % (16 * nw) != 0) continue;
      const ir::Layout layout = wgmma_layout({m, n}, nw);
      INFO(m << "x" << n << " warps " << nw << ": " << ir::to_string(layout));
      const auto ll = blocked_to_linear(layout, {m, n}, 32);
      check_against_distribution(ll, {m, n}, layout, 32);
      const auto ptx = wgmma_accumulator({m, n}, nw);
      REQUIRE(ll.in_size("register") == ptx.in_size("register"));
      for (I w = 0; w < nw; ++w)
        for (I lane = 0; lane < 32; ++lane) {
          std::set<V> ours, theirs;
          for (I r = 0; r < ll.in_size("register"); ++r) {
            ours.insert(ll.apply_rlw(r, lane, w));
            theirs.insert(ptx.apply_rlw(r, lane, w));
          }
          REQUIRE(ours == theirs);
        }
      for (int d = 0; d < 2; ++d) {
        const auto sl = slice_layout(layout, d);
        const V sub = {d == 0 ? n : m};
        const auto sll = blocked_to_linear(sl, sub, 32);
        check_against_distribution(sll, sub, sl, 32);
        REQUIRE(slice(ll, d) == sll);
      }
      ++checked;
    }
  REQUIRE(checked == 8);
  ir::Layout short_repeat = wgmma_layout({64, 64}, 4), odd_repeat = short_repeat;
  short_repeat.lane_repeat = {2};
  odd_repeat.lane_repeat = {3, 1};
  REQUIRE_THROWS_WITH(blocked_to_linear(short_repeat, {64, 64}, 32), Contains("does not have rank 2"));
  REQUIRE_THROWS_WITH(blocked_to_linear(odd_repeat, {64, 64}, 32), Contains("not a power of two"));
  // Rows fewer than the repeats need (a broadcast row, a small tile): the repeats that would land
  // on an element the thread already holds are dropped.
  for (I rows : {1, 2, 8, 16, 32}) {
    const ir::Layout layout = wgmma_layout({64, 64}, 4);
    INFO(rows << " rows");
    check_against_distribution(blocked_to_linear(layout, {rows, 64}, 32), {rows, 64}, layout, 32);
    const auto d = distribute(tile({rows, 64}, layout));
    REQUIRE(d.slots[0] == std::min<I>(rows, rows >= 16 ? 2 : 1));
    for (int tid = 0; tid < 128; ++tid) {
      std::set<V> held;
      for (I k = 0; k < d.num_slots(); ++k) held.insert(dist_coords(d, tid, k, 32));
      REQUIRE(static_cast<I>(held.size()) == d.num_slots());
    }
  }
}

TEST_CASE("linear layout: NVMMA shared swizzles", "[linear_layout]") {
  REQUIRE(swizzle_bytes_for(256) == 128);
  REQUIRE(swizzle_bytes_for(128) == 128);
  REQUIRE(swizzle_bytes_for(192) == 64);
  REQUIRE(swizzle_bytes_for(64) == 64);
  REQUIRE(swizzle_bytes_for(96) == 32);
  REQUIRE(swizzle_bytes_for(32) == 32);
  REQUIRE(swizzle_bytes_for(16) == 0);
  // Reference: the element offset of (r, c) in a buffer of column blocks `sw` bytes wide, each
  // rows x sw row-major, with CUTLASS Swizzle<log2(sw/16), 4, 3> on the byte address.
  auto offset_of = [](I r, I c, I rows, I cols, I e, I sw) {
    if (sw == 0) return r * cols + c;
    const I w = sw / e, block = c / w, byte = (c % w) * e;
    const I addr = r * sw + byte;
    const I swizzled = addr ^ (((addr >> 7) & (sw / 16 - 1)) << 4);
    return (block * rows * sw + swizzled) / e;
  };
  int checked = 0;
  for (int bits : {8, 16, 32})
    for (int sw : {0, 32, 64, 128})
      for (auto [rows, cols] : {std::pair<I, I>{8, 128}, {64, 64}, {128, 256}, {16, 512}})
        for (bool tr : {false, true}) {
          const I e = bits / 8;
          const I srows = tr ? cols : rows, scols = tr ? rows : cols;  // the stored matrix
          if (sw && ((scols * e) % sw || srows % 8)) continue;
          auto l = nvmma_shared({rows, cols}, bits, sw, tr);
          INFO(bits << "-bit " << rows << "x" << cols << " swizzle " << sw << (tr ? " transposed" : ""));
          REQUIRE(l.is_bijective());
          for (I r = 0; r < rows; ++r)
            for (I c = 0; c < cols; ++c) {
              I o = tr ? offset_of(c, r, srows, scols, e, sw) : offset_of(r, c, srows, scols, e, sw);
              REQUIRE(l.apply({{"offset", o}}) == V{r, c});
            }
          round_trips(l);
          ++checked;
        }
  REQUIRE(checked > 50);
  // ldmatrix reads an 8x8 f16 tile as 8 rows of 16 bytes: with the 128-byte swizzle the 8 rows
  // land in 8 different 16-byte bank groups; unswizzled 128-byte rows all land in one.
  auto bank_groups = [](const LinearLayout& l, I r0, I c0) {
    auto inv = invert(l);
    std::set<I> groups;
    for (I r = r0; r < r0 + 8; ++r) groups.insert(inv.apply({{"dim0", r}, {"dim1", c0}})[0] * 2 / 16 % 8);
    return groups.size();
  };
  auto sw128 = nvmma_shared({64, 64}, 16, 128), plain = nvmma_shared({64, 64}, 16, 0);
  for (I r0 = 0; r0 < 64; r0 += 8)
    for (I c0 = 0; c0 < 64; c0 += 8) {
      REQUIRE(bank_groups(sw128, r0, c0) == 8);
      REQUIRE(bank_groups(plain, r0, c0) == 1);
    }
  REQUIRE_THROWS_WITH(nvmma_shared({64, 16}, 16, 128), Contains("does not fill whole 128-byte swizzle atoms"));
  REQUIRE_THROWS_WITH(nvmma_shared({64, 64}, 16, 48), Contains("swizzle of 48 bytes"));
}

TEST_CASE("linear layout: text form round trips and parse errors", "[linear_layout]") {
  for (const char* text : {"{} -> []", "{register=[]} -> [dim0=1]", "{register=[[0,1],[8,0]], lane=[[0,2]], warp=[]} -> [dim0=16, dim1=4]",
                           "{offset=[[1],[2],[4]]} -> [x=8]"}) {
    auto l = parse_linear_layout(text);
    REQUIRE(to_string(l) == text);
  }
  REQUIRE(parse_linear_layout(" { lane = [ [1] , [2] ] } -> [ dim0 = 4 ] ") == LinearLayout::identity_1d(4, "lane", "dim0"));
  auto fails = [](const char* text, const char* message) {
    INFO(text);
    REQUIRE_THROWS_AS(parse_linear_layout(text), ProgramError);
    REQUIRE_THROWS_WITH(parse_linear_layout(text), Contains(message));
  };
  fails("", "at offset 0: expected '{'");
  fails("{register=[[0,1]} -> [dim0=2]", "expected ',' or ']' after a basis of 'register'");
  fails("{register=[[0,1],[1]]} -> [dim0=2, dim1=2]", "basis 1 of input dim 'register' has 1 coordinates for 2 output dims");
  fails("{lane=[[3]]} -> [dim0=2]", "outside [0, 2) along 'dim0'");
  fails("{} -> [dim0=3]", "size 3, not a power of two");
  fails("{register=[[1]]} -> [dim0=2] junk", "unexpected text after the layout");
  fails("{register=[[1]], register=[]} -> [dim0=2]", "'register' is listed twice");
  fails("{register=[[-1]]} -> [dim0=2]", "expected a coordinate of a basis of 'register'");
  fails("{register=[[1]]} [dim0=2]", "expected '->'");
  fails("{3d=[]} -> []", "expected an input dim name");
  fails("{lane=[[1]]} -> [dim0]", "expected '=' after output dim 'dim0'");
}

TEST_CASE("linear layout: conversion plans", "[linear_layout]") {
  using K = ConversionPlan::Kind;
  const int ws = 32;
  // Checks that the plan's source map is right for every destination register/lane/warp.
  auto verify = [](const ConversionPlan& p, const LinearLayout& src, const LinearLayout& dst) {
    for_all_rlw(dst, [&](I r, I ln, I w) {
      auto s = p.source_of(r, ln, w);
      REQUIRE(src.apply_rlw(s[0], s[1], s[2]) == dst.apply_rlw(r, ln, w));
      if (p.kind != K::SharedMemory) REQUIRE(s[2] == w);
      if (p.kind == K::RegisterPermutation || p.kind == K::Identity) REQUIRE(s[1] == ln);
      if (p.xor_shuffles) REQUIRE(s == V{p.src_register[r], ln ^ p.src_lane[r], w});
    });
  };
  ir::Layout bl;
  bl.kind = ir::Layout::Kind::Blocked;
  bl.size_per_thread = {1, 2}, bl.threads_per_warp = {8, 4}, bl.warps_per_cta = {1, 1}, bl.order = {1, 0};
  auto a = blocked_to_linear(bl, {16, 16}, ws);
  REQUIRE(a.in_size("register") == 8);
  auto same = plan_conversion(a, a);
  REQUIRE(same.kind == K::Identity);
  verify(same, a, a);
  // The register-reordered twin: the same elements per thread, registers numbered otherwise.
  auto regs = a.in_dims()[0].bases;
  std::reverse(regs.begin(), regs.end());
  auto twin = LinearLayout({{"register", regs}, a.in_dims()[1], a.in_dims()[2]}, a.out_dims());
  auto perm = plan_conversion(a, twin);
  REQUIRE(perm.kind == K::RegisterPermutation);
  REQUIRE(perm.src_register == V{0, 4, 2, 6, 1, 5, 3, 7});
  verify(perm, a, twin);
  // Row-major vs column-major threads in one warp: lanes exchange data, warps do not.
  auto rows = blocked_to_linear(blocked_layout({32, 32}, 1, ws, 1, {1, 0}), {32, 32}, ws);
  auto colsl = blocked_to_linear(blocked_layout({32, 32}, 1, ws, 1, {0, 1}), {32, 32}, ws);
  auto intra = plan_conversion(rows, colsl);
  REQUIRE(intra.kind == K::IntraWarp);
  REQUIRE_FALSE(intra.xor_shuffles);
  verify(intra, rows, colsl);
  // A butterfly: register 1 of lane l holds what lane l ^ 1 holds: one shfl.xor 1.
  auto one = LinearLayout::identity_1d(32, "lane", "dim0");
  auto both = LinearLayout({{"register", {{1}}}, {"lane", one.in_dims()[0].bases}}, one.out_dims());
  auto bfly = plan_conversion(one, both);
  REQUIRE(bfly.kind == K::IntraWarp);
  REQUIRE(bfly.xor_shuffles);
  REQUIRE(bfly.src_lane == V{0, 1});
  verify(bfly, one, both);
  // An mma accumulator in one warp to a blocked layout: shuffles; over 2x2 warps: the blocked
  // layout spreads warps along rows only, so data crosses warps.
  auto mma1 = mma_v2_accumulator({16, 8}, {1, 1});
  auto blk1 = blocked_to_linear(default_blocked_layout({16, 8}, 1, ws, 4), {16, 8}, ws);
  auto p1 = plan_conversion(mma1, blk1);
  REQUIRE(p1.kind == K::IntraWarp);
  verify(p1, mma1, blk1);
  auto mma4 = mma_v2_accumulator({64, 64}, {2, 2});
  auto blk4 = blocked_to_linear(default_blocked_layout({64, 64}, 4, ws, 4), {64, 64}, ws);
  auto p4 = plan_conversion(mma4, blk4);
  REQUIRE(p4.kind == K::SharedMemory);
  verify(p4, mma4, blk4);
  REQUIRE(to_string(p4.kind) == "shared memory");
  REQUIRE_THROWS_WITH(plan_conversion(nvmma_shared({8, 64}, 16, 128), nvmma_shared({8, 64}, 16, 128)),
                      Contains("'offset' is not register, lane or warp"));
  REQUIRE_THROWS_WITH(plan_conversion(mma4, blocked_to_linear(default_blocked_layout({64, 64}, 8, ws, 4), {64, 64}, ws)),
                      Contains("4 and 8 warps"));
}

TEST_CASE("register renamings: a conversion whose every thread holds what it needs costs nothing", "[linear_layout]") {
  const int ws = 32;
  // A row of a [1 x 4] layout, one row per thread (4 registers), to the 1-D layout of the same
  // threads: the same registers.
  const ir::Layout rows = blocked_layout({1, 4}, 8, ws, 4, {1, 0});
  const ir::Type sliced = tile({4}, slice_layout(rows, 0));
  const ir::Type flat = tile({4}, blocked_layout({4}, 8, ws, 4, {0}));
  const auto same = register_renaming(sliced, flat);
  REQUIRE(same.has_value());
  CHECK(*same == V{0, 1, 2, 3});
  // The same layout: register r is register r.
  ir::Layout a;
  a.kind = ir::Layout::Kind::Blocked;
  a.size_per_thread = {2, 2}, a.threads_per_warp = {4, 8}, a.warps_per_cta = {1, 1}, a.order = {1, 0};
  const auto perm = register_renaming(tile({16, 16}, a), tile({16, 16}, a));
  REQUIRE(perm.has_value());
  CHECK(*perm == V{0, 1, 2, 3, 4, 5, 6, 7});
  // Row-major vs column-major threads: lanes would exchange data, so shared memory it is (and
  // the plan gives the conversion a region).
  const ir::Type by_rows = tile({32, 32}, blocked_layout({32, 32}, 1, ws, 1, {1, 0}));
  const ir::Type by_cols = tile({32, 32}, blocked_layout({32, 32}, 1, ws, 1, {0, 1}));
  CHECK_FALSE(register_renaming(by_rows, by_cols).has_value());
  CHECK_FALSE(register_renaming(by_rows, tile({32, 32}, blocked_layout({32, 32}, 2, ws, 1, {1, 0}))).has_value());
}
