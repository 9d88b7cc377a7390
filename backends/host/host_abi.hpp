// The contract between the host target's code generation (backends/host/host_target.cpp, inside
// libtessera.so) and the host executor that runs the code (libtessera_host.so): the names and
// signatures of the runtime hooks the generated LLVM IR calls, and the symbols the executor looks
// up. Both sides include this header; it is LLVM-free and holds nothing but constants.
#pragma once

namespace tessera::host_abi {

// Target names and their warp sizes: "host" runs warps of 32 threads (as NVIDIA GPUs), "host64"
// of 64 (as AMD's wave64).
inline constexpr const char* kTarget32 = "host";
inline constexpr const char* kTarget64 = "host64";

// Special registers and synchronization (i32 results; axes 0..2).
inline constexpr const char* kThreadId = "__tessera_host_thread_id";        // i32 ()
inline constexpr const char* kProgramId = "__tessera_host_program_id";      // i32 (i32 axis)
inline constexpr const char* kNumPrograms = "__tessera_host_num_programs";  // i32 (i32 axis)
inline constexpr const char* kBarrier = "__tessera_host_barrier";           // void ()
// device_print: i32 (ptr format, ...), printf to stdout (ints as i32/i64, floats as double).
inline constexpr const char* kPrint = "__tessera_host_print";
// A failed check (device_assert, a debug-mode overflow): void (ptr format, i32...), the line
// print_format.hpp's failure_line_format describes; the launch then fails with it.
inline constexpr const char* kFailCheck = "__tessera_host_fail_check";
// Warp shuffles of one 32-bit value, a rendezvous of the warp: i32 (i32 value, i32 operand),
// the operand being the lane mask (xor), the distance (up, down) or the source lane (idx).
inline constexpr const char* kShuffleXor = "__tessera_host_shfl_xor";
inline constexpr const char* kShuffleUp = "__tessera_host_shfl_up";
inline constexpr const char* kShuffleDown = "__tessera_host_shfl_down";
inline constexpr const char* kShuffleIdx = "__tessera_host_shfl_idx";

// Memory checks, called before every load, store and atomic of the kernel; the access happens only
// when the hook returns non-zero (a failed check is recorded for the launch, and the access is
// skipped: a load yields zero). i32 results, never i1: a C function returning bool leaves the
// upper bits of its register undefined.
//   i32 check_global(ptr address, i64 bytes, i64 align, i32 access, i32 argument, ptr site)
//     `argument`: the index of the kernel argument every address of this access derives from,
//     or -1 when that is not known (the address must then lie in one of the launch's buffers).
//   i32 check_shared(ptr address, i64 bytes, i64 align, i32 access, ptr site)
//     the address must lie in the program's shared memory.
// `site` is a NUL-terminated "file:line:column" of the kernel source line (or "" when unknown).
inline constexpr const char* kCheckGlobal = "__tessera_host_check_global";
inline constexpr const char* kCheckShared = "__tessera_host_check_shared";
enum class Access : int { Load = 0, Store = 1, Atomic = 2 };

// Where the executor writes, before each launch, the buffer of each argument: [num_args x [2 x i64]]
// of (base address, bytes), 0 bytes for a raw pointer or a scalar. The code checks an access
// inline against the buffer of the argument it derives from and calls check_global only when that
// fails (or the origin is unknown); shared-memory accesses are checked inline the same way.
inline constexpr const char* kArgBounds = "tessera_host_arg_bounds";
// The kernel's shared memory: a global of the module (external linkage, so that the optimizer
// assumes that a barrier, an opaque call, may change it), sized by the lowering.
inline constexpr const char* kSharedMemory = "tessera_smem";
// The entry the executor adds to every module: void (ptr params), where params[i] points to the
// bytes of argument i (the layout of the GPU drivers' kernel parameter arrays).
inline constexpr const char* kEntry = "__tessera_host_entry";

}  // namespace tessera::host_abi
