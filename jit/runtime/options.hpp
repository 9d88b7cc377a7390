// Run-time settings read from the environment once (Triton-style names).
#pragma once
#include <string>

namespace tessera::runtime {

struct EnvOptions {
  bool interpret = false;                        // TESSERA_INTERPRET=1
  // TESSERA_EXECUTOR: "auto" (or unset), "interpreter", "cuda", "hip", "host" or "host64"; it
  // decides Executor::Auto before TESSERA_INTERPRET does. Another value is warned about and ignored.
  std::string executor = "auto";
  bool dump_ir = false, dump_llvm = false;       // TESSERA_DUMP=ir,llvm,ptx,amdgcn (comma list)
  bool dump_ptx = false, dump_amdgcn = false;
  bool dump_resources = false;                   // TESSERA_DUMP=resources: a line per compiled kernel
  bool dump_times = false;                       // TESSERA_DUMP=times: where each compile's time went
  bool debug = false;                            // TESSERA_DEBUG=1: say which executor runs a kernel
};

const EnvOptions& env_options();

}  // namespace tessera::runtime
