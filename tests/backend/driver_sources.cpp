// tessera_backend_tests links tessera_codegen only, while the dlopen drivers belong to
// tessera_runtime (CMake globs *_driver.cpp there). Compiling them into the test program keeps
// driver_test.cpp testable without the rest of the runtime; drop this file once the test program
// links tessera_runtime.
#include "backends/cuda/cuda_driver.cpp"
#include "backends/hip/hip_driver.cpp"
