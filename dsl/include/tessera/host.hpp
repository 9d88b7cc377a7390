// The host executor (Executor::Host, Executor::Host64; TESSERA_EXECUTOR=host or host64): kernels
// compiled for a GPU-like SIMT target and run on this CPU, every thread of a program a fiber,
// barriers and warp shuffles rendezvous of those fibers, every memory access checked. It tests the
// code generation itself (layouts, shuffles, shared memory) where no GPU is present.
//
// It lives in libtessera_host.so, which carries LLVM's X86 backend and JIT: link tessera::host
// (CMake: target_link_libraries(t PRIVATE tessera::host)). The library registers itself when it
// loads; call enable() once as well, so that a linker dropping unused libraries (--as-needed)
// keeps it.
#pragma once

#if defined(_WIN32)
#define TESSERA_HOST_API
#else
#define TESSERA_HOST_API __attribute__((visibility("default")))
#endif

namespace tessera::host {

// Registers the host executor with tessera (idempotent, thread-safe).
TESSERA_HOST_API void enable();

}  // namespace tessera::host
