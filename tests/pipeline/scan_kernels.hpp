// Scan test kernels and their plain C++ reference, shared by the interpreter and GPU tests.
#pragma once
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace scan_test {
namespace ts = tessera;

// out[i, j] = scan of x along `axis` of an R x C tile (row-major), reverse or not; kind 0 cumsum,
// 1 cumprod, 2 associative_scan with max.
inline auto scan_kernel(int kind, int axis, bool reverse) {
  return ts::kernel("scan2d", [=](ts::Ptr<std::int32_t> x, ts::Ptr<std::int32_t> out) {
    const int R = static_cast<int>(ts::meta("R")), C = static_cast<int>(ts::meta("C"));
    auto offs = ts::arange(0, R).col() * C + ts::arange(0, C).row();
    auto v = ts::load(x + offs);
    ts::Tile<std::int32_t> r;
    if (kind == 0) r = ts::cumsum(v, axis, reverse);
    else if (kind == 1) r = ts::cumprod(v, axis, reverse);
    else r = ts::associative_scan(v, axis, [](ts::Tile<std::int32_t> a, ts::Tile<std::int32_t> b) { return ts::maximum(a, b); }, reverse);
    ts::store(out + offs, r);
  });
}

inline std::vector<std::int32_t> reference(const std::vector<std::int32_t>& x, int rows, int cols, int kind, int axis, bool reverse) {
  std::vector<std::int32_t> out(x.size());
  const int outer = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
  for (int o = 0; o < outer; ++o) {
    std::int32_t acc = 0;
    for (int s = 0; s < len; ++s) {
      const int k = reverse ? len - 1 - s : s;
      const int idx = axis == 0 ? k * cols + o : o * cols + k;
      const std::int32_t v = x[static_cast<std::size_t>(idx)];
      if (s == 0) acc = v;
      else if (kind == 0) acc = static_cast<std::int32_t>(static_cast<std::uint32_t>(acc) + static_cast<std::uint32_t>(v));
      else if (kind == 1) acc = static_cast<std::int32_t>(static_cast<std::uint32_t>(acc) * static_cast<std::uint32_t>(v));
      else acc = std::max(acc, v);
      out[static_cast<std::size_t>(idx)] = acc;
    }
  }
  return out;
}

}  // namespace scan_test
