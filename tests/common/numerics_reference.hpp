// What the host and the GPU tests of tessera's numerics share: the float-% kernel and a plain C++
// Philox-4x32 (the round function of Salmon et al., SC'11; tests/host/host_random_test.cpp checks
// it against Random123's known answers) with Triton's uniform-float conversion.
#pragma once
#include <tessera/tessera.hpp>

#include <array>
#include <cstdint>

namespace numerics_reference {

// out[i] = x[i] % y[i] over n elements, 256 per program.
template <class T>
auto make_rem() {
  namespace ts = tessera;
  return ts::kernel("rem", [](ts::Ptr<T> x, ts::Ptr<T> y, ts::Ptr<T> out, ts::Int n) {
    auto offs = ts::program_id(0) * 256 + ts::arange(0, 256);
    auto mask = offs < n;
    ts::store(out + offs, ts::load(x + offs, mask) % ts::load(y + offs, mask), mask);
  });
}

using Words = std::array<std::uint32_t, 4>;

// Philox-4x32 with `rounds` rounds: counter c, key (k0, k1).
inline Words philox(Words c, std::uint32_t k0, std::uint32_t k1, int rounds = 10) {
  for (int r = 0; r < rounds; ++r) {
    const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c[0], p1 = std::uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<std::uint32_t>(p0)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

// Triton's uint_to_uniform_float on 32 bits: read as int32, negatives folded, times 2^-31 in f32.
inline float uniform(std::uint32_t x) {
  std::int32_t s = static_cast<std::int32_t>(x);
  if (s < 0) s = -(s + 1);  // -s - 1 without overflow
  return static_cast<float>(s) * 4.6566127342e-10f;
}

}  // namespace numerics_reference
