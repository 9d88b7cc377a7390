// The scheduler of the host executor: programs one after the other, and in each program its
// threads as fibers, round robin. A thread runs until its next barrier or shuffle, or to its end,
// then hands over directly to the next thread (in thread order, wrapping around) whose rendezvous
// is complete; control returns to the scheduler only when no thread can run. Then either all have
// finished, or the program deadlocked (some thread skipped a barrier or a shuffle its warp took):
// reported, not hung.
#include <fmt/format.h>

#include <cstring>

#include "backends/host/fibers.hpp"
#include "backends/host/host_runtime.hpp"
#include "tessera/error.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define TESSERA_HOST_ASAN 1
#endif

namespace tessera::host {
namespace {


// Sets the thread's current launch for the hooks, and restores the previous one.
class RunScope {
 public:
  explicit RunScope(Run& r) : previous_(t_current_run) { t_current_run = &r; }
  ~RunScope() { t_current_run = previous_; }
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;

 private:
  Run* previous_;
};

// Switches from the running context to `resume`; `stack_bottom`/`stack_size` describe the stack
// resumed (for AddressSanitizer, which must know which stack it is on). A context that `finished`
// is never resumed: AddressSanitizer may drop what it keeps for it.
void switch_to(void** save, void* resume, const void* stack_bottom, std::size_t stack_size, bool finished = false) {
#ifdef TESSERA_HOST_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(finished ? nullptr : &fake, stack_bottom, stack_size);
  tessera_host_switch(save, resume);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  (void)stack_bottom;
  (void)stack_size;
  (void)finished;
  tessera_host_switch(save, resume);
#endif
}

// The OS thread's own stack, as AddressSanitizer knows it (null: "the thread's stack").
struct SchedulerStack {
  const void* bottom = nullptr;
  std::size_t size = 0;
};
thread_local SchedulerStack t_scheduler_stack;

// The first thread after `from` (wrapping around) that is not done and whose rendezvous is
// complete, or -1.
int next_runnable(const Run& r, int from) {
  const int n = static_cast<int>(r.threads.size());
  for (int k = 1; k <= n; ++k) {
    const int i = (from + k) % n;
    const Run::Thread& t = r.threads[static_cast<std::size_t>(i)];
    if (!t.done && (t.counter == nullptr || *t.counter >= t.target)) return i;
  }
  return -1;
}

// Leaves the running fiber (blocked or done) for the next runnable one, or for the scheduler when
// there is none. Returns when this fiber is resumed.
void leave_current(Run& r) {
  Run::Thread& t = r.threads[static_cast<std::size_t>(r.current)];
  const int next = next_runnable(r, r.current);
  if (next < 0) {
    switch_to(&t.sp, r.scheduler_sp, t_scheduler_stack.bottom, t_scheduler_stack.size, t.done);
    return;
  }
  r.threads[static_cast<std::size_t>(next)].counter = nullptr;
  r.current = next;
  // The thread after it most likely runs next: start fetching its saved registers now. A switch's
  // cost is that miss (every fiber's stack leaves the cache before its turn comes again).
  const void* after = r.threads[static_cast<std::size_t>(next + 1 < static_cast<int>(r.threads.size()) ? next + 1 : 0)].sp;
  __builtin_prefetch(after);
  __builtin_prefetch(static_cast<const char*>(after) + 64);
  switch_to(&t.sp, r.threads[static_cast<std::size_t>(next)].sp, r.stacks->bottom(next), FiberStacks::stack_bytes,
            t.done);
}

[[noreturn]] void fiber_main() {
#ifdef TESSERA_HOST_ASAN
  // Thread 0 is started by the scheduler, from the OS thread's own stack: remember its bounds for
  // the switches back to it. The other threads are started by fibers.
  const void* from_bottom = nullptr;
  std::size_t from_size = 0;
  __sanitizer_finish_switch_fiber(nullptr, &from_bottom, &from_size);
  if (current_run().current == 0) t_scheduler_stack = {from_bottom, from_size};
#endif
  Run& r = current_run();
  r.kernel->code.entry(r.params);
  r.threads[static_cast<std::size_t>(r.current)].done = true;
  --r.live;
  leave_current(r);  // a finished thread is never resumed
  __builtin_unreachable();
}

std::string deadlock_message(const Run& r) {
  int done = 0, at_barrier = -1, at_shuffle = -1;
  for (int i = 0; i < static_cast<int>(r.threads.size()); ++i) {
    const Run::Thread& t = r.threads[static_cast<std::size_t>(i)];
    if (t.done) ++done;
    else if (t.counter == &r.barrier_arrivals && at_barrier < 0) at_barrier = i;
    else if (t.counter != &r.barrier_arrivals && at_shuffle < 0) at_shuffle = i;
  }
  std::string waiting;
  if (at_barrier >= 0) waiting += fmt::format("; thread {} waits at its barrier #{}", at_barrier,
                                              r.threads[static_cast<std::size_t>(at_barrier)].barriers);
  if (at_shuffle >= 0) waiting += fmt::format("; thread {} waits at its shuffle #{}", at_shuffle,
                                              r.threads[static_cast<std::size_t>(at_shuffle)].shuffles);
  return fmt::format("the threads of program ({}, {}, {}) deadlocked: {} of {} finished{} (a barrier or shuffle "
                     "that not every thread of the program or warp reaches: a lowering bug)",
                     r.program[0], r.program[1], r.program[2], done, r.threads.size(), waiting);
}

void run_program_as_fibers(Run& r, const FiberStacks& stacks) {
  const int n = static_cast<int>(r.threads.size());
  for (int i = 0; i < n; ++i) r.threads[static_cast<std::size_t>(i)] = Run::Thread{stacks.prepare(i, &fiber_main)};
  r.barrier_arrivals = 0;
  std::fill(r.shuffle_arrivals.begin(), r.shuffle_arrivals.end(), 0);
  r.stacks = &stacks;
  r.live = n;
  r.current = 0;
  switch_to(&r.scheduler_sp, r.threads[0].sp, stacks.bottom(0), FiberStacks::stack_bytes);
  // Back here when no thread can run: the blocked ones are abandoned (nothing on their stacks needs
  // destroying), and the program's result is a report.
  if (r.live > 0) r.fail(Failure::Internal, deadlock_message(r));
}

// A kernel without barriers and shuffles: each thread runs to its end on this thread's stack.
void run_program_in_order(Run& r) {
  const int n = static_cast<int>(r.threads.size());
  for (int i = 0; i < n; ++i) {
    r.current = i;
    r.kernel->code.entry(r.params);
  }
}

void describe_memory(Run& r, std::span<const ArgValue> args) {
  r.arg_memory.assign(args.size(), {});
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != ArgValue::Kind::Pointer) continue;
    Run::ArgMemory& m = r.arg_memory[i];
    if (!args[i].sized) {
      m.raw = r.any_raw = true;
      continue;
    }
    m = {reinterpret_cast<std::uint64_t>(args[i].p), args[i].bytes, true, false};
    r.regions.push_back({m.base, m.bytes, static_cast<int>(i)});
  }
  // The same for the generated code's inline checks (host_abi::kArgBounds).
  if (std::uint64_t* bounds = r.kernel->code.arg_bounds)
    for (std::size_t i = 0; i < r.kernel->arg_names.size(); ++i) {
      const bool sized = i < r.arg_memory.size() && r.arg_memory[i].sized;
      bounds[2 * i] = sized ? r.arg_memory[i].base : 0;
      bounds[2 * i + 1] = sized ? r.arg_memory[i].bytes : 0;
    }
}

}  // namespace

__thread Run* t_current_run = nullptr;

void Run::fail(Failure f, const std::string& what) noexcept {
  if (failure != Failure::None) return;
  failure = f;
  try {
    message = what;
  } catch (...) {
    message.clear();  // out of memory for the message: the failure itself is still reported
  }
}

std::string Run::where() const {
  const int w = kernel->warp_size;
  return fmt::format("thread {} (warp {}, lane {}) of program ({}, {}, {})", current, current / w, current % w,
                     program[0], program[1], program[2]);
}

void block_until(Run& r, const std::uint64_t* counter, std::uint64_t target) {
  if (*counter >= target) return;
  if (!r.fibers) {
    r.fail(Failure::Internal, "a barrier or shuffle in a kernel compiled without them (a host executor bug)");
    return;
  }
  Run::Thread& t = r.threads[static_cast<std::size_t>(r.current)];
  t.counter = counter;
  t.target = target;
  leave_current(r);
}

void launch_kernel(HostKernel& k, const Dim3& grid, std::span<const ArgValue> args, void* const* params) {
  std::lock_guard<std::mutex> lock(k.launch_mutex);
  Run r;
  r.kernel = &k;
  r.params = params;
  r.grid = grid;
  describe_memory(r, args);
  r.fibers = k.code.synchronizes;
  r.threads.resize(static_cast<std::size_t>(k.num_threads));
  const int warps = k.num_threads / k.warp_size;
  r.shuffle_arrivals.assign(static_cast<std::size_t>(warps), 0);
  r.exchange.assign(static_cast<std::size_t>(warps) * 2 * static_cast<std::size_t>(k.warp_size), 0);
  FiberStacks& stacks = thread_fiber_stacks();
  if (r.fibers) stacks.reserve(k.num_threads);
  RunScope scope(r);
  std::uint64_t index = 0;
  for (std::uint32_t z = 0; z < grid[2] && r.failure == Failure::None; ++z)
    for (std::uint32_t y = 0; y < grid[1] && r.failure == Failure::None; ++y)
      for (std::uint32_t x = 0; x < grid[0] && r.failure == Failure::None; ++x) {
        r.program = {x, y, z};
        // Poison, different each program: a read of shared memory no thread wrote (a missing
        // barrier, a wrong offset) gives a huge value or a NaN, not the previous program's data.
        if (k.code.shared) std::memset(k.code.shared, index++ % 2 ? 0xff : 0x7f, static_cast<std::size_t>(k.shared_bytes));
        if (r.fibers)
          run_program_as_fibers(r, stacks);
        else
          run_program_in_order(r);
      }
  if (r.failure == Failure::None) return;
  const std::string message = fmt::format("kernel '{}' on the {} target: {}", k.kernel, k.target,
                                          r.message.empty() ? "a failure (no memory left to describe it)" : r.message);
  if (r.failure == Failure::Memory) throw MemoryAccessError(message);
  if (r.failure == Failure::Check) throw ProgramError(message);
  throw InternalError(message);
}

}  // namespace tessera::host
