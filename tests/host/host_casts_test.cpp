// Casts from every dtype to every dtype on the host targets against the interpreter, bit for bit:
// one kernel per source type stores its input converted to all eleven types. Inputs cover what
// the casts define specially (ops.def): NaN and infinities, values out of an integer type's
// range (saturating), fractions (truncated toward zero), -0, f16 and bf16 subnormals, integer
// extremes.
#include "host_test_util.hpp"

using namespace host_test;

namespace {

constexpr int kWarps32[] = {1, 4, 32};
constexpr int kWarps64[] = {2};

using Outs = std::tuple<std::vector<std::uint8_t>, std::vector<std::int8_t>, std::vector<std::uint8_t>,
                        std::vector<std::int16_t>, std::vector<std::int32_t>, std::vector<std::uint32_t>,
                        std::vector<std::int64_t>, std::vector<ts::half>, std::vector<ts::bfloat16>,
                        std::vector<float>, std::vector<double>>;

template <class From>
auto make_cast_all() {
  return ts::kernel("cast_all", [](ts::Ptr<From> x, ts::Ptr<bool> o_b, ts::Ptr<std::int8_t> o_i8,
                                   ts::Ptr<std::uint8_t> o_u8, ts::Ptr<std::int16_t> o_i16, ts::Ptr<std::int32_t> o_i32,
                                   ts::Ptr<std::uint32_t> o_u32, ts::Ptr<std::int64_t> o_i64, ts::Ptr<ts::half> o_f16,
                                   ts::Ptr<ts::bfloat16> o_bf16, ts::Ptr<float> o_f32, ts::Ptr<double> o_f64,
                                   ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto v = ts::load(x + offs, mask);
    ts::store(o_b + offs, v.template to<bool>(), mask);
    ts::store(o_i8 + offs, v.template to<std::int8_t>(), mask);
    ts::store(o_u8 + offs, v.template to<std::uint8_t>(), mask);
    ts::store(o_i16 + offs, v.template to<std::int16_t>(), mask);
    ts::store(o_i32 + offs, v.template to<std::int32_t>(), mask);
    ts::store(o_u32 + offs, v.template to<std::uint32_t>(), mask);
    ts::store(o_i64 + offs, v.template to<std::int64_t>(), mask);
    ts::store(o_f16 + offs, v.template to<ts::half>(), mask);
    ts::store(o_bf16 + offs, v.template to<ts::bfloat16>(), mask);
    ts::store(o_f32 + offs, v.template to<float>(), mask);
    ts::store(o_f64 + offs, v.template to<double>(), mask);
  });
}

template <class From>
std::vector<From> cast_inputs(std::size_t n, std::mt19937& rng) {
  std::vector<From> v(n);
  if constexpr (std::is_integral_v<From>) {
    v = random_values<From>(n, rng, static_cast<double>(std::numeric_limits<From>::min()),
                            static_cast<double>(std::numeric_limits<From>::max()));
    const From special[] = {0, 1, std::numeric_limits<From>::min(), std::numeric_limits<From>::max(), From(127),
                            From(128), From(255), From(256)};
    for (std::size_t i = 0; i < n && i < 64; ++i) v[i * 5 % n] = special[i % std::size(special)];
  } else {
    // Magnitudes from 1e-8 to 1e12 (f16 and bf16 saturate to inf above their ranges), both signs.
    std::uniform_real_distribution<double> exponent(-8, 12), mantissa(1, 10);
    std::bernoulli_distribution negative(0.5);
    for (auto& x : v) {
      const double m = mantissa(rng) * std::pow(10.0, std::floor(exponent(rng)));
      x = static_cast<From>(negative(rng) ? -m : m);
    }
    const double special[] = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 127.5, -128.5, 255.5, 65504, 70000,
                              2147483648.0, -2147483649.0, 4294967296.0, 9.3e18, -9.3e18, 6e-8, 1e-40,
                              INFINITY, -INFINITY, NAN};
    for (std::size_t i = 0; i < n && i < 64; ++i) v[i * 7 % n] = static_cast<From>(special[i % std::size(special)]);
  }
  return v;
}

template <std::size_t I = 0>
void check_outputs(const std::string& what, const Outs& got, const Outs& want) {
  if constexpr (I < std::tuple_size_v<Outs>) {
    static const char* names[] = {"bool", "i8", "u8", "i16", "i32", "u32", "i64", "f16", "bf16", "f32", "f64"};
    expect_match(what + " to " + names[I], std::get<I>(got), std::get<I>(want));
    check_outputs<I + 1>(what, got, want);
  }
}

}  // namespace

TEMPLATE_TEST_CASE("casts from every dtype to every dtype on the host targets match the interpreter",
                   "[host][casts]", float, double, ts::half, ts::bfloat16, std::int8_t, std::uint8_t, std::int16_t,
                   std::int32_t, std::uint32_t, std::int64_t) {
  using From = TestType;
  auto k = make_cast_all<From>();
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{100003}}) {
    if (skip_when_sanitized(n)) continue;
    std::mt19937 rng(kSeed + static_cast<std::uint32_t>(n));
    const auto x = cast_inputs<From>(static_cast<std::size_t>(n), rng);
    auto run = [&](ts::Executor e, int warps) {
      Outs o{std::vector<std::uint8_t>(n, 0x55), poisoned<std::int8_t>(n), poisoned<std::uint8_t>(n),
             poisoned<std::int16_t>(n), poisoned<std::int32_t>(n), poisoned<std::uint32_t>(n),
             poisoned<std::int64_t>(n), poisoned<ts::half>(n), poisoned<ts::bfloat16>(n), poisoned<float>(n),
             poisoned<double>(n)};
      std::vector<ts::ArgValue> args = {ts::ArgValue::pointer(const_cast<From*>(x.data()), ts::dtype_of<From>, n * sizeof(From)),
                                        ts::ArgValue::pointer(std::get<0>(o).data(), ts::DType::I1, n)};
      auto add = [&](auto& v) {
        using T = typename std::remove_reference_t<decltype(v)>::value_type;
        args.push_back(ts::ArgValue::pointer(v.data(), ts::dtype_of<T>, v.size() * sizeof(T)));
      };
      std::apply([&](auto&, auto&... rest) { (add(rest), ...); }, o);
      args.push_back(ts::ArgValue::integer(n, ts::DType::I32));
      const int block = block_for(e, warps, n, 1);
      ts::detail::launch(k.def(), {.grid = {ts::cdiv(n, block)}, .meta = {{"BLOCK", block}}, .num_warps = warps,
                                   .executor = e}, args);
      return o;
    };
    against_interpreter(std::string("cast from ") + type_name<From>() + ", n = " + std::to_string(n),
                        run, [](const std::string& what, const Outs& got, const Outs& want) { check_outputs(what, got, want); },
                        kWarps32, kWarps64);
  }
}
