#include "backends/host/fibers.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "tessera/error.hpp"

#if !defined(__x86_64__) || !defined(__linux__)
#error "the host executor's context switch is written for x86-64 Linux"
#endif

// rdi = where to save the current stack pointer, rsi = the stack pointer to resume. The frame it
// leaves (from low to high addresses): r15, r14, r13, r12, rbx, rbp, return address. MXCSR and the
// x87 control word are callee-saved too, but every fiber of a thread runs with the thread's (no
// code here or generated changes them), and ldmxcsr costs more than the rest of the switch.
asm(R"(
  .text
  .globl tessera_host_switch
  .hidden tessera_host_switch
  .type tessera_host_switch, @function
tessera_host_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size tessera_host_switch, .-tessera_host_switch
)");

namespace tessera::host {
namespace {
// Unmaps fiber stacks. Under AddressSanitizer their shadow is cleared first: fibers abandoned by a
// switch leave redzones poisoned, and whatever mmap returns at these addresses next (the JIT's
// memory, say) would otherwise be reported as a stack overflow.
void unmap_stacks(void* base, std::size_t bytes) {
#if defined(__SANITIZE_ADDRESS__)
  __asan_unpoison_memory_region(base, bytes);
#endif
  munmap(base, bytes);
}
}  // namespace


FiberStacks::~FiberStacks() {
  if (base_) unmap_stacks(base_, static_cast<std::size_t>(count_) * (stack_bytes + guard_bytes));
}

void FiberStacks::reserve(int count) {
  if (count <= count_) return;
  const std::size_t stride = stack_bytes + guard_bytes;
  const std::size_t bytes = static_cast<std::size_t>(count) * stride;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (p == MAP_FAILED)
    throw Error("tessera: the host executor cannot reserve " + std::to_string(bytes >> 20) + " MiB of fiber stacks for " +
                std::to_string(count) + " threads");
  char* base = static_cast<char*>(p);
  for (int i = 0; i < count; ++i)
    if (mprotect(base + static_cast<std::size_t>(i) * stride, guard_bytes, PROT_NONE) != 0) {
      munmap(p, bytes);
      throw Error("tessera: the host executor cannot place the guard pages of its fiber stacks");
    }
  if (base_) unmap_stacks(base_, static_cast<std::size_t>(count_) * stride);
  base_ = base;
  count_ = count;
}

const void* FiberStacks::bottom(int i) const {
  return base_ + static_cast<std::size_t>(i) * (stack_bytes + guard_bytes) + guard_bytes;
}

void* FiberStacks::prepare(int i, void (*start)()) const {
  // The top of the stack, 16-byte aligned and offset by a few cache lines per fiber: stacks a
  // multiple of the page size apart would have their hot top lines compete for the same cache
  // sets. `start` is entered by the switch's `ret` with the stack pointer at top - 8, as if called
  // (the ABI wants rsp + 8 aligned to 16 at a function's entry); the zero above it is a return
  // address no one uses.
  // Under AddressSanitizer, a fiber that ended by a switch away (not by returning) leaves its
  // frames' redzones poisoned on this stack; a new fiber starts on clean memory.
#if defined(__SANITIZE_ADDRESS__)
  __asan_unpoison_memory_region(bottom(i), stack_bytes);
#endif
  const std::size_t color = static_cast<std::size_t>(i % 61) * 64;
  auto* top = reinterpret_cast<std::uint64_t*>(const_cast<char*>(static_cast<const char*>(bottom(i))) + stack_bytes - color);
  std::uint64_t* sp = top;
  *--sp = 0;
  *--sp = reinterpret_cast<std::uint64_t>(start);
  for (int r = 0; r < 6; ++r) *--sp = 0;  // rbp, rbx, r12-r15
  return sp;
}

FiberStacks& thread_fiber_stacks() {
  thread_local FiberStacks stacks;
  return stacks;
}

}  // namespace tessera::host
