// Comparing a GPU result with its reference element by element: every GPU test checks its
// outputs through this header, never through a whole-vector norm (which lets dozens of wrong
// elements through when the rest are right).
//
// An element passes when |got - want| <= rel * |want| + abs, with the bounds of DESIGN.md
// ("Testing, in tiers") by default:
//   f32   rel 1e-5      f16, bf16   rel 1e-2      f64   rel 1e-12
//   integers and bool: exact (rel = abs = 0)
// and the absolute floor abs = rel * scale. `scale` is the magnitude of the terms the kernel adds
// or subtracts to make the element: 1 by default (the tests' kernels combine values of order 1),
// larger where a test says so. An output near 0 is usually the small difference of such terms and
// carries their absolute rounding error, not an error relative to itself, so near 0 the bound is
// rel * scale absolute; above `scale` in magnitude it is purely relative (rel * |want| dominates).
// A wrong element (another element's value, 0, the poison, a stale value) is off by far more than
// either part. Tests whose operations have their own error model (math against libm in ulps) pass
// a bound per element to compare_with() instead.
//
// NaN matches only NaN and an infinity only the same infinity, so a NaN or infinite poison left in
// an unwritten element fails. Exact comparisons of integers compare in their own types (64-bit
// values are never rounded through double); compare_bits() compares the bytes of each element.
//
// A comparison counts the offending elements and keeps the first kShown of them (index, got, want,
// bound) and the worst one (largest error / bound): check_close() prints those when it fails.
#pragma once
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gpu_test {

namespace ts = tessera;

struct Tolerance {
  double rel = 0, abs = 0;
  static Tolerance exact() { return {}; }
  // rel relative to the element, and rel * scale absolute near 0 (see the top of this file).
  static Tolerance relative(double rel, double scale = 1.0) { return {rel, rel * scale}; }
};

template <class T>
inline constexpr bool is_float_v =
    std::is_floating_point_v<T> || std::is_same_v<T, ts::half> || std::is_same_v<T, ts::bfloat16>;

// DESIGN.md's bound for elements of type T, with the absolute floor rel * scale.
template <class T>
Tolerance default_tolerance(double scale = 1.0) {
  if constexpr (std::is_same_v<T, float>) return Tolerance::relative(1e-5, scale);
  else if constexpr (std::is_same_v<T, double>) return Tolerance::relative(1e-12, scale);
  else if constexpr (std::is_same_v<T, ts::half> || std::is_same_v<T, ts::bfloat16>) return Tolerance::relative(1e-2, scale);
  else return Tolerance::exact();
}

template <class T>
double as_double(const T& v) {
  if constexpr (std::is_same_v<T, ts::half> || std::is_same_v<T, ts::bfloat16>) return static_cast<double>(static_cast<float>(v));
  else return static_cast<double>(v);
}

template <class T>
std::string show(const T& v) {
  char buf[64];
  if constexpr (std::is_same_v<T, bool>) return v ? "1" : "0";
  else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return std::to_string(static_cast<long long>(v));
  else if constexpr (std::is_integral_v<T>) return std::to_string(static_cast<unsigned long long>(v));
  else if constexpr (std::is_same_v<T, double>) std::snprintf(buf, sizeof buf, "%.17g", v);
  else std::snprintf(buf, sizeof buf, "%.9g", as_double(v));
  return buf;
}

struct Offender {
  std::size_t index = 0;
  std::string got, want;
  double bound = 0;  // the allowed |got - want| (0: exact)
};

struct Report {
  static constexpr std::size_t kShown = 8;
  std::size_t elements = 0, offenders = 0;
  std::string size_mismatch;     // non-empty when got and want differ in length
  std::vector<Offender> first;   // the first kShown offenders, in index order
  Offender worst;                // the largest error relative to its bound
  double worst_ratio = -1;       // its |got - want| / bound (infinite for a NaN, an infinity or an exact bound)

  bool ok() const { return offenders == 0 && size_mismatch.empty(); }

  void add(std::size_t i, std::string got, std::string want, double bound, double ratio) {
    ++offenders;
    Offender o{i, std::move(got), std::move(want), bound};
    if (ratio > worst_ratio) worst_ratio = ratio, worst = o;
    if (first.size() < kShown) first.push_back(std::move(o));
  }

  std::string str() const {
    std::ostringstream s;
    if (!size_mismatch.empty()) s << size_mismatch << "; ";
    s << offenders << " of " << elements << " elements off";
    if (offenders == 0) return s.str();
    auto one = [&](const Offender& o) {
      s << "[" << o.index << "] got " << o.got << ", want " << o.want;
      if (o.bound > 0) s << " (bound " << o.bound << ")";
    };
    s << "; first:";
    for (const Offender& o : first) {
      s << "\n  ";
      one(o);
    }
    if (offenders > first.size()) s << "\n  ...";
    s << "\n  worst: ";
    one(worst);
    if (std::isfinite(worst_ratio)) s << ", " << worst_ratio << " x the bound";
    return s.str();
  }
};

namespace detail {

template <class G, class W>
Report start(const G& got, const W& want) {
  Report r;
  r.elements = std::min(got.size(), want.size());
  if (got.size() != want.size())
    r.size_mismatch = "got " + std::to_string(got.size()) + " elements, want " + std::to_string(want.size());
  return r;
}

}  // namespace detail

// Floating-point elements against a bound per element: bound(i) is the allowed |got[i] - want[i]|.
template <class G, class W, class Bound>
Report compare_with(const G& got, const W& want, Bound bound) {
  using GT = typename G::value_type;
  using WT = typename W::value_type;
  static_assert(is_float_v<GT> || is_float_v<WT>, "compare_with() is for floating-point results");
  Report r = detail::start(got, want);
  for (std::size_t i = 0; i < r.elements; ++i) {
    const GT gv = got[i];
    const WT wv = want[i];
    const double g = as_double(gv), w = as_double(wv);
    if (std::isnan(g) || std::isnan(w)) {
      if (!(std::isnan(g) && std::isnan(w))) r.add(i, show(gv), show(wv), 0, INFINITY);
      continue;
    }
    if (std::isinf(g) || std::isinf(w)) {
      if (g != w) r.add(i, show(gv), show(wv), 0, INFINITY);
      continue;
    }
    const double err = std::fabs(g - w), allowed = bound(i);
    if (!(err <= allowed)) r.add(i, show(gv), show(wv), allowed, allowed > 0 ? err / allowed : INFINITY);
  }
  return r;
}

// got against want within tol: integers and bool exactly (in their own types), floats per element.
template <class G, class W>
Report compare(const G& got, const W& want, Tolerance tol) {
  using GT = typename G::value_type;
  using WT = typename W::value_type;
  if constexpr (is_float_v<GT> || is_float_v<WT>) {
    return compare_with(got, want, [&](std::size_t i) { return tol.rel * std::fabs(as_double(WT(want[i]))) + tol.abs; });
  } else {
    Report r = detail::start(got, want);
    for (std::size_t i = 0; i < r.elements; ++i) {
      const GT g = got[i];
      const WT w = want[i];
      bool same;
      if constexpr (std::is_same_v<GT, bool> || std::is_same_v<WT, bool>) same = static_cast<bool>(g) == static_cast<bool>(w);
      else same = std::cmp_equal(g, w);
      if (!same) r.add(i, show(g), show(w), 0, INFINITY);
    }
    return r;
  }
}

// got against want with the default bound of got's element type (exact for integers).
template <class G, class W>
Report compare(const G& got, const W& want) {
  return compare(got, want, default_tolerance<typename G::value_type>());
}

// Bit for bit (data movement: a transpose, a permute): element i offends when its bytes differ.
template <class T>
Report compare_bits(const std::vector<T>& got, const std::vector<T>& want) {
  Report r = detail::start(got, want);
  for (std::size_t i = 0; i < r.elements; ++i)
    if (std::memcmp(static_cast<const void*>(&got[i]), static_cast<const void*>(&want[i]), sizeof(T)) != 0)
      r.add(i, show(got[i]), show(want[i]), 0, INFINITY);
  return r;
}

// A Catch check of a report: on failure the message names `what` and lists the offenders.
inline void check_report(const std::string& what, const Report& r) {
  INFO(what << ": " << r.str());
  CHECK(r.ok());
}

template <class G, class W>
void check_close(const std::string& what, const G& got, const W& want, Tolerance tol) {
  check_report(what, compare(got, want, tol));
}

template <class G, class W>
void check_close(const std::string& what, const G& got, const W& want) {
  check_report(what, compare(got, want));
}

template <class G, class W>
void check_equal(const std::string& what, const G& got, const W& want) {
  check_report(what, compare(got, want, Tolerance::exact()));
}

template <class T>
void check_bits(const std::string& what, const std::vector<T>& got, const std::vector<T>& want) {
  check_report(what, compare_bits(got, want));
}

}  // namespace gpu_test
