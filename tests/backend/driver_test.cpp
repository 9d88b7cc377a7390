// The drivers are opened with dlopen: on a machine without a GPU they must say so clearly
// instead of failing to load or crashing.
#include <catch2/catch.hpp>

#include "backends/cuda/cuda_driver.hpp"
#include "backends/hip/hip_driver.hpp"
#include "tessera/error.hpp"

TEST_CASE("CudaDriver reports why it is unavailable", "[backend][driver]") {
  std::string why;
  if (tessera::cuda::CudaDriver::available(&why)) {
    WARN("an NVIDIA driver is present; the no-GPU checks do not apply here");
    CHECK(tessera::cuda::CudaDriver::get() != nullptr);
    return;
  }
  INFO(why);
  CHECK(why.find("libcuda") != std::string::npos);
  CHECK(tessera::cuda::CudaDriver::get() == nullptr);
  try {
    tessera::cuda::CudaDriver::require();
    FAIL("no exception");
  } catch (const tessera::DriverError& e) {
    CHECK(std::string(e.what()).find(why) != std::string::npos);
  }
}

TEST_CASE("HipDriver reports why it is unavailable", "[backend][driver]") {
  std::string why;
  if (tessera::hip::HipDriver::available(&why)) {
    WARN("a HIP runtime is present; the no-GPU checks do not apply here");
    return;
  }
  INFO(why);
  CHECK(why.find("libamdhip64") != std::string::npos);
  CHECK_THROWS_AS(tessera::hip::HipDriver::require(), tessera::DriverError);
}
