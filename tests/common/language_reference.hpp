// What the host and the GPU tests of the shape ops built from primitives (cat, interleave,
// ravel, flip, broadcast_to) share: one kernel that applies the op chosen by meta OP to R x C
// tiles, and the row-major result Triton's definitions give, computed here in plain C++. Also
// where on pointer tiles, reductions and scans over tuples of tiles, bitcast, while_,
// debug_barrier, gather, the max_contiguous/multiple_of hints and cache/eviction hints: kernels
// and expected outputs.
#pragma once
#include <tessera/tessera.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace language_reference {

namespace ts = tessera;

inline constexpr std::pair<int, int> kShapes[] = {{4, 8}, {16, 32}, {2, 1}, {64, 2}};
inline constexpr std::int64_t kShapeOps = 7;

// x: an R x C tile read row-major from `in`; one shape op chosen by meta OP; the result stored
// row-major (its element count in `out`).
inline auto make_shape_ops() {
  return ts::kernel("shape_ops", [](ts::Ptr<std::int32_t> in, ts::Ptr<std::int32_t> out) {
    const int R = static_cast<int>(ts::meta("R")), C = static_cast<int>(ts::meta("C"));
    const std::int64_t op = ts::meta("OP");
    auto r = ts::arange(0, R), c = ts::arange(0, C);
    auto x = ts::load(in + r.col() * C + c.row());            // [R, C]
    auto y = ts::load(in + R * C + r.col() * C + c.row());    // the next R x C elements
    auto store = [&](const ts::Tile<std::int32_t>& v) {
      auto flat = ts::ravel(v);
      ts::store(out + ts::arange(0, flat.shape()[0]), flat);
    };
    switch (op) {
      case 0: store(ts::cat(x, y)); break;              // [2R, C]
      case 1: store(ts::interleave(x, y)); break;       // [R, 2C]
      case 2: store(ts::flip(x)); break;                // along C
      case 3: store(ts::flip(x, 0)); break;             // along R
      case 4: store(ts::cat(ts::ravel(x), ts::ravel(y))); break;
      case 5: store(ts::flip(ts::reshape(x, {2, R / 2, C}), 1)); break;  // a middle dim
      default: store(ts::broadcast_to(ts::flip(ts::ravel(x)).row(), {2, R * C})); break;
    }
  });
}

// The kernel's input: two R x C tiles of distinct values.
inline std::vector<std::int32_t> shape_input(int R, int C) {
  std::vector<std::int32_t> in(static_cast<std::size_t>(2 * R * C));
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::int32_t>(i * 7 + 3);
  return in;
}

inline std::vector<std::int32_t> shape_reference(std::int64_t op, const std::vector<std::int32_t>& in, int R, int C) {
  auto x = [&](int i, int j) { return in[static_cast<std::size_t>(i * C + j)]; };
  auto y = [&](int i, int j) { return in[static_cast<std::size_t>(R * C + i * C + j)]; };
  std::vector<std::int32_t> o;
  switch (op) {
    case 0:
    case 4:  // cat along dim 0 of [R, C] and of the ravelled tiles: the same order
      for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) o.push_back(x(i, j));
      for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) o.push_back(y(i, j));
      break;
    case 1:
      for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) o.push_back(x(i, j)), o.push_back(y(i, j));
      break;
    case 2:
      for (int i = 0; i < R; ++i) for (int j = C - 1; j >= 0; --j) o.push_back(x(i, j));
      break;
    case 3:
      for (int i = R - 1; i >= 0; --i) for (int j = 0; j < C; ++j) o.push_back(x(i, j));
      break;
    case 5:  // [2, R/2, C] flipped along the middle dim
      for (int h = 0; h < 2; ++h)
        for (int i = R / 2 - 1; i >= 0; --i) for (int j = 0; j < C; ++j) o.push_back(x(h * (R / 2) + i, j));
      break;
    default:
      for (int rep = 0; rep < 2; ++rep)
        for (int k = R * C - 1; k >= 0; --k) o.push_back(in[static_cast<std::size_t>(k)]);
      break;
  }
  return o;
}

// where on pointers: even lanes read x[i], odd lanes y[n - 1 - i], lanes at or past `split` the
// scalar pointer z (broadcast: all read z[0]); then a 16 x 16 tile takes rows of x or of y by a
// row mask broadcast along the columns, stored after the first n outputs by program 0.
inline auto make_where_pointers() {
  return ts::kernel("where_pointers", [](ts::Ptr<std::int32_t> x, ts::Ptr<std::int32_t> y, ts::Ptr<std::int32_t> z,
                                         ts::Ptr<std::int32_t> out, ts::Int split, ts::Int n) {
    auto offs = ts::program_id(0) * 256 + ts::arange(0, 256);
    auto mask = offs < n;
    auto p = ts::where(offs % 2 == 0, x + offs, y + (n - 1 - offs));
    p = ts::where(offs < split, p, z);
    ts::store(out + offs, ts::load(p, mask), mask);
    auto rows = ts::arange(0, 16), cols = ts::arange(0, 16);
    auto from_x = (rows % 3 == 0).col();  // [16, 1], broadcast along the columns
    auto q = ts::where(from_x, x + rows.col() * 16 + cols.row(), y + rows.col() * 16 + cols.row());
    ts::store(out + n + rows.col() * 16 + cols.row(), ts::load(q), ts::program_id(0) == 0);
  });
}

// Inputs (n >= 256) and the n + 256 outputs make_where_pointers must give.
struct WherePointersCase {
  std::int32_t n = 1000, split = 700;
  std::vector<std::int32_t> x, y, z{-5};
  WherePointersCase() {
    for (std::int32_t i = 0; i < n; ++i) x.push_back(3 * i + 1), y.push_back(-7 * i);
  }
  std::vector<std::int32_t> expected() const {
    std::vector<std::int32_t> want;
    for (std::int32_t i = 0; i < n; ++i) want.push_back(i >= split ? z[0] : i % 2 == 0 ? x[i] : y[n - 1 - i]);
    for (std::int32_t r = 0; r < 16; ++r)
      for (std::int32_t c = 0; c < 16; ++c) want.push_back(r % 3 == 0 ? x[r * 16 + c] : y[r * 16 + c]);
    return want;
  }
};

// Reductions and scans over tuples (Triton's tl.reduce / tl.associative_scan with tuples) on an
// R x C tile, row-major in and out:
// - an argmax along the rows whose ties take the LARGER index (not tessera::argmax's rule, so
//   that the user's combine is what runs): out_val[r] (f32), out_idx[r];
// - the linear recurrence h[c] = a[c] * h[c-1] + b[c] (h[-1] = 0) along each row as the scan of
//   (a, b) pairs under (a1, b1) . (a2, b2) = (a1 a2, a2 b1 + b2), which is associative but not
//   commutative, forward into h_fwd and reversed (h[c] = a[c] * h[c+1] + b[c]) into h_rev; i32
//   arithmetic wraps alike on both sides.
inline auto make_tuple_reductions() {
  return ts::kernel("tuple_reductions", [](ts::Ptr<float> v, ts::Ptr<std::int32_t> a, ts::Ptr<std::int32_t> b,
                                           ts::Ptr<float> out_val, ts::Ptr<std::int32_t> out_idx,
                                           ts::Ptr<std::int32_t> h_fwd, ts::Ptr<std::int32_t> h_rev) {
    const int R = static_cast<int>(ts::meta("R")), C = static_cast<int>(ts::meta("C"));
    auto rows = ts::arange(0, R), cols = ts::arange(0, C);
    auto at = rows.col() * C + cols.row();
    auto idx = ts::broadcast_to(cols.row(), {R, C});
    auto [best, best_idx] = ts::reduce(std::tuple{ts::load(v + at), idx}, 1, [](auto v1, auto i1, auto v2, auto i2) {
      auto take_right = (v2 > v1) | ((v2 == v1) & (i2 > i1));
      return std::tuple{ts::where(take_right, v2, v1), ts::where(take_right, i2, i1)};
    });
    ts::store(out_val + rows, best);
    ts::store(out_idx + rows, best_idx);
    auto pair = std::tuple{ts::load(a + at), ts::load(b + at)};
    auto compose = [](auto a1, auto b1, auto a2, auto b2) { return std::tuple{a1 * a2, a2 * b1 + b2}; };
    ts::store(h_fwd + at, std::get<1>(ts::associative_scan(pair, 1, compose)));
    ts::store(h_rev + at, std::get<1>(ts::associative_scan(pair, 1, compose, /*reverse=*/true)));
  });
}

struct TupleReductionsCase {
  int R, C;
  std::vector<float> v;
  std::vector<std::int32_t> a, b;
  TupleReductionsCase(int rows, int cols) : R(rows), C(cols) {
    for (int i = 0; i < R * C; ++i) {
      v.push_back(static_cast<float>((i * 7919) % 13));  // many ties
      a.push_back((i * 31) % 5 - 2);
      b.push_back((i * 17) % 9 - 4);
    }
  }
  struct Expected {
    std::vector<float> val;
    std::vector<std::int32_t> idx, h_fwd, h_rev;
  };
  Expected expected() const {
    Expected e;
    auto wrap = [](std::int64_t x) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(x)); };
    for (int r = 0; r < R; ++r) {
      int best = 0;
      for (int c = 1; c < C; ++c)
        if (v[r * C + c] >= v[r * C + best]) best = c;
      e.val.push_back(v[r * C + best]);
      e.idx.push_back(best);
    }
    e.h_fwd.resize(v.size());
    e.h_rev.resize(v.size());
    for (int r = 0; r < R; ++r) {
      std::int32_t h = 0;
      for (int c = 0; c < C; ++c) e.h_fwd[r * C + c] = h = wrap(std::int64_t{a[r * C + c]} * h + b[r * C + c]);
      h = 0;
      for (int c = C - 1; c >= 0; --c) e.h_rev[r * C + c] = h = wrap(std::int64_t{a[r * C + c]} * h + b[r * C + c]);
    }
    return e;
  }
};
inline constexpr std::pair<int, int> kTupleShapes[] = {{4, 8}, {16, 64}, {2, 256}, {8, 1}};


// bitcast (Triton's x.to(dtype, bitcast=True)) of numbers and of pointers, n >= 256 elements:
// - out32[i] = the bits of f[i]; out32[n + i] = the same, loaded through a Ptr<uint32_t> made
//   from f; outf[i] = f[i] with its sign bit flipped through the bits (exactly -f[i], NaN payloads
//   too);
// - out16[i] = the high half of f[i]'s bits, loaded through a Ptr<int16_t> made from f (a pointer
//   to a narrower type: element 2i + 1 on a little-endian machine); out16[n + i] = the bits of h[i];
// - out64[i] = the bits of d[i];
// - out32[2n + 16r + c] = the bits of f[16c + r]: a transposed 16 x 16 tile bitcast, stored by
//   program 0 (a layout the 1-D lines do not have).
inline auto make_bitcasts() {
  return ts::kernel("bitcasts", [](ts::Ptr<float> f, ts::Ptr<ts::half> h, ts::Ptr<double> d,
                                   ts::Ptr<std::uint32_t> out32, ts::Ptr<std::int16_t> out16,
                                   ts::Ptr<std::int64_t> out64, ts::Ptr<float> outf, ts::Int n) {
    auto offs = ts::program_id(0) * 256 + ts::arange(0, 256);
    auto mask = offs < n;
    auto bits = ts::bitcast<std::uint32_t>(ts::load(f + offs, mask));
    ts::store(out32 + offs, bits, mask);
    ts::store(outf + offs, ts::bitcast<float>(bits ^ 0x80000000u), mask);
    auto words = ts::bitcast<ts::Pointer<std::uint32_t>>(f);
    ts::store(out32 + n + offs, ts::load(words + offs, mask), mask);
    auto halves = ts::bitcast<ts::Pointer<std::int16_t>>(f);
    ts::store(out16 + offs, ts::load(halves + 2 * offs + 1, mask), mask);
    ts::store(out16 + n + offs, ts::bitcast<std::int16_t>(ts::load(h + offs, mask)), mask);
    ts::store(out64 + offs, ts::bitcast<std::int64_t>(ts::load(d + offs, mask)), mask);
    auto r = ts::arange(0, 16), c = ts::arange(0, 16);
    auto t = ts::trans(ts::load(f + r.col() * 16 + c.row()));
    ts::store(out32 + 2 * n + r.col() * 16 + c.row(), ts::bitcast<std::uint32_t>(t), ts::program_id(0) == 0);
  });
}

// Inputs with the values whose bits a conversion would change (NaNs with payloads, -0, infinities,
// subnormals) and the outputs make_bitcasts must give, computed with std::bit_cast.
struct BitcastCase {
  std::int32_t n = 1000;
  std::vector<float> f;
  std::vector<ts::half> h;
  std::vector<double> d;
  BitcastCase() {
    const float specials[] = {std::bit_cast<float>(0x7fc01234u), std::bit_cast<float>(0xff800001u), -0.0f,
                              std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min(),
                              -std::numeric_limits<float>::min()};
    for (std::int32_t i = 0; i < n; ++i) {
      f.push_back(i < 6 ? specials[i] : std::ldexp(static_cast<float>(i * 37 % 1001) - 500.f, i % 40 - 20));
      h.push_back(ts::half::from_bits(static_cast<std::uint16_t>(i * 65 + 7)));  // every class, NaNs included
      d.push_back(i < 6 ? static_cast<double>(specials[i]) : std::ldexp(static_cast<double>(i) - 499.5, i % 600 - 300));
    }
  }
  struct Want {
    std::vector<std::uint32_t> out32;
    std::vector<std::int16_t> out16;
    std::vector<std::int64_t> out64;
    std::vector<std::uint32_t> outf_bits;  // outf compared as bits: NaN payloads must survive
  };
  Want expected() const {
    Want w;
    for (std::int32_t i = 0; i < n; ++i) w.out32.push_back(std::bit_cast<std::uint32_t>(f[i]));
    for (std::int32_t i = 0; i < n; ++i) w.out32.push_back(std::bit_cast<std::uint32_t>(f[i]));
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 16; ++c) w.out32.push_back(std::bit_cast<std::uint32_t>(f[c * 16 + r]));
    for (std::int32_t i = 0; i < n; ++i) w.out16.push_back(static_cast<std::int16_t>(std::bit_cast<std::uint32_t>(f[i]) >> 16));
    for (std::int32_t i = 0; i < n; ++i) w.out16.push_back(static_cast<std::int16_t>(h[i].bits));
    for (std::int32_t i = 0; i < n; ++i) w.out64.push_back(std::bit_cast<std::int64_t>(d[i]));
    for (std::int32_t i = 0; i < n; ++i) w.outf_bits.push_back(std::bit_cast<std::uint32_t>(f[i]) ^ 0x80000000u);
    return w;
  }
};

// while_ (ts::while_, a do_while op), one program per query q[p]:
// - pos[p] = the lower bound of q[p] in the sorted keys[0..n) (a binary search: scalars carried,
//   an if_ inside the body);
// - halved[64p + i] = x[64p + i] halved (integer division) until the whole tile is at most 1, and
//   rounds[p] = how many halvings that took: a tile carried, a reduction in the condition;
// - flag[p] = 7: a loop whose condition is false at once (n < 0) must not run its body, which
//   would store 99.
inline auto make_while_loops() {
  return ts::kernel("while_loops", [](ts::Ptr<std::int32_t> keys, ts::Ptr<std::int32_t> q, ts::Ptr<std::int32_t> x,
                                      ts::Ptr<std::int32_t> pos, ts::Ptr<std::int32_t> halved,
                                      ts::Ptr<std::int32_t> rounds, ts::Ptr<std::int32_t> flag, ts::Int n) {
    auto p = ts::program_id(0);
    auto key = ts::load(q + p);
    ts::Int lo = ts::zeros<std::int32_t>({}), hi = n;
    ts::while_([&] { return lo < hi; }, [&] {
      auto mid = (lo + hi) / 2;
      ts::if_(ts::load(keys + mid) < key, [&] { lo = mid + 1; }, [&] { hi = mid; });
    });
    ts::store(pos + p, lo);

    auto offs = p * 64 + ts::arange(0, 64);
    auto v = ts::load(x + offs);
    auto count = ts::zeros<std::int32_t>({});
    ts::while_([&] { return ts::max(v, 0) > 1; }, [&] {
      v = ts::where(v > 1, v / 2, v);
      count = count + 1;
    });
    ts::store(halved + offs, v);
    ts::store(rounds + p, count);

    ts::store(flag + p, 7);
    ts::while_([&] { return n < 0; }, [&] { ts::store(flag + p, 99); });
  });
}

// Inputs for `programs` programs and the outputs make_while_loops must give.
struct WhileLoopsCase {
  std::int32_t n = 1000, programs = 16;
  std::vector<std::int32_t> keys, q, x;
  WhileLoopsCase() {
    for (std::int32_t i = 0; i < n; ++i) keys.push_back(3 * i - 500 + (i % 7 == 0 ? 1 : 0));  // sorted, with gaps
    for (std::int32_t p = 0; p < programs; ++p) q.push_back(p == 0 ? -10000 : p == 1 ? 100000 : 211 * p - 1700);
    for (std::int32_t i = 0; i < 64 * programs; ++i) x.push_back(i % 64 == 0 ? (1 << (i / 64 % 31)) : static_cast<std::int32_t>(static_cast<std::uint32_t>(i) * 2654435761u % 5000u) - 200);
  }
  struct Want {
    std::vector<std::int32_t> pos, halved, rounds, flag;
  };
  Want expected() const {
    Want w;
    for (std::int32_t p = 0; p < programs; ++p) {
      std::int32_t lo = 0;
      while (lo < n && keys[static_cast<std::size_t>(lo)] < q[static_cast<std::size_t>(p)]) ++lo;
      w.pos.push_back(lo);
      std::vector<std::int32_t> v(x.begin() + 64 * p, x.begin() + 64 * (p + 1));
      std::int32_t count = 0;
      auto top = [&] { std::int32_t m = 0; for (auto e : v) m = e > m ? e : m; return m; };
      while (top() > 1) {
        for (auto& e : v) e = e > 1 ? e / 2 : e;
        ++count;
      }
      w.halved.insert(w.halved.end(), v.begin(), v.end());
      w.rounds.push_back(count);
      w.flag.push_back(7);
    }
    return w;
  }
};

// debug_barrier: each program stores 3x + 1 for its 256 elements of x into scratch, waits at a
// debug_barrier, then reads them back reversed, so that every thread reads what other threads
// stored: out[256p + i] = 3 * x[256p + 255 - i] + 1.
inline auto make_debug_barrier() {
  return ts::kernel("debug_barrier", [](ts::Ptr<std::int32_t> x, ts::Ptr<std::int32_t> scratch, ts::Ptr<std::int32_t> out) {
    auto base = ts::program_id(0) * 256;
    auto offs = ts::arange(0, 256);
    ts::store(scratch + base + offs, ts::load(x + base + offs) * 3 + 1);
    ts::debug_barrier();
    ts::store(out + base + offs, ts::load(scratch + base + (255 - offs)));
  });
}

inline std::vector<std::int32_t> debug_barrier_reference(const std::vector<std::int32_t>& x) {
  std::vector<std::int32_t> out(x.size());
  for (std::size_t p = 0; p < x.size() / 256; ++p)
    for (std::size_t i = 0; i < 256; ++i) out[256 * p + i] = 3 * x[256 * p + 255 - i] + 1;
  return out;
}

// gather (Triton's tl.gather) on an R x C tile of src: out1 = gather(src, idx1 [R x K], axis 1),
// out0 = gather(src, idx0 [K x C], axis 0), row-major in and out; indices in range.
inline constexpr int kGatherShapes[][3] = {{16, 16, 32}, {4, 64, 8}, {32, 8, 16}};
inline auto make_gathers() {
  return ts::kernel("gathers", [](ts::Ptr<float> src, ts::Ptr<std::int32_t> idx1, ts::Ptr<std::int64_t> idx0,
                                  ts::Ptr<float> out1, ts::Ptr<float> out0) {
    const int R = static_cast<int>(ts::meta("R")), C = static_cast<int>(ts::meta("C")), K = static_cast<int>(ts::meta("K"));
    auto r = ts::arange(0, R), c = ts::arange(0, C), k = ts::arange(0, K);
    auto x = ts::load(src + r.col() * C + c.row());
    ts::store(out1 + r.col() * K + k.row(), ts::gather(x, ts::load(idx1 + r.col() * K + k.row()), 1));
    ts::store(out0 + k.col() * C + c.row(), ts::gather(x, ts::load(idx0 + k.col() * C + c.row()), 0));
  });
}

struct GatherCase {
  int R, C, K;
  std::vector<float> src;
  std::vector<std::int32_t> idx1;
  std::vector<std::int64_t> idx0;
  GatherCase(int r, int c, int k) : R(r), C(c), K(k) {
    for (int i = 0; i < R * C; ++i) src.push_back(static_cast<float>(i) * 0.5f - 7.f);
    for (int i = 0; i < R * K; ++i) idx1.push_back(static_cast<std::int32_t>((i * 2654435761u >> 7) % static_cast<unsigned>(C)));
    for (int i = 0; i < K * C; ++i) idx0.push_back(static_cast<std::int64_t>((i * 40503u >> 3) % static_cast<unsigned>(R)));
  }
  std::vector<float> expected1() const {
    std::vector<float> o;
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < K; ++j) o.push_back(src[static_cast<std::size_t>(i * C + idx1[static_cast<std::size_t>(i * K + j)])]);
    return o;
  }
  std::vector<float> expected0() const {
    std::vector<float> o;
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < C; ++j) o.push_back(src[static_cast<std::size_t>(idx0[static_cast<std::size_t>(i * C + j)] * C + j)]);
    return o;
  }
};

// max_contiguous / multiple_of as Triton's matmul tutorial uses them: each program copies a BM x BN
// block of a (m x n, row-major), its rows wrapped with % m and promised as runs of BM from
// multiples of BM, its columns promised as runs of BN (masked at n), to row pid_m * BM + i of out.
// The promise decides the width of every row's loads; the values must not depend on it.
inline auto make_wrapped_rows() {
  return ts::kernel("wrapped_rows", [](ts::Ptr<float> a, ts::Ptr<float> out, ts::Int m, ts::Int n) {
    const int BM = ts::meta("BM"), BN = ts::meta("BN");
    auto rows = ts::max_contiguous(ts::multiple_of((ts::program_id(0) * BM + ts::arange(0, BM)) % m, BM), BM);
    auto cols = ts::max_contiguous(ts::multiple_of(ts::program_id(1) * BN + ts::arange(0, BN), BN), BN);
    auto tile = ts::load(a + rows.col() * n + cols.row(), cols.row() < n);
    auto out_rows = ts::program_id(0) * BM + ts::arange(0, BM);
    ts::store(out + out_rows.col() * n + cols.row(), tile, cols.row() < n);
  });
}

// {m, n, BM, BN}: run over two wraps of the rows (grid 2m / BM x cdiv(n, BN)).
inline constexpr int kWrappedRowsShapes[][4] = {{64, 100, 32, 64}, {128, 64, 64, 16}, {256, 256, 128, 64}};

// out (2m x n): row i is row i % m of a.
inline std::vector<float> wrapped_rows_reference(const std::vector<float>& a, int m, int n) {
  std::vector<float> want(static_cast<std::size_t>(2 * m * n));
  for (int i = 0; i < 2 * m; ++i)
    for (int j = 0; j < n; ++j) want[static_cast<std::size_t>(i * n + j)] = a[static_cast<std::size_t>(i % m * n + j)];
  return want;
}

// Every cache and eviction hint of a load and of a store, masked and not, vector and scalar; the
// hints never change a value: out holds 6 rows of n, and a 7th with FULL = 1 (n a multiple of
// BLOCK: that row comes from an unmasked load).
inline auto make_hinted_copies() {
  return ts::kernel("hinted_copies", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) {
    const int BLOCK = ts::meta("BLOCK");
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto a = ts::load(x + offs, mask, 0.f, {.cache = ts::LoadCache::cg});
    auto b = ts::load(x + offs, mask, {.cache = ts::LoadCache::ca});
    auto c = ts::load(x + offs, mask, 1.f, {.cache = ts::LoadCache::cv});
    auto d = ts::load(x + offs, mask, 0.f, {.eviction = ts::Eviction::first});
    auto e = ts::load(x + offs, mask, 0.f, {.eviction = ts::Eviction::last});
    auto first = ts::load(x, {.cache = ts::LoadCache::cg});  // a scalar, unmasked
    ts::store(out + offs, a + first, mask, {.cache = ts::StoreCache::cs});
    ts::store(out + n + offs, b * 2.f, mask, {.cache = ts::StoreCache::wt});
    ts::store(out + 2 * n + offs, c + d, mask, {.eviction = ts::Eviction::first});
    ts::store(out + 3 * n + offs, e, mask, {.cache = ts::StoreCache::wb});
    ts::store(out + 4 * n + offs, a, mask, {.cache = ts::StoreCache::cg});
    ts::store(out + 5 * n + offs, d, mask, {.eviction = ts::Eviction::last});
    if (ts::meta("FULL")) ts::store(out + 6 * n + offs, ts::load(x + offs, {.eviction = ts::Eviction::last}) - 1.f,
                                    {.cache = ts::StoreCache::cs});
  });
}

// The rows of make_hinted_copies: 6, or 7 when full.
inline std::vector<float> hinted_copies_reference(const std::vector<float>& x, bool full) {
  const std::size_t n = x.size();
  std::vector<float> want((full ? 7 : 6) * n);
  for (std::size_t i = 0; i < n; ++i) {
    want[i] = x[i] + x[0];
    want[n + i] = x[i] * 2.f;
    want[2 * n + i] = x[i] + x[i];
    want[3 * n + i] = want[4 * n + i] = want[5 * n + i] = x[i];
    if (full) want[6 * n + i] = x[i] - 1.f;
  }
  return want;
}

// device_print: program p prints its 4 x 8 tile of x, 16 floats of y beside a bool tile (one call,
// two operands; 16 elements are fewer than a 4-warp layout's threads, so threads replicate them
// and each must still print once), a scalar, a line without values, and y's bits with a scalar in
// hex (device_print_hex). The prefixes exercise Triton's normalization and a '%' that is text.
inline auto make_printer() {
  return ts::kernel("printer", [](ts::Ptr<std::int32_t> x, ts::Ptr<float> y) {
    auto p = ts::program_id(0);
    auto r = ts::arange(0, 4), c = ts::arange(0, 8);
    ts::device_print("x", ts::load(x + p * 32 + r.col() * 8 + c.row()));
    auto f = ts::load(y + p * 16 + ts::arange(0, 16));
    ts::device_print("y=%d ", f, f > 0.0f);
    ts::device_print("scalar", p * 10 + 3);
    ts::device_print("hello");
    ts::device_print_hex("bits", f, -1 - p);
  });
}

// device_assert and debug mode (tests/host, tests/gpu): every program checks a scalar (scale != 0)
// and its 16x8 tile of x (each element below `limit`), then writes x * scale, a signed i32
// multiply that debug mode checks for overflow. The three lines are kCheckLine, + 1 and + 2.
inline constexpr int kCheckLine = __LINE__ + 6;
inline auto make_checker() {
  return ts::kernel("checker", [](ts::Ptr<std::int32_t> x, ts::Ptr<std::int32_t> out, ts::Int limit, ts::Int scale) {
    auto p = ts::program_id(0);
    auto r = ts::arange(0, 16), c = ts::arange(0, 8);
    auto offs = p * 128 + r.col() * 8 + c.row();
    ts::device_assert(scale != 0, "scale is not zero");
    ts::device_assert(ts::load(x + offs) < limit, "x below the limit");
    ts::store(out + offs, ts::load(x + offs) * scale);
  });
}
// What make_checker writes: x * scale, wrapped to 32 bits as the code without checks computes it.
inline std::vector<std::int32_t> checker_reference(const std::vector<std::int32_t>& x, std::int32_t scale) {
  std::vector<std::int32_t> out;
  for (std::int32_t v : x)
    out.push_back(static_cast<std::int32_t>(static_cast<std::uint32_t>(v) * static_cast<std::uint32_t>(scale)));
  return out;
}

// The lines make_printer prints over `programs` programs, sorted, written here from Triton 3.6's
// format as its GPU printed it (tests/gpu/triton_print_probe.py): pid (x, y, z) idx (i, j) prefix
// value, each index padded to ceil(log10(dim)) digits, "idx ()" for a scalar, %f for floats,
// hex 0x%08x; without tessera's formatter.
inline std::vector<std::string> printer_reference(const std::vector<std::int32_t>& x, const std::vector<float>& y,
                                                  int programs) {
  std::vector<std::string> lines;
  for (int p = 0; p < programs; ++p) {
    const std::string pid = "pid (" + std::to_string(p) + ", 0, 0)";
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 8; ++j)
        lines.push_back(pid + " idx (" + std::to_string(i) + ", " + std::to_string(j) + ") x: " +
                        std::to_string(x[static_cast<std::size_t>(p * 32 + i * 8 + j)]));
    for (int i = 0; i < 16; ++i) {
      const float v = y[static_cast<std::size_t>(p * 16 + i)];
      const std::string index = std::string(i < 10 ? " idx ( " : " idx (") + std::to_string(i) + ")";  // 2 digits for 16
      lines.push_back(pid + index + " y=%d: (operand 0) " + std::to_string(static_cast<double>(v)));  // %f: 6 decimals
      lines.push_back(pid + index + " y=%d: (operand 1) " + (v > 0.0f ? "1" : "0"));
      char bits[16];
      std::snprintf(bits, sizeof bits, "0x%08x", std::bit_cast<std::uint32_t>(v));
      lines.push_back(pid + index + " bits: (operand 0) " + bits);
    }
    char word[16];
    std::snprintf(word, sizeof word, "0x%08x", static_cast<std::uint32_t>(-1 - p));
    lines.push_back(pid + " idx () bits: (operand 1) " + word);
    lines.push_back(pid + " idx () scalar: " + std::to_string(10 * p + 3));
    lines.push_back(pid + " hello");
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// The lines of `text`, sorted (device_print's lines come in any order across threads).
inline std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(text.substr(start, nl - start));
  if (start < text.size()) lines.push_back(text.substr(start));
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Float downcasts toward zero (Rounding::rtz, Triton's fp_downcast_rounding="rtz"): f32 to f16
// and bf16, f64 to f32 and f16, of the values downcast_inputs gives.
inline auto make_downcaster() {
  return ts::kernel("downcaster", [](ts::Ptr<float> x, ts::Ptr<double> d, ts::Ptr<ts::half> h, ts::Ptr<ts::bfloat16> b,
                                     ts::Ptr<float> f, ts::Ptr<ts::half> dh, ts::Int n) {
    auto offs = ts::program_id(0) * 128 + ts::arange(0, 128);
    auto mask = offs < n;
    auto v = ts::load(x + offs, mask);
    ts::store(h + offs, v.to<ts::half>(ts::Rounding::rtz), mask);
    ts::store(b + offs, v.to<ts::bfloat16>(ts::Rounding::rtz), mask);
    auto w = ts::load(d + offs, mask);
    ts::store(f + offs, w.to<float>(ts::Rounding::rtz), mask);
    ts::store(dh + offs, w.to<ts::half>(ts::Rounding::rtz), mask);
  });
}

// Edge values of the downcasts (zeros, halfway points, the largest finite values and just past
// them, subnormals of each type, infinities, NaN), then random values over many exponents.
inline std::vector<double> downcast_inputs(unsigned seed) {
  const double f16_max = 65504, f16_sub = std::ldexp(1.0, -24), f32_max = std::numeric_limits<float>::max();
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 1 + std::ldexp(1.0, -11), 1 + 3 * std::ldexp(1.0, -12),
                           -(1 + std::ldexp(1.0, -11)), 1 + std::ldexp(1.0, -8), 1 + std::ldexp(1.0, -24),
                           -(1 + 3 * std::ldexp(1.0, -25)), f16_max, 65519.99, 65520, 1e6, -1e6, f16_sub, 3 * f16_sub / 2,
                           f16_sub / 2, -f16_sub / 3, 1e-5, -1e-5, 6.1e-5, f32_max, -f32_max, 3.5e38, -1e300, 1e-300,
                           std::numeric_limits<float>::denorm_min(), std::ldexp(1.0, -149) * 1.5,
                           std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), 0.1, -0.1, 3.14159265358979};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-30, 20);
  while (v.size() < 300) v.push_back((rng() % 2 ? -1.0 : 1.0) * std::ldexp(mantissa(rng), exponent(rng)));
  return v;
}

// The bits of x rounded toward zero into a narrower float type, written here without tessera:
// the finite values of one sign are ordered as their bits, so the answer is the largest bits in
// [0, max_finite] whose value (`decode`) is at most |x|, found by binary search, with x's sign.
template <class Decode>
std::uint32_t toward_zero_bits(double x, std::uint32_t max_finite, std::uint32_t sign_bit, std::uint32_t inf,
                               Decode decode) {
  const std::uint32_t sign = std::signbit(x) ? sign_bit : 0;
  if (std::isinf(x)) return sign | inf;
  std::uint32_t lo = 0, hi = max_finite;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo + 1) / 2;
    if (decode(mid) <= std::fabs(x)) lo = mid;
    else hi = mid - 1;
  }
  return sign | lo;
}
inline double f16_value(std::uint32_t b) {
  const int e = static_cast<int>(b >> 10 & 31), m = static_cast<int>(b & 1023);
  return e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
}
inline std::uint32_t f16_toward_zero(double x) { return toward_zero_bits(x, 0x7bff, 0x8000, 0x7c00, f16_value); }
inline std::uint32_t bf16_toward_zero(double x) {
  return toward_zero_bits(x, 0x7f7f, 0x8000, 0x7f80, [](std::uint32_t b) { return double(std::bit_cast<float>(b << 16)); });
}
inline std::uint32_t f32_toward_zero(double x) {
  return toward_zero_bits(x, 0x7f7fffff, 0x80000000u, 0x7f800000, [](std::uint32_t b) { return double(std::bit_cast<float>(b)); });
}

// What make_downcaster wrote that differs from the reference, one line each (empty: all right).
// A NaN input must give a NaN of the narrow type.
inline std::vector<std::string> downcast_mismatches(const std::vector<float>& x, const std::vector<double>& d,
                                                    const std::vector<ts::half>& h, const std::vector<ts::bfloat16>& b,
                                                    const std::vector<float>& f, const std::vector<ts::half>& dh) {
  std::vector<std::string> bad;
  auto check = [&](const char* what, double in, std::uint32_t got, std::uint32_t want, bool got_nan) {
    if (std::isnan(in) ? got_nan : got == want) return;
    char line[160];
    std::snprintf(line, sizeof line, "%s of %.17g: got 0x%x, want 0x%x", what, in, got, want);
    bad.push_back(line);
  };
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double xi = x[i], di = d[i];
    check("f32 -> f16", xi, h[i].bits, f16_toward_zero(xi), std::isnan(float(h[i])));
    check("f32 -> bf16", xi, b[i].bits, bf16_toward_zero(xi), std::isnan(float(b[i])));
    check("f64 -> f32", di, std::bit_cast<std::uint32_t>(f[i]), f32_toward_zero(di), std::isnan(f[i]));
    check("f64 -> f16", di, dh[i].bits, f16_toward_zero(di), std::isnan(float(dh[i])));
  }
  return bad;
}

}  // namespace language_reference
