// The main of tessera_gpu_tests. Without a usable CUDA GPU it runs no test case at all and exits
// 77 ("SKIPPED"), which ctest (SKIP_RETURN_CODE 77) shows as "Not Run (skipped)" and
// tests/gpu/device_run.sh counts as a failure (the GPU machine must have a GPU): the GPU tests
// never pass having checked nothing. Listing the test cases (--list-tests, ...) needs no GPU.
// With a GPU, Catch runs as usual; a case that skips part of its checks (tests/skip.hpp) makes
// the run exit 77 too when nothing failed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "backends/cuda/cuda_driver.hpp"
#include "tests/skip.hpp"

int main(int argc, char* argv[]) {
  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  const Catch::ConfigData& config = session.configData();
  const bool listing = config.listTests || config.listTestNamesOnly || config.listTags || config.listReporters ||
                       config.showHelp;
  std::string why;
  if (!listing && !tessera::cuda::CudaDriver::available(&why)) {
    std::printf("SKIPPED: no CUDA GPU (%s); no GPU test ran\n", why.c_str());
    return tessera::test::kSkipExitCode;
  }
  return tessera::test::exit_code_with_skips(session.run());
}
