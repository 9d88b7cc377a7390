// Triton's rules for C++ numbers next to tiles (weak in arithmetic, strong in comparisons and
// minimum/maximum), for out-of-range constants, and for the conversion of a load's `other` and of
// a stored value to the pointee type (notes/triton_type_rules.md §1-3, read from Triton 3.6's
// semantic.py). Expected types and values come from those rules, computed here on the host.
#include "binary_ops.hpp"

using namespace conf;

namespace {

std::string binary_type_name(const std::string& a, const std::string& b) {
  return binary::triton_type(a, b, false).value_or("an error");
}

// The type of `x op s` for a tile of T and a C++ int (weak) as Triton types it, and of `x < s`
// (strong: the int is an i32).
template <class T>
std::string weak_int_type(bool div_or_mod) {
  const std::string t = name_of<T>();
  if (div_or_mod && (t == "f16" || t == "bf16")) return "f32";
  return t;
}
// x + 1, x / 2, x < 300 (or x < 3 for floats) and minimum(x, 1) over the edge values of T.
template <class T>
void run_scalar_operands() {
  using Add = decltype(std::declval<ts::Tile<T>>() + 1);
  using Div = decltype(std::declval<ts::Tile<T>>() / 2);
  using Min = decltype(ts::minimum(std::declval<ts::Tile<T>>(), 1));
  using A = typename Add::element_type;
  using D = typename Div::element_type;
  using M = typename Min::element_type;
  constexpr int kBig = std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t> ? 300 : 3;
  auto kernel = ts::kernel("conformance_scalars", [](ts::Ptr<T> a, ts::Ptr<A> add, ts::Ptr<D> div,
                                                     ts::Ptr<std::uint8_t> less, ts::Ptr<M> mn) {
    const auto offs = ts::arange(0, ts::meta("BLOCK"));
    const auto x = ts::load(a + offs);
    ts::store(add + offs, x + 1);
    ts::store(div + offs, x / 2);
    ts::store(less + offs, (x < kBig).template to<std::uint8_t>());
    ts::store(mn + offs, ts::minimum(x, 1));
  });
  const std::string tn = name_of<T>();
  const std::vector<T> xs = edge_values<T>();
  Case types("literal operand types " + tn);
  types.check(name_of<A>() == weak_int_type<T>(false), [&] { return tn + " + 1 is " + name_of<A>() + ", Triton's " + weak_int_type<T>(false); });
  types.check(name_of<D>() == weak_int_type<T>(true), [&] { return tn + " / 2 is " + name_of<D>() + ", Triton's " + weak_int_type<T>(true); });
  // minimum: strong (the 1 is an i32), bf16 in f32.
  const std::string min_want = tn == "bf16" ? "f32" : binary_type_name(tn, "i32");
  types.check(name_of<M>() == min_want, [&] { return "minimum(" + tn + ", 1) is " + name_of<M>() + ", Triton's " + min_want; });

  auto da = device_buffer(padded(xs, cast_ref<T>(0)));
  ts::Buffer<A> dadd(da.size(), executor());
  ts::Buffer<D> ddiv(da.size(), executor());
  ts::Buffer<std::uint8_t> dless(da.size(), executor());
  ts::Buffer<M> dmin(da.size(), executor());
  kernel[options(xs.size())](da, dadd, ddiv, dless, dmin);
  const auto add = dadd.to_host();
  const auto div = ddiv.to_host();
  const auto less = dless.to_host();
  const auto mn = dmin.to_host();
  Case c("x + 1, x / 2, x < " + std::to_string(kBig) + ", minimum(x, 1) for " + tn);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const T x = xs[i];
    if constexpr (is_int_v<T>) {
      c.check_value(add[i], static_cast<A>(static_cast<std::uint64_t>(x) + 1), show(x) + " + 1");
      c.check_value(div[i], static_cast<D>(x / 2), show(x) + " / 2");
      // Strong: the comparison is in promote(T, i32), so a u8 or i8 never wraps 300.
      const bool want_less = static_cast<long double>(x) < kBig;
      c.check(less[i] == (want_less ? 1 : 0), [&] { return show(x) + " < " + std::to_string(kBig) + " -> got " + std::to_string(less[i]); });
      c.check_value(mn[i], static_cast<M>(std::min<long double>(static_cast<long double>(x), 1)), "minimum(" + show(x) + ", 1)");
    } else {
      const long double v = to_ld(x);
      // x + 1 in double, then rounded to A: exact for f64, and a safe double rounding for the
      // narrower formats (double has more than 2p + 2 bits).
      const A want_add = [&] {
        if constexpr (std::is_same_v<A, double>) return static_cast<double>(v) + 1.0;
        else return round_to<A>(static_cast<double>(v) + 1.0);
      }();
      c.check_value(add[i], want_add, show(x) + " + 1");
      c.check_value(div[i], round_to<D>(static_cast<double>(v) / 2), show(x) + " / 2");
      const bool want_less = v < kBig;  // false for NaN
      c.check(less[i] == (want_less ? 1 : 0), [&] { return show(x) + " < 3 -> got " + std::to_string(less[i]); });
      const M want_min = is_nan(x) ? cast_ref<M>(1) : round_to<M>(std::min<long double>(v, 1));
      c.check_value(mn[i], want_min, "minimum(" + show(x) + ", 1)", /*zero_sign=*/false);
    }
  }
}

// A float tile stored through Ptr<D>, and a load of D whose masked lanes give `other`, where the
// values are converted as a cast (float -> int truncates, -1 -> u8 is 255, 300 -> u8 is 44).
template <class D>
void run_pointee_conversions() {
  auto kernel = ts::kernel("conformance_pointee", [](ts::Ptr<float> a, ts::Ptr<D> out, ts::Ptr<D> loaded) {
    const auto offs = ts::arange(0, ts::meta("BLOCK"));
    ts::store(out + offs, ts::load(a + offs));  // a float tile through Ptr<D>
    const auto none = offs < 0;                  // every lane masked: each gives `other`
    switch (static_cast<int>(ts::meta("OP"))) {
      case 0: ts::store(loaded + offs, ts::load(out + offs, none, -1)); break;
      case 1: ts::store(loaded + offs, ts::load(out + offs, none, 300)); break;
      default: ts::store(loaded + offs, ts::load(out + offs, none, 3.75f)); break;
    }
  });
  std::vector<float> xs;
  for (float v : {0.0f, 1.0f, -1.0f, 3.7f, -3.7f, 0.5f, 100.25f, 126.9f, 1.0f / 3})
    if (cast_in_range<D>(v)) xs.push_back(v);
  auto da = device_buffer(padded(xs, 0.0f));
  ts::Buffer<D> dout(da.size(), executor()), dloaded(da.size(), executor());
  const std::string dn = name_of<D>();
  for (int op = 0; op < 3; ++op) {
    kernel[options(xs.size(), op)](da, dout, dloaded);
    if (op == 0) {
      Case c("store f32 through Ptr<" + dn + ">");
      const auto out = dout.to_host();
      for (std::size_t i = 0; i < xs.size(); ++i) c.check_value(out[i], cast_ref<D>(xs[i]), show(xs[i]));
    }
    const auto loaded = dloaded.to_host();
    Case c("load of " + dn + " with other = " + (op == 0 ? "-1" : op == 1 ? "300" : "3.75f"));
    D want{};
    if (op == 2) want = cast_ref<D>(3.75f);
    else if constexpr (is_int_v<D>) want = static_cast<D>(op == 0 ? -1 : 300);  // wraps, as a cast
    else want = round_to<D>(op == 0 ? -1 : 300);
    for (std::size_t i = 0; i < xs.size(); ++i) c.check_value(loaded[i], want, "masked lane " + std::to_string(i));
  }
}

// An int constant that does not fit the type it takes is an error at the user's line (Triton:
// "Scalar 300 is out of range for type uint8"; "... unsigned tensor and a negative scalar").
void run_constant_errors() {
  auto check = [](const char* what, auto body) {
    Case c(std::string("error: ") + what);
    auto kernel = ts::kernel("conformance_constant_error", body);
    ts::Buffer<std::uint8_t> p(16, executor());
    ts::Buffer<std::int8_t> q(16, executor());
    try {
      kernel[options(16)](p, q);
      c.fail(std::string(what) + " was accepted");
    } catch (const ts::ProgramError& e) {
      const std::string msg = e.what();
      c.check(msg.find("does not fit") != std::string::npos && msg.find("promotion_test.cpp") != std::string::npos,
              [&] { return "the message does not name the constant and the line: " + msg; });
    }
  };
  check("u8 + 300", [](ts::Ptr<std::uint8_t> p, ts::Ptr<std::int8_t>) {
    const auto offs = ts::arange(0, 16);
    ts::store(p + offs, ts::load(p + offs) + 300);
  });
  check("u8 + -1", [](ts::Ptr<std::uint8_t> p, ts::Ptr<std::int8_t>) {
    const auto offs = ts::arange(0, 16);
    ts::store(p + offs, ts::load(p + offs) + -1);
  });
  check("i8 / 1000", [](ts::Ptr<std::uint8_t>, ts::Ptr<std::int8_t> q) {
    const auto offs = ts::arange(0, 16);
    ts::store(q + offs, ts::load(q + offs) / 1000);
  });
}

}  // namespace

TEST_CASE("conformance: C++ numbers next to tiles", "[conformance][promotion]") {
  for_each_type<AllTypes>([](auto t) { run_scalar_operands<typename decltype(t)::type>(); });
}

TEST_CASE("conformance: load other and stored values take the pointee type", "[conformance][promotion]") {
  for_each_type<AllTypes>([](auto t) { run_pointee_conversions<typename decltype(t)::type>(); });
}

TEST_CASE("conformance: constants that do not fit are errors", "[conformance][promotion]") {
  run_constant_errors();
}
