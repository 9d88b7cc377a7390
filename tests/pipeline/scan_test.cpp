// Scans (cumsum, cumprod, associative_scan, forward and reverse, 1-D and both axes of 2-D) run
// through the public launch path on the interpreter against plain C++ prefix loops, and compile
// to PTX that ptxas accepts.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include "pipeline/scan_kernels.hpp"

#include <random>
#include <vector>

namespace ts = tessera;

using scan_test::reference;
using scan_test::scan_kernel;

TEST_CASE("scans match prefix loops on the interpreter and compile for sm_90a", "[pipeline][scan]") {
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> d(-3, 3);
  for (auto [rows, cols, warps] : scan_test::kScanShapes)
    for (int kind = 0; kind < scan_test::kScanKinds; ++kind)
      for (int axis = 0; axis < 2; ++axis)
        for (bool reverse : {false, true}) {
          INFO(rows << " x " << cols << ", " << warps << " warps, kind " << kind << ", axis " << axis << ", reverse " << reverse);
          std::vector<std::int32_t> x(static_cast<std::size_t>(rows) * cols), out(x.size(), -99);
          for (auto& v : x) v = d(rng);
          auto k = scan_kernel();
          const ts::LaunchOptions opts{.grid = {1}, .meta = scan_test::scan_meta(rows, cols, kind, axis, reverse),
                                       .num_warps = warps, .executor = ts::Executor::Interpreter};
          k[opts](x, out);
          CHECK(out == reference(x, rows, cols, kind, axis, reverse));
          std::vector<ts::ArgValue> args{ts::ArgValue::pointer(x.data(), ts::DType::I32),
                                         ts::ArgValue::pointer(out.data(), ts::DType::I32)};
          const auto a = ts::detail::compile_only(k.def(), opts, args, "sm_90a");
          CHECK(a.assembly.find(".entry scan2d") != std::string::npos);
        }
}
