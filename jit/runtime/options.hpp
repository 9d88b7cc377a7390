// Run-time settings read from the environment once (Triton-style names).
#pragma once
#include <string>

#include "tessera/launch.hpp"

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
  // TESSERA_DEBUG=1: compile every kernel in debug mode (CompileOptions::debug: asserts and
  // overflow checks).
  bool debug = false;
};

const EnvOptions& env_options();

// Whether code compiled with `options` checks asserts and overflow: CompileOptions::debug or
// TESSERA_DEBUG=1 (part of every cache key).
bool debug_checks(const CompileOptions& options);

}  // namespace tessera::runtime
