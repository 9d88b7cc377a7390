// Scan test kernels and their plain C++ reference, shared by the interpreter and GPU tests.
#pragma once
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

namespace scan_test {
namespace ts = tessera;

// out[i, j] = scan of x along axis AXIS of an R x C tile (row-major), reverse when REVERSE is 1;
// KIND 0 cumsum, 1 cumprod, 2 associative_scan with max, 3 and 4 associative_scan with "last
// non-zero" and "first non-zero": associative but not commutative, so that any step that combines
// in the wrong order (lanes, warps, repetitions, reverse) gives a wrong answer. All five are
// meta-parameters (scan_meta), since a kernel function captures nothing.
inline constexpr int kScanKinds = 5;
inline auto scan_kernel() {
  return ts::kernel("scan2d", [](ts::Ptr<std::int32_t> x, ts::Ptr<std::int32_t> out) {
    const int R = static_cast<int>(ts::meta("R")), C = static_cast<int>(ts::meta("C"));
    const int kind = static_cast<int>(ts::meta("KIND")), axis = static_cast<int>(ts::meta("AXIS"));
    const bool reverse = ts::meta("REVERSE") != 0;
    auto offs = ts::arange(0, R).col() * C + ts::arange(0, C).row();
    auto v = ts::load(x + offs);
    ts::Tile<std::int32_t> r;
    if (kind == 0) r = ts::cumsum(v, axis, reverse);
    else if (kind == 1) r = ts::cumprod(v, axis, reverse);
    else if (kind == 2) r = ts::associative_scan(v, axis, [](ts::Tile<std::int32_t> a, ts::Tile<std::int32_t> b) { return ts::maximum(a, b); }, reverse);
    else if (kind == 3) r = ts::associative_scan(v, axis, [](ts::Tile<std::int32_t> a, ts::Tile<std::int32_t> b) { return ts::where(b != 0, b, a); }, reverse);
    else r = ts::associative_scan(v, axis, [](ts::Tile<std::int32_t> a, ts::Tile<std::int32_t> b) { return ts::where(a != 0, a, b); }, reverse);
    ts::store(out + offs, r);
  });
}
inline ts::MetaValues scan_meta(int rows, int cols, int kind, int axis, bool reverse) {
  return {{"R", rows}, {"C", cols}, {"KIND", kind}, {"AXIS", axis}, {"REVERSE", reverse ? 1 : 0}};
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
      else if (kind == 2) acc = std::max(acc, v);
      else if (kind == 3) acc = v != 0 ? v : acc;
      else acc = acc != 0 ? acc : v;
      out[static_cast<std::size_t>(idx)] = acc;
    }
  }
  return out;
}

// (rows, cols, num_warps) covering the scan's three levels: repetitions of the CTA tile along the
// axis, lanes and warps along it or across it, replicated small tiles, 1 to 8 warps.
inline const std::vector<std::tuple<int, int, int>> kScanShapes = {
    {1, 256, 4}, {16, 64, 4}, {64, 16, 4}, {4, 1024, 4}, {1, 4096, 8}, {128, 8, 8}, {2, 8, 4}, {8, 128, 1}, {32, 32, 2}};

}  // namespace scan_test
