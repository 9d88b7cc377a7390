// The hooks the host target's code calls for its special registers and synchronization
// (host_abi.hpp). They run on the calling thread's fiber and never throw: a misuse (a lowering bug)
// is recorded for the launch, which throws once the program is done.
#include <fmt/format.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>

#include "backends/host/host_abi.hpp"
#include "backends/host/host_runtime.hpp"

namespace tessera::host {
namespace {

enum class Shuffle { Xor, Up, Down, Idx };

const char* shuffle_name(Shuffle s) {
  switch (s) {
    case Shuffle::Xor: return "shuffle_xor";
    case Shuffle::Up: return "shuffle_up";
    case Shuffle::Down: return "shuffle_down";
    case Shuffle::Idx: return "shuffle_idx";
  }
  return "shuffle";
}

// The lane whose value this lane receives; -1 for a source outside the warp (a lowering bug).
int source_lane(Shuffle s, int lane, std::int32_t operand, int warp_size) {
  switch (s) {
    case Shuffle::Xor: {
      const std::int64_t src = lane ^ operand;
      return operand < 0 || src >= warp_size ? -1 : static_cast<int>(src);
    }
    case Shuffle::Up: return operand < 0 ? -1 : lane < operand ? lane : lane - operand;  // below delta: own value
    case Shuffle::Down: {
      if (operand < 0) return -1;
      const std::int64_t src = std::int64_t{lane} + operand;
      return src >= warp_size ? lane : static_cast<int>(src);  // past the last lane: own value
    }
    case Shuffle::Idx: return operand < 0 || operand >= warp_size ? -1 : operand;
  }
  return -1;
}

// Every lane of the warp writes its value into this shuffle's half of the warp's exchange buffer
// and waits until all have; then each reads its source. The two halves alternate: a lane can run
// ahead to the next shuffle (writing the other half) but not to the one after, which waits for the
// slowest lane to arrive at the next one, after it has read this one.
std::int32_t shuffle(Shuffle kind, std::int32_t value, std::int32_t operand) {
  Run& r = current_run();
  const int w = r.kernel->warp_size;
  const int warp = r.current / w, lane = r.current % w;
  Run::Thread& t = r.threads[static_cast<std::size_t>(r.current)];
  const std::uint64_t k = t.shuffles++;
  std::int32_t* half = &r.exchange[(static_cast<std::size_t>(warp) * 2 + (k & 1)) * static_cast<std::size_t>(w)];
  half[lane] = value;
  std::uint64_t& arrived = r.shuffle_arrivals[static_cast<std::size_t>(warp)];
  ++arrived;
  block_until(r, &arrived, (k + 1) * static_cast<std::uint64_t>(w));
  const int src = source_lane(kind, lane, operand, w);
  if (src < 0) {
    r.fail(Failure::Internal, fmt::format("{} with operand {} in a warp of {} lanes, at {} (a lowering bug)",
                                          shuffle_name(kind), operand, w, r.where()));
    return value;
  }
  return half[src];
}

}  // namespace
}  // namespace tessera::host

using tessera::host::current_run;

extern "C" {

__attribute__((visibility("hidden"))) std::int32_t __tessera_host_thread_id() { return current_run().current; }

__attribute__((visibility("hidden"))) std::int32_t __tessera_host_program_id(std::int32_t axis) {
  return static_cast<std::int32_t>(current_run().program[static_cast<std::size_t>(axis)]);
}

__attribute__((visibility("hidden"))) std::int32_t __tessera_host_num_programs(std::int32_t axis) {
  return static_cast<std::int32_t>(current_run().grid[static_cast<std::size_t>(axis)]);
}

// A rendezvous of the program's threads: the k-th barrier of a thread returns once every thread
// has reached its k-th.
__attribute__((visibility("hidden"))) void __tessera_host_barrier() {
  tessera::host::Run& r = current_run();
  const std::uint64_t k = ++r.threads[static_cast<std::size_t>(r.current)].barriers;
  ++r.barrier_arrivals;
  tessera::host::block_until(r, &r.barrier_arrivals, k * r.threads.size());
}

__attribute__((visibility("hidden"))) std::int32_t __tessera_host_shfl_xor(std::int32_t v, std::int32_t mask) {
  return tessera::host::shuffle(tessera::host::Shuffle::Xor, v, mask);
}
__attribute__((visibility("hidden"))) std::int32_t __tessera_host_shfl_up(std::int32_t v, std::int32_t delta) {
  return tessera::host::shuffle(tessera::host::Shuffle::Up, v, delta);
}
__attribute__((visibility("hidden"))) std::int32_t __tessera_host_shfl_down(std::int32_t v, std::int32_t delta) {
  return tessera::host::shuffle(tessera::host::Shuffle::Down, v, delta);
}
__attribute__((visibility("hidden"))) std::int32_t __tessera_host_shfl_idx(std::int32_t v, std::int32_t lane) {
  return tessera::host::shuffle(tessera::host::Shuffle::Idx, v, lane);
}

// One line of device_print (print_format.hpp), whole: one call writes it.
__attribute__((visibility("hidden"))) std::int32_t __tessera_host_print(const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  const int n = std::vprintf(format, args);
  va_end(args);
  std::fflush(stdout);
  return n;
}

// A failed check: the first one becomes the launch's error (Failure::Check).
__attribute__((visibility("hidden"))) void __tessera_host_fail_check(const char* format, ...) {
  char line[1024] = "a check failed (its line could not be formatted)";
  std::va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n > 0 && static_cast<std::size_t>(n) < sizeof line && line[n - 1] == '\n') line[n - 1] = '\0';
  current_run().fail(tessera::host::Failure::Check, line);
}

// host_memory.cpp
std::int32_t __tessera_host_check_global(const void*, std::uint64_t, std::uint64_t, std::int32_t, std::int32_t,
                                         const char*);
std::int32_t __tessera_host_check_shared(const void*, std::uint64_t, std::uint64_t, std::int32_t, const char*);

}  // extern "C"

namespace tessera::host {

std::vector<RuntimeSymbol> runtime_symbols() {
  namespace abi = host_abi;
  std::vector<RuntimeSymbol> s = {
      {abi::kThreadId, reinterpret_cast<void*>(&__tessera_host_thread_id)},
      {abi::kProgramId, reinterpret_cast<void*>(&__tessera_host_program_id)},
      {abi::kNumPrograms, reinterpret_cast<void*>(&__tessera_host_num_programs)},
      {abi::kBarrier, reinterpret_cast<void*>(&__tessera_host_barrier)},
      {abi::kPrint, reinterpret_cast<void*>(&__tessera_host_print)},
      {abi::kFailCheck, reinterpret_cast<void*>(&__tessera_host_fail_check)},
      {abi::kShuffleXor, reinterpret_cast<void*>(&__tessera_host_shfl_xor)},
      {abi::kShuffleUp, reinterpret_cast<void*>(&__tessera_host_shfl_up)},
      {abi::kShuffleDown, reinterpret_cast<void*>(&__tessera_host_shfl_down)},
      {abi::kShuffleIdx, reinterpret_cast<void*>(&__tessera_host_shfl_idx)},
      {abi::kCheckGlobal, reinterpret_cast<void*>(&__tessera_host_check_global)},
      {abi::kCheckShared, reinterpret_cast<void*>(&__tessera_host_check_shared)},
  };
  for (const RuntimeSymbol& h : half_conversion_symbols()) s.push_back(h);
  return s;
}

}  // namespace tessera::host
