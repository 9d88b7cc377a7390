// Shared by the launch/runtime API tests: a scale kernel with a known result, and a way to get the
// message of one expected exception type (a different type is reported, not swallowed).
#pragma once
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <typeinfo>
#include <vector>

namespace ts = tessera;

namespace launch_test {

// out[i] = x[i] * alpha for i < n, in programs of BLOCK elements. Every test makes its own kernel
// object: the specialization cache lives in it, so tests do not see each other's compiles.
inline auto make_scale(const char* name = "scale") {
  return ts::kernel(name, [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n, ts::Float alpha) {
    const int block = ts::meta("BLOCK");
    auto offs = ts::program_id(0) * block + ts::arange(0, block);
    auto mask = offs < n;
    ts::store(out + offs, ts::load(x + offs, mask) * alpha, mask);
  });
}

inline ts::LaunchOptions scale_options(std::int32_t n, std::int64_t block = 64) {
  return {.grid = {ts::cdiv(std::int64_t{n}, block)}, .meta = {{"BLOCK", block}},
          .executor = ts::Executor::Interpreter};
}

inline std::vector<float> iota_floats(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) - 7.0f;
  return v;
}

// Runs a correct launch of `k` (a make_scale kernel) and says whether every element came out
// right: after a failed launch this shows the kernel object was left usable.
template <class K>
bool scale_works(K& k, std::int32_t n = 100, float alpha = 3.0f, std::int64_t block = 64) {
  const auto host = iota_floats(static_cast<std::size_t>(n));
  auto x = ts::Buffer<float>::from_host(host, ts::Executor::Interpreter);
  ts::Buffer<float> out(static_cast<std::size_t>(n), ts::Executor::Interpreter);
  k[scale_options(n, block)](x, out, n, alpha);
  const auto got = out.to_host();
  for (std::int32_t i = 0; i < n; ++i)
    if (got[static_cast<std::size_t>(i)] != host[static_cast<std::size_t>(i)] * alpha) return false;
  return true;
}

// The message of the E that `f` throws; "(no error)" or "(wrong exception ...)" otherwise, so a
// CHECK_THAT on the result fails showing what actually happened.
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(wrong exception ") + typeid(e).name() + ": " + e.what() + ")";
  }
  return "(no error)";
}

// "<file>:<line>:" as tessera's errors name a user's source line; `file` is this test's file name.
inline std::string at_line(const char* file, int line) { return std::string(file) + ":" + std::to_string(line) + ":"; }

// An address as tessera's messages print it ("{:#x}").
inline std::string fmt_address(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
  return buf;
}

}  // namespace launch_test
