// The disk-cache key holds the build identity of the compiler (a hash of its sources made at build
// time; tests/build_identity_test.cmake proves that it changes with them), so that a cache folder
// reused by a rebuilt tessera misses every entry the old build wrote.
#include <catch2/catch.hpp>

#include <string>

#include "jit/runtime/compile.hpp"

using namespace tessera;

TEST_CASE("the disk-cache key holds the build identity", "[cache][build_identity]") {
  const std::string id = runtime::build_identity();
  REQUIRE(id.size() == 32);
  CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
  const LaunchOptions opts;
  const std::string key = runtime::disk_cache_key("kernel @k() {}", "sm_90a", opts);
  CHECK_THAT(key, Catch::Contains("build=32:" + id + "\n"));
}
