// Correctness checks for the benchmarks (tessera_bench, tessera_bench_autotune): every timed kernel
// is run once on outputs poisoned with NaN, and what it wrote is compared element by element with
// a host reference before the clock runs. Each JSON line then carries
//   "ok": true|false, "check": "<what was compared, against which bound, the worst error>"
// and a failing comparison prints its first offenders to stderr, one line each:
//   CHECK FAILED tessera <case>: <output> row R col C: got G, want W (bound B)
// tests/bench/compare.py marks such a case FAILED and exits non-zero; triton_ref.py does the same
// on Triton's side against torch.
#pragma once
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cuda/cuda_driver.hpp"
#include "examples/norm_kernels.hpp"

namespace bench {

inline std::string fmt_g(double v, int digits = 3) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// The outcome of one case's checks: every comparison adds a summary; one failure fails the case.
struct Check {
  std::string case_name;
  bool ok = true;
  std::string detail;
  void note(const std::string& s) { detail += (detail.empty() ? "" : "; ") + s; }
  void fail(const std::string& s) {
    ok = false;
    note("FAILED " + s);
    std::fprintf(stderr, "CHECK FAILED tessera %s: %s\n", case_name.c_str(), s.c_str());
  }
};

// Element-wise comparison: element i passes when |got - want| <= atol + rtol * |want|, with
// atol = atol_abs + atol_rms * rms(want) (so that elements near zero are held to the precision of
// the output's scale); a NaN or an infinity never passes. `cols` names positions as row and column;
// `rows` maps the compared rows to the matrix's rows when only sampled rows are compared.
template <class GotRange, class WantRange>
void expect_close(Check& c, const std::string& what, const GotRange& got, const WantRange& want, std::int64_t cols, double rtol, double atol_abs, double atol_rms = 0,
                  std::span<const std::int64_t> rows = {}) {
  if (got.size() != want.size()) {
    c.fail(what + ": " + std::to_string(got.size()) + " elements, the reference has " + std::to_string(want.size()));
    return;
  }
  double ss = 0;
  for (const auto& w : want) ss += static_cast<double>(w) * static_cast<double>(w);
  const double rms = std::sqrt(ss / static_cast<double>(std::max<std::size_t>(want.size(), 1)));
  const double atol = atol_abs + atol_rms * rms;
  std::int64_t bad = 0;
  double worst = 0;  // the largest |got - want| / bound
  std::string first;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    const double bound = atol + rtol * std::abs(w), err = std::abs(g - w);
    if (err <= bound) {
      if (bound > 0) worst = std::max(worst, err / bound);
      continue;
    }
    worst = INFINITY;
    const std::int64_t local_row = static_cast<std::int64_t>(i) / cols, col = static_cast<std::int64_t>(i) % cols;
    const std::int64_t row = rows.empty() ? local_row : rows[static_cast<std::size_t>(local_row)];
    const std::string where = cols > 1 || !rows.empty() ? "row " + std::to_string(row) + " col " + std::to_string(col)
                                                         : "element " + std::to_string(i);
    const std::string line = what + " " + where + ": got " + fmt_g(g, 8) + ", want " + fmt_g(w, 8) + " (bound " +
                             fmt_g(bound) + ")";
    if (bad < 5) std::fprintf(stderr, "CHECK FAILED tessera %s: %s\n", c.case_name.c_str(), line.c_str());
    if (bad++ == 0) first = line;
  }
  const std::string bound_text =
      atol_abs == 0 && atol_rms == 0 && rtol == 0
          ? std::string("exact")
          : "|err| <= " + std::string(atol_abs > 0 || atol_rms == 0 ? fmt_g(atol_abs) + " + " : "") +
                (atol_rms > 0 ? fmt_g(atol_rms) + "*rms(want) + " : "") + fmt_g(rtol) + "*|want|";
  const std::string scope = rows.empty() ? "" : " (" + std::to_string(rows.size()) + " sampled rows)";
  if (bad == 0) {
    c.note(what + ": " + std::to_string(want.size()) + " elements" + scope + " " +
           (bound_text == "exact" ? bound_text : "within " + bound_text + ", worst err/bound " + fmt_g(worst)));
  } else {
    c.ok = false;
    c.note("FAILED " + what + ": " + std::to_string(bad) + " of " + std::to_string(want.size()) + " elements" + scope +
           " off (" + bound_text + ", rms " + fmt_g(rms) + "), first: " + first);
  }
}

// Exact equality (integer-valued or exactly computed results), NaN never equal.
template <class GotRange, class WantRange>
void expect_equal(Check& c, const std::string& what, const GotRange& got, const WantRange& want) {
  expect_close(c, what, got, want, 1, 0.0, 0.0);
}

// Rows spread over the matrix for references too slow to run on every row: the first and last
// rows, evenly spaced ones, and scattered ones (odd positions, far from block boundaries).
inline std::vector<std::int64_t> sample_rows(std::int64_t rows, int count = 64) {
  std::vector<std::int64_t> r;
  if (rows <= count) {
    for (std::int64_t i = 0; i < rows; ++i) r.push_back(i);
    return r;
  }
  const int even = count / 2;
  for (int k = 0; k < even; ++k) r.push_back(static_cast<std::int64_t>(k) * (rows - 1) / (even - 1));
  for (int k = 0; r.size() < static_cast<std::size_t>(count) && k < 4 * count; ++k) {
    const auto v = static_cast<std::int64_t>((static_cast<std::uint64_t>(k + 1) * 2654435761u) % static_cast<std::uint64_t>(rows));
    if (std::find(r.begin(), r.end(), v) == r.end()) r.push_back(v);
  }
  std::sort(r.begin(), r.end());
  return r;
}

// The elements of `rows` (each `cols` long) of a row-major matrix, concatenated.
template <class T>
std::vector<T> gather_rows(const std::vector<T>& m, std::span<const std::int64_t> rows, std::int64_t cols) {
  std::vector<T> out;
  out.reserve(rows.size() * static_cast<std::size_t>(cols));
  for (auto r : rows) {
    const auto first = m.begin() + static_cast<std::ptrdiff_t>(r * cols);
    out.insert(out.end(), first, first + static_cast<std::ptrdiff_t>(cols));
  }
  return out;
}

// Every row of a softmax output: all elements finite and in [0, 1], and the row sums to 1 within
// `tol` (summed in double). Cheap enough for every row; the element-wise reference runs on samples.
inline void expect_softmax_rows(Check& c, const std::string& what, std::span<const float> got, std::int64_t rows,
                                std::int64_t cols, double tol) {
  std::int64_t bad_rows = 0;
  double worst = 0;
  std::string first;
  for (std::int64_t r = 0; r < rows; ++r) {
    double s = 0;
    bool finite = true;
    for (std::int64_t j = 0; j < cols; ++j) {
      const float v = got[static_cast<std::size_t>(r * cols + j)];
      finite = finite && std::isfinite(v) && v >= 0.0f && v <= 1.0f;
      s += v;
    }
    const double err = std::abs(s - 1.0);
    if (finite && err <= tol) {
      worst = std::max(worst, err);
      continue;
    }
    const std::string line = what + " row " + std::to_string(r) + ": " +
                             (finite ? "sums to " + fmt_g(s) : std::string("holds a NaN, an infinity or a value outside [0, 1]"));
    if (bad_rows < 5) std::fprintf(stderr, "CHECK FAILED tessera %s: %s\n", c.case_name.c_str(), line.c_str());
    if (bad_rows++ == 0) first = line;
  }
  if (bad_rows == 0) {
    c.note(what + ": all " + std::to_string(rows) + " rows finite, in [0, 1], sum 1 within " + fmt_g(tol) +
           " (worst " + fmt_g(worst) + ")");
  } else {
    c.ok = false;
    c.note("FAILED " + what + ": " + std::to_string(bad_rows) + " of " + std::to_string(rows) +
           " rows not finite in [0, 1] or not summing to 1 within " + fmt_g(tol) + ", first: " + first);
  }
}

// Softmax rows: every row finite, in [0, 1] and summing to 1 within 1e-4; sampled rows element by
// element against the reference in double, within 1e-4 relative.
inline void check_softmax(Check& c, const std::vector<float>& x, const std::vector<float>& got, std::int64_t rows,
                          std::int64_t cols) {
  expect_softmax_rows(c, "out", got, rows, cols, 1e-4);
  const auto sampled = sample_rows(rows);
  const auto xs = gather_rows(x, sampled, cols);
  std::vector<double> want(xs.size());
  tessera_examples::softmax_reference_f64(xs, want, static_cast<std::int64_t>(sampled.size()), cols);
  expect_close(c, "out", gather_rows(got, sampled, cols), want, cols, 1e-4, 1e-12, 0, sampled);
}

// NaN in every element (all-ones bytes are a NaN in f32 and f16), so that an element the kernel
// does not write fails its check.
template <class T>
void poison(const tessera::cuda::CudaDriver& drv, const tessera::Buffer<T>& b) {
  drv.memset_d8(reinterpret_cast<tessera::cuda::CUdeviceptr>(b.data()), 0xFF, b.size() * sizeof(T));
}

// Random operands: floats in [-1, 1), int8 over its whole range.
template <class T>
std::vector<T> random_operand(std::size_t count, std::mt19937& rng) {
  std::vector<T> v(count);
  if constexpr (std::is_same_v<T, std::int8_t>) {
    std::uniform_int_distribution<int> dist(-128, 127);
    for (auto& x : v) x = static_cast<T>(dist(rng));
  } else {
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (auto& x : v) x = T(dist(rng));
  }
  return v;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Timed as triton.testing.do_bench times: before each repetition a 256 MB memset flushes the L2,
// and the kernel is queued behind it, so that the events time the kernel on the GPU, not the
// host's launch work in front of an idle GPU (which would charge ~5 us to every kernel).
template <class F>
double time_ms(tessera::cuda::CudaDriver& drv, F&& f, int reps) {
  static const std::size_t flush_bytes = std::size_t{256} << 20;
  static const tessera::cuda::CUdeviceptr flush = drv.alloc(flush_bytes);
  std::vector<double> t;
  auto a = drv.create_event(), b = drv.create_event();
  for (int i = 0; i < reps; ++i) {
    drv.memset_d8(flush, 0, flush_bytes);
    drv.record_event(a, nullptr);
    f();
    drv.record_event(b, nullptr);
    drv.synchronize_event(b);
    t.push_back(drv.elapsed_ms(a, b));
  }
  drv.destroy_event(a);
  drv.destroy_event(b);
  return median(t);
}

// Times each configuration and prints its TFLOP/s (`flops` per launch), then the best that
// passed its check. run_once(cfg, label) launches once on poisoned output, checks it and returns
// {launch, failures}; a configuration that cannot run (a tessera::Error) is reported and skipped.
// Returns the number of configurations whose check failed.
template <class Config, class Name, class RunOnce>
int time_configs(tessera::cuda::CudaDriver& drv, const std::string& name, double flops, const std::vector<Config>& configs,
                 Name config_name, RunOnce run_once) {
  int failed = 0;
  double best = 0;
  std::string best_cfg;
  for (const auto& cfg : configs) {
    const std::string cfg_name = config_name(cfg);
    try {
      auto [launch, bad] = run_once(cfg, name + " " + cfg_name);
      for (int i = 0; i < 3; ++i) launch();
      const double tflops = flops / (time_ms(drv, launch, 20) * 1e-3) / 1e12;
      std::printf("tessera %-34s %-14s %8.1f TFLOP/s  check %s\n", name.c_str(), cfg_name.c_str(), tflops, bad ? "FAILED" : "ok");
      std::fflush(stdout);
      if (bad) ++failed;
      else if (tflops > best) best = tflops, best_cfg = cfg_name;
    } catch (const tessera::Error& e) {
      std::printf("tessera %-34s %-14s could not run: %s\n", name.c_str(), cfg_name.c_str(), e.what());
    }
  }
  std::printf("BEST tessera %s %.1f TFLOP/s (%s)\n", name.c_str(), best, best_cfg.c_str());
  return failed;
}

inline std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) { out += ' '; continue; }
    out += ch;
  }
  return out;
}

}  // namespace bench
