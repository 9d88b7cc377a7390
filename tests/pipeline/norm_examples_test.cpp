// The row kernels of examples/norm_kernels.hpp added for the backward passes and the online
// softmax, through the public launch path on the interpreter, on small random shapes (row lengths
// not a power of two, fewer and more programs than rows, partial buffers taller than one block),
// against host references in double; outputs are poisoned first, so an element never written
// fails. Host vectors are passed as they are: the interpreter bounds-checks every access against
// them. Last, every kernel compiles for sm_80 / sm_90a and ptxas accepts it (where present).
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/tool_paths.hpp"
#include "examples/norm_kernels.hpp"
#include "tessera/runtime.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

namespace {

constexpr ts::Executor kInterp = ts::Executor::Interpreter;
constexpr std::uint32_t kSeed = 20261207;

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937& rng, float mean, float sd) {
  std::normal_distribution<float> dist(mean, sd);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// Every byte 0x7f: NaN in f16, 3.4e38 in f32; neither passes for a result.
template <class T>
std::vector<T> poisoned(std::size_t n) {
  std::vector<T> v(n);
  std::memset(static_cast<void*>(v.data()), 0x7f, n * sizeof(T));
  return v;
}

void require_close(const char* what, const ex::ErrorReport& e, double norm_tol) {
  INFO(what << ": relative error " << e.relative << ", " << e.bad_elements << " bad elements, first at "
            << e.first_bad);
  REQUIRE(e.ok(norm_tol));
}

struct NormShape {
  std::int64_t rows, cols, programs;
};

// Rows not a multiple of the programs, programs beyond the rows (they write zero partials), one
// row / one column, row lengths not a power of two, partial buffers over BLOCK_M = 32 rows, and
// the widest row the example supports.
const NormShape kNormShapes[] = {{37, 100, 8}, {64, 128, 64}, {5, 1000, 16}, {1, 1, 1},   {100, 33, 7},
                                 {200, 300, 40}, {3, 8192, 2}, {9, 3000, 4}, {70, 129, 70}};

}  // namespace

TEST_CASE("online softmax over column blocks matches the host reference in double", "[pipeline][examples][norm]") {
  auto k = ex::make_online_softmax();
  struct Shape { std::int64_t rows, cols, block; };
  // One block, a tail block, exact multiples of the block, many blocks, a single column.
  for (auto [rows, cols, block] : {Shape{3, 1000, 256}, Shape{2, 4097, 1024}, Shape{5, 777, 128}, Shape{1, 1, 64},
                                   Shape{4, 1536, 512}, Shape{2, 20000, 4096}, Shape{3, 5000, 64}}) {
    INFO(rows << " x " << cols << ", BLOCK " << block << ", seed " << kSeed);
    std::mt19937 rng(kSeed + static_cast<std::uint32_t>(cols));
    auto x = random_values<float>(static_cast<std::size_t>(rows * cols), rng, 0.f, 4.f);
    // A maximum in the last block of row 0 forces a rescale of everything summed before it.
    x[static_cast<std::size_t>(cols - 1)] = 30.f;
    auto out = poisoned<float>(x.size());
    const auto c = static_cast<std::int32_t>(cols);
    k[ex::online_softmax_options(rows, block, kInterp)](x, out, c, c);
    std::vector<double> want(x.size());
    ex::softmax_reference_f64(x, want, rows, cols);
    require_close("softmax", ex::compare<float>(out, want, 2e-5, 1e-30), 1e-5);
  }
}

TEST_CASE("layer norm backward (dx, then dw/db from per-program partials) matches the host reference",
          "[pipeline][examples][norm][f16]") {
  auto dx_kernel = ex::make_layer_norm_bwd_dx();
  auto dwdb_kernel = ex::make_layer_norm_bwd_dwdb();
  for (auto [rows, cols, programs] : kNormShapes) {
    INFO(rows << " x " << cols << ", " << programs << " programs, seed " << kSeed);
    std::mt19937 rng(kSeed + static_cast<std::uint32_t>(rows * 131 + cols));
    const auto elems = static_cast<std::size_t>(rows * cols);
    auto x = random_values<ts::half>(elems, rng, 0.5f, 2.f), dy = random_values<ts::half>(elems, rng, 0.f, 1.f),
         w = random_values<ts::half>(cols, rng, 1.f, 0.5f);
    std::vector<float> mean(rows), rstd(rows);
    ex::layer_norm_stats(x, mean, rstd, rows, cols, 1e-5f);
    auto dx = poisoned<ts::half>(elems), dw = poisoned<ts::half>(cols), db = poisoned<ts::half>(cols);
    auto dw_partial = poisoned<float>(programs * cols), db_partial = poisoned<float>(programs * cols);
    const auto m = static_cast<std::int32_t>(rows), n = static_cast<std::int32_t>(cols);
    dx_kernel[ex::norm_bwd_dx_options(cols, programs, kInterp)](x, dy, dx, w, mean, rstd, dw_partial, db_partial, n,
                                                                  m, n);
    dwdb_kernel[ex::partial_sum_options(cols, kInterp)](dw_partial, db_partial, dw, db,
                                                          static_cast<std::int32_t>(programs), n);
    std::vector<double> rdx(elems), rdw(cols), rdb(cols);
    ex::layer_norm_bwd_reference(x, dy, w, mean, rstd, rdx, rdw, rdb, rows, cols);
    // f16 outputs: one rounding (2^-11 relative) on f32 arithmetic.
    require_close("dx", ex::compare<ts::half>(dx, rdx, 4e-3), 2e-3);
    require_close("dw", ex::compare<ts::half>(dw, rdw, 4e-3), 2e-3);
    require_close("db", ex::compare<ts::half>(db, rdb, 4e-3), 2e-3);
  }
}

TEST_CASE("RMSNorm backward (dx, then dw from per-program partials) matches the host reference",
          "[pipeline][examples][norm][f16]") {
  auto dx_kernel = ex::make_rms_norm_bwd_dx();
  auto dw_kernel = ex::make_rms_norm_bwd_dw();
  for (auto [rows, cols, programs] : kNormShapes) {
    // One column: x_hat = +-1 and dx = w*dy * (1 - x_hat^2) * rstd is all cancellation (it is
    // ~eps), so f32 cannot give it a relative accuracy; the layer norm test covers that shape.
    if (cols == 1) continue;
    INFO(rows << " x " << cols << ", " << programs << " programs, seed " << kSeed);
    std::mt19937 rng(kSeed + static_cast<std::uint32_t>(rows * 137 + cols));
    const auto elems = static_cast<std::size_t>(rows * cols);
    auto x = random_values<ts::half>(elems, rng, 0.5f, 2.f), dy = random_values<ts::half>(elems, rng, 0.f, 1.f),
         w = random_values<ts::half>(cols, rng, 1.f, 0.5f);
    std::vector<float> rstd(rows);
    ex::rms_norm_stats(x, rstd, rows, cols, 1e-6f);
    auto dx = poisoned<ts::half>(elems), dw = poisoned<ts::half>(cols);
    auto dw_partial = poisoned<float>(programs * cols);
    const auto m = static_cast<std::int32_t>(rows), n = static_cast<std::int32_t>(cols);
    dx_kernel[ex::norm_bwd_dx_options(cols, programs, kInterp)](x, dy, dx, w, rstd, dw_partial, n, m, n);
    dw_kernel[ex::partial_sum_options(cols, kInterp)](dw_partial, dw, static_cast<std::int32_t>(programs), n);
    std::vector<double> rdx(elems), rdw(cols);
    ex::rms_norm_bwd_reference(x, dy, w, rstd, rdx, rdw, rows, cols);
    require_close("dx", ex::compare<ts::half>(dx, rdx, 4e-3), 2e-3);
    require_close("dw", ex::compare<ts::half>(dw, rdw, 4e-3), 2e-3);
  }
}

TEST_CASE("the norm backward and online softmax kernels compile for sm_80 and sm_90a",
          "[pipeline][examples][norm][codegen]") {
  const std::string ptxas = tessera::test::ptxas_or_skip();
  const std::int64_t rows = 64, cols = 4096, programs = 16;
  std::vector<ts::half> x(rows * cols), dy(x.size()), dx(x.size()), w(cols), dw(cols), db(cols);
  std::vector<float> mean(rows), rstd(rows), dwp(programs * cols), dbp(programs * cols), fx(rows * cols), fo(fx.size());
  const auto m = static_cast<std::int32_t>(rows), n = static_cast<std::int32_t>(cols),
             p = static_cast<std::int32_t>(programs);
  auto ln_dx = ex::make_layer_norm_bwd_dx();
  auto ln_dwdb = ex::make_layer_norm_bwd_dwdb();
  auto rms_dx = ex::make_rms_norm_bwd_dx();
  auto rms_dw = ex::make_rms_norm_bwd_dw();
  auto osm = ex::make_online_softmax();
  struct Case {
    const char* name;
    ts::detail::KernelDef* def;
    ts::LaunchOptions opts;
    std::vector<ts::ArgValue> args;
  };
  auto values = [](auto& k, auto&&... a) {
    auto v = std::remove_reference_t<decltype(k)>::arg_values(a...);
    return std::vector<ts::ArgValue>(v.begin(), v.end());
  };
  std::vector<Case> cases;
  cases.push_back({"layer_norm_bwd_dx", &ln_dx.def(), ex::norm_bwd_dx_options(cols, programs),
                   values(ln_dx, x, dy, dx, w, mean, rstd, dwp, dbp, n, m, n)});
  cases.push_back({"layer_norm_bwd_dx 8192", &ln_dx.def(), ex::norm_bwd_dx_options(8192, programs),
                   values(ln_dx, x, dy, dx, w, mean, rstd, dwp, dbp, 8192, 32, 8192)});
  cases.push_back({"layer_norm_bwd_dwdb", &ln_dwdb.def(), ex::partial_sum_options(cols),
                   values(ln_dwdb, dwp, dbp, dw, db, p, n)});
  cases.push_back({"rms_norm_bwd_dx", &rms_dx.def(), ex::norm_bwd_dx_options(1000, programs),
                   values(rms_dx, x, dy, dx, w, rstd, dwp, 1000, m, 1000)});
  cases.push_back({"rms_norm_bwd_dw", &rms_dw.def(), ex::partial_sum_options(1000), values(rms_dw, dwp, dw, p, 1000)});
  cases.push_back({"online_softmax", &osm.def(), ex::online_softmax_options(rows),
                   values(osm, fx, fo, n, n)});
  for (auto& c : cases)
    for (const std::string arch : {"sm_80", "sm_90a"}) {
      INFO(c.name << " for " << arch);
      const auto a = ts::detail::compile_only(*c.def, c.opts, c.args, arch);
      CHECK(a.format == "ptx");
      if (ptxas.empty()) continue;
      tessera::test::ScratchFile file(a.assembly, ".ptx");
      const auto r = tessera::test::run_command(ptxas + " -arch=" + arch + " " + file.path() + " -o /dev/null");
      INFO(r.output);
      CHECK(r.exit_code == 0);
    }
}
