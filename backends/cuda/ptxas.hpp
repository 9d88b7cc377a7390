// CUDA's ptxas as a child process: PTX to a cubin, as Triton does. Preferred over the driver's
// cuLink* path (CudaDriver::compile_ptx), whose cubins measured 1-2% slower on the H200 for
// layer norm and long-row online softmax (notes/NOTES.md, run 12): the driver's linker assembles
// PTX as a relocatable unit. The driver path remains the fallback where no ptxas is installed.
#pragma once
#include <string>

namespace tessera::backend {

// $TESSERA_PTXAS ("0": never use ptxas), else $CUDA_HOME/bin/ptxas, /usr/local/cuda/bin/ptxas,
// ptxas on PATH; "" when none (or TESSERA_PTXAS=0). Throws tessera::Error if TESSERA_PTXAS names
// no executable.
std::string find_ptxas();

struct PtxasResult {
  std::string cubin;
  std::string log;  // ptxas -v: "Used N registers, ... bytes spill stores, ... bytes spill loads"
};

// `ptxas -arch=<arch> -O<opt_level> [--maxrregcount N] [-lineinfo] -v`; throws tessera::Error with
// ptxas's output when it fails.
PtxasResult run_ptxas(const std::string& ptxas, const std::string& ptx, const std::string& arch, int opt_level,
                      int max_registers, bool line_info);

}  // namespace tessera::backend
