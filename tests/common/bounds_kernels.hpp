// Kernels for debug mode's bounds checks of global accesses in compiled code (tests/pipeline,
// tests/gpu), with the results they must give, computed here in plain C++.
#pragma once
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tessera::test::bounds_kernels {
namespace ts = tessera;

// Every program copies its 16x8 tile of x (elements p*128 + r*8 + c) to out, doubled: it loads
// the elements below `load_reach` (0 elsewhere) and stores those below `store_reach`, so that a
// test reaches past the end of x or of out by choosing a reach. The load is on kProbeLine, the
// store on kProbeLine + 1.
inline constexpr int kProbeLine = __LINE__ + 6;
inline auto make_probe() {
  return ts::kernel("bounds_probe", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int load_reach, ts::Int store_reach) {
    auto p = ts::program_id(0);
    auto r = ts::arange(0, 16), c = ts::arange(0, 8);
    auto offs = p * 128 + r.col() * 8 + c.row();
    auto v = ts::load(x + offs, offs < load_reach, 0.0f);
    ts::store(out + offs, v * 2.0f, offs < store_reach);
  });
}

// What make_probe leaves in `out` (its elements at or past store_reach keep their values).
inline std::vector<float> probe_reference(const std::vector<float>& x, std::vector<float> out, std::int64_t load_reach,
                                          std::int64_t store_reach) {
  for (std::int64_t i = 0; i < std::min<std::int64_t>(store_reach, static_cast<std::int64_t>(out.size())); ++i)
    out[static_cast<std::size_t>(i)] = i < load_reach ? 2.0f * x[static_cast<std::size_t>(i)] : 0.0f;
  return out;
}

// Sums `rows` rows of 64 elements of x through a pointer tile advanced in the loop (a loop-carried
// pointer, whose origin the checks follow through the loop), writes the sums to out and adds their
// total to *total atomically (one program).
inline auto make_row_walker() {
  return ts::kernel("bounds_rows", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Ptr<float> total, ts::Int rows) {
    auto cols = ts::arange(0, 64);
    auto ptrs = x + cols;
    auto acc = ts::zeros<float>({64});
    ts::for_range(0, rows, 1, [&](ts::Int) {
      acc = acc + ts::load(ptrs);
      ptrs = ptrs + 64;
    });
    ts::store(out + cols, acc);
    ts::atomic_add(total, ts::sum(acc, 0));
  });
}

}  // namespace tessera::test::bounds_kernels
