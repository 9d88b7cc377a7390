// The host executor's run-time state: a compiled kernel, and the launch running on this OS thread
// as the hooks (host_hooks.cpp, host_memory.cpp) and the scheduler (host_launch.cpp) see it.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "backends/host/host_jit.hpp"
#include "tessera/args.hpp"

namespace tessera::host {

class FiberStacks;

// A kernel compiled for the host, with what a launch needs.
struct HostKernel {
  std::string kernel;  // the user's name, for messages
  std::string target;  // "host" or "host64"
  int num_threads = 0, warp_size = 0, shared_bytes = 0;
  std::vector<std::string> arg_names;
  JitCode code;
  std::mutex launch_mutex;  // one launch at a time: the shared memory is one buffer of the module
};

// Runs every program of `grid` (x fastest, as the interpreter), one after the other on this
// thread, each program's threads as fibers. Throws MemoryAccessError for the first access outside
// the launch's buffers or the program's shared memory, InternalError for a deadlock or a shuffle
// from a lane outside the warp (lowering bugs).
void launch_kernel(HostKernel& k, const Dim3& grid, std::span<const ArgValue> args, void* const* params);

// A memory region a kernel may touch: a sized pointer argument.
struct Region {
  std::uint64_t base = 0, bytes = 0;
  int arg = -1;
};

// Memory: an access outside the launch's memory; Check: a device_assert or debug-mode check failed;
// Internal: a lowering or executor bug.
enum class Failure : std::uint8_t { None, Memory, Check, Internal };

// The launch running on this OS thread.
struct Run {
  struct Thread {
    void* sp = nullptr;                        // saved stack pointer while suspended
    const std::uint64_t* counter = nullptr;    // blocked until *counter >= target
    std::uint64_t target = 0;
    std::uint64_t barriers = 0, shuffles = 0;  // sync points this thread has reached
    bool done = false;
  };

  const HostKernel* kernel = nullptr;
  void* const* params = nullptr;
  Dim3 grid{};
  std::array<std::uint32_t, 3> program{};
  // Memory the kernel may touch (host_memory.cpp): per argument, the buffer a sized pointer
  // argument gives (bytes, base) or whether it is a raw pointer (unknown size); and every buffer,
  // for the accesses whose origin is unknown.
  struct ArgMemory {
    std::uint64_t base = 0, bytes = 0;
    bool sized = false, raw = false;
  };
  std::vector<ArgMemory> arg_memory;
  std::vector<Region> regions;
  bool any_raw = false;
  // The program's threads (host_launch.cpp); fibers only when the kernel synchronizes.
  bool fibers = false;
  std::vector<Thread> threads;
  int current = 0;
  int live = 0;                                  // threads not done
  const FiberStacks* stacks = nullptr;
  void* scheduler_sp = nullptr;
  std::uint64_t barrier_arrivals = 0;            // of every thread of the program
  std::vector<std::uint64_t> shuffle_arrivals;   // per warp
  std::vector<std::int32_t> exchange;            // per warp, two generations of warp_size values
  // The first failure; later ones are dropped (they tend to be its consequences).
  Failure failure = Failure::None;
  std::string message;

  void fail(Failure f, const std::string& what) noexcept;
  // "thread 37 (warp 1, lane 5) of program (2, 0, 0)"
  std::string where() const;
};

// The launch of this OS thread (set by launch_kernel for the hooks). Initial-exec TLS: the hooks
// run once per memory access, and the general model's __tls_get_addr call cost more than the check.
extern __thread Run* t_current_run __attribute__((tls_model("initial-exec")));
inline Run& current_run() { return *t_current_run; }

// Suspends the running fiber until *counter >= target (host_launch.cpp).
void block_until(Run& r, const std::uint64_t* counter, std::uint64_t target);

// Every symbol the generated code may call, for the JIT: the hooks of host_abi.hpp and the f16 /
// bf16 conversion routines LLVM's X86 backend calls (half_conversions.cpp).
struct RuntimeSymbol {
  const char* name;
  void* address;
};
std::vector<RuntimeSymbol> runtime_symbols();
std::vector<RuntimeSymbol> half_conversion_symbols();

}  // namespace tessera::host
