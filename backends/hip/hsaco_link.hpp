// Links an AMDGPU relocatable object into an HSACO (the shared ELF that hipModuleLoadData takes)
// by running ld.lld as a separate process. lld is never linked in: in-process lld against
// Debian's static LLVM pulls in every target and Polly (DESIGN.md, "Measured facts").
#pragma once
#include <string>

namespace tessera::backend {

// The ld.lld to run, in this order: $TESSERA_LLD; $ROCM_PATH/llvm/bin/ld.lld;
// /opt/rocm/llvm/bin/ld.lld; ld.lld-22 then ld.lld on PATH; /usr/lib/llvm-22/bin/ld.lld.
// Returns "" when none exists (with `searched` describing where it looked, if non-null).
// Throws tessera::Error if TESSERA_LLD is set but names no executable.
std::string find_lld(std::string* searched = nullptr);

// `ld.lld -shared -o out.hsaco in.o` through temporary files that are removed afterwards.
// Throws tessera::Error when no ld.lld is found (saying how to set TESSERA_LLD) or when it fails
// (with its own output).
std::string link_hsaco(const std::string& object_bytes);

}  // namespace tessera::backend
