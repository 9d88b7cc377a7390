// Fibers for the host executor: one stack per thread of a program, and a context switch that saves
// only the registers the x86-64 System V ABI asks a callee to keep (rbx, rbp, r12-r15 and the
// stack pointer). No signal mask is saved, unlike swapcontext, whose system call would cost more
// than most threads' work between two barriers.
#pragma once
#include <cstddef>

namespace tessera::host {

// Saves the running context's stack pointer into *save and resumes the context whose stack
// pointer is `resume` (as saved by an earlier switch, or made by FiberStacks::prepare).
extern "C" void tessera_host_switch(void** save, void* resume);

// Stacks for up to `count` fibers of `stack_bytes` each, below a guard page each (an overflow is a
// fault, not a silent overwrite of the next stack). Memory is reserved, not committed: a fiber uses
// only the pages it touches. One set per launching OS thread, kept across launches.
class FiberStacks {
 public:
  FiberStacks() = default;
  FiberStacks(const FiberStacks&) = delete;
  FiberStacks& operator=(const FiberStacks&) = delete;
  ~FiberStacks();

  // At least `count` stacks; throws tessera::Error when the address space is exhausted.
  void reserve(int count);
  // A stack pointer that, once switched to, calls `start` (which must never return) on fiber i's
  // stack.
  void* prepare(int i, void (*start)()) const;
  // The bounds of fiber i's stack, for sanitizer annotations.
  const void* bottom(int i) const;
  static constexpr std::size_t stack_bytes = 256 * 1024;

 private:
  static constexpr std::size_t guard_bytes = 4096;
  char* base_ = nullptr;
  int count_ = 0;
};

// The fiber stacks of the calling OS thread.
FiberStacks& thread_fiber_stacks();

}  // namespace tessera::host
