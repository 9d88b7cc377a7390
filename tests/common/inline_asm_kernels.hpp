// Kernels with inline PTX (ts::inline_asm_elementwise), shared by the pipeline tests (the PTX and
// ptxas, the refusals of the interpreter and the host targets) and the GPU tests (the values).
// Each computes something whose value does not depend on which elements a thread groups under
// `pack`, so that the host reference is exact.
#pragma once
#include <tessera/tessera.hpp>

#include <cstdint>
#include <tuple>

namespace tessera::test::inline_asm_kernels {
namespace ts = tessera;

// shift[i] = x[i] << 3 (one i32 register each way), prod[i] = a[i] * b[i] (mul.rn.f32: two f32
// arguments), over n elements in blocks of BLOCK.
inline auto make_scalar_ops() {
  return ts::kernel("asm_scalar_ops", [](ts::Ptr<std::int32_t> x, ts::Ptr<float> a, ts::Ptr<float> b,
                                         ts::Ptr<std::int32_t> shift, ts::Ptr<float> prod, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto s = ts::inline_asm_elementwise<std::int32_t>("shl.b32 $0, $1, 3;", "=r,r", ts::load(x + offs, mask));
    auto p = ts::inline_asm_elementwise<float>("mul.rn.f32 $0, $1, $2;", "=f,f,f",
                                               std::tuple{ts::load(a + offs, mask), ts::load(b + offs, mask)});
    ts::store(shift + offs, s, mask);
    ts::store(prod + offs, p, mask);
  });
}

// out[i] = (x[i] & 0x1f) << 3 for bytes, four per instance in one 32-bit register (Triton's
// test_inline_asm_packed).
inline auto make_packed_bytes() {
  return ts::kernel("asm_packed_bytes", [](ts::Ptr<std::uint8_t> x, ts::Ptr<std::uint8_t> out, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto y = ts::inline_asm_elementwise<std::uint8_t>("and.b32 $0, $1, 0x1F1F1F1F;\n\tshl.b32 $0, $0, 3;", "=r,r",
                                                      ts::load(x + offs, mask), /*is_pure=*/true, /*pack=*/4);
    ts::store(out + offs, y, mask);
  });
}

// lo[i], hi[i] = the two 32-bit halves of v[i]: two results from one instance.
inline auto make_two_results() {
  return ts::kernel("asm_two_results", [](ts::Ptr<std::int64_t> v, ts::Ptr<std::int32_t> lo, ts::Ptr<std::int32_t> hi,
                                          ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto [l, h] = ts::inline_asm_elementwise<std::tuple<std::int32_t, std::int32_t>>("mov.b64 {$0, $1}, $2;", "=r,=r,l",
                                                                                    ts::load(v + offs, mask));
    ts::store(lo + offs, l, mask);
    ts::store(hi + offs, h, mask);
  });
}

}  // namespace tessera::test::inline_asm_kernels
