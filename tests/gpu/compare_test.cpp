// The GPU tests' comparison (compare.hpp) and the skip exit code (tests/skip.hpp), checked without
// a GPU: this program is a plain ctest entry, not part of tessera_gpu_tests.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "compare.hpp"
#include "tests/skip.hpp"

namespace ts = tessera;
using gpu_test::compare;
using gpu_test::Tolerance;

TEST_CASE("floats: a relative bound per element with an absolute floor near 0", "[compare]") {
  const std::vector<float> want = {1000.f, 1.f, 0.f, -0.5f};
  // 1000 may be off by 1e-5 * 1000 + 1e-5; 0 by the floor 1e-5 alone.
  CHECK(compare(std::vector<float>{1000.009f, 1.f, 9e-6f, -0.5f}, want).ok());
  const auto r = compare(std::vector<float>{1000.05f, 1.f, 2e-5f, -0.5f}, want);
  CHECK(r.offenders == 2);
  REQUIRE(r.first.size() == 2);
  CHECK(r.first[0].index == 0);
  CHECK(r.first[1].index == 2);
  CHECK(r.worst.index == 0);  // 0.05 is 5 x its bound of 1.001e-2; 2e-5 is 2 x 1e-5
  CHECK_THAT(r.str(), Catch::Contains("2 of 4 elements off") && Catch::Contains("[2] got 1.99999995e-05, want 0"));
}

TEST_CASE("one wrong element among many is found, not averaged away", "[compare]") {
  std::vector<ts::half> want(100000, ts::half(1.5f)), got = want;
  got[77777] = ts::half(1.75f);
  const auto r = compare(got, want);
  CHECK(r.offenders == 1);
  CHECK(r.worst.index == 77777);
  got[77777] = ts::half(1.5078125f);  // 8 f16 ulps above 1.5: within 1e-2 * 1.5 + 1e-2
  CHECK(compare(got, want).ok());
  std::vector<ts::bfloat16> bgot(3, ts::bfloat16(2.f)), bwant = bgot;
  bgot[1] = ts::bfloat16(2.015625f);  // one bf16 ulp above 2: within 1e-2 relative
  CHECK(compare(bgot, bwant).ok());
  bgot[2] = ts::bfloat16(2.0625f);
  CHECK(compare(bgot, bwant).offenders == 1);
}

TEST_CASE("NaN matches only NaN, an infinity only the same infinity", "[compare]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  CHECK(compare(std::vector<float>{nan, inf, -inf}, std::vector<float>{nan, inf, -inf}).ok());
  CHECK(compare(std::vector<float>{nan}, std::vector<float>{1.f}).offenders == 1);
  CHECK(compare(std::vector<float>{1.f}, std::vector<float>{nan}).offenders == 1);
  CHECK(compare(std::vector<float>{inf}, std::vector<float>{-inf}).offenders == 1);
  CHECK(compare(std::vector<float>{3e38f}, std::vector<float>{inf}).offenders == 1);
  std::vector<ts::half> poisoned(4, ts::half::from_bits(0x7f7f));  // the GPU tests' f16 poison: a NaN
  CHECK(compare(poisoned, std::vector<double>(4, 0.25)).offenders == 4);
}

TEST_CASE("integers are exact in their own type, and sizes must agree", "[compare]") {
  const std::int64_t big = (std::int64_t{1} << 60) + 1;
  CHECK(compare(std::vector<std::int64_t>{big}, std::vector<std::int64_t>{big}).ok());
  CHECK(compare(std::vector<std::int64_t>{big}, std::vector<std::int64_t>{big - 1}).offenders == 1);  // equal as doubles
  CHECK(compare(std::vector<std::uint8_t>{0, 1}, std::vector<std::uint8_t>{0, 1}).ok());
  CHECK(compare(std::vector<bool>{true, false}, std::vector<bool>{true, true}).offenders == 1);
  const auto r = compare(std::vector<int>{1, 2}, std::vector<int>{1, 2, 3});
  CHECK_FALSE(r.ok());
  CHECK_THAT(r.str(), Catch::Contains("got 2 elements, want 3"));
}

TEST_CASE("exact and bitwise comparisons of floats", "[compare]") {
  CHECK(compare(std::vector<float>{1.f}, std::vector<float>{1.0000001f}, Tolerance::exact()).offenders == 1);
  CHECK(compare(std::vector<float>{0.f}, std::vector<float>{-0.f}, Tolerance::exact()).ok());
  CHECK(gpu_test::compare_bits(std::vector<float>{0.f}, std::vector<float>{-0.f}).offenders == 1);
  CHECK(gpu_test::compare_bits(std::vector<float>{1.f, 2.f}, std::vector<float>{1.f, 2.f}).ok());
}

TEST_CASE("the first offenders are listed, at most kShown, and the count is complete", "[compare]") {
  std::vector<double> want(50, 1.0), got(50, 2.0);
  const auto r = compare(got, want);
  CHECK(r.offenders == 50);
  CHECK(r.first.size() == gpu_test::Report::kShown);
  CHECK_THAT(r.str(), Catch::Contains("50 of 50 elements off") && Catch::Contains("..."));
}

TEST_CASE("a run's exit code: failures stay failures and never read as skipped", "[skip]") {
  CHECK(tessera::test::exit_code_with_skips(0) == 0);  // nothing skipped in this program
  CHECK(tessera::test::exit_code_with_skips(3) == 3);
  CHECK(tessera::test::exit_code_with_skips(77) == 78);
}
