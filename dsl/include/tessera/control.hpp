// Loops and branches over traced values. A C++ range-for or `if` cannot hand its body to the
// tracer as a region, so the bodies are lambdas that capture the kernel's variables by reference:
//
//   auto acc = ts::zeros<float>({BLOCK});
//   ts::for_range(0, n, BLOCK, [&](ts::Int k) { acc = acc + ts::load(x + k + offs); });
//   ts::if_(pid == 0, [&] { acc = acc * 2; }, [&] { acc = -acc; });
//
// Variables assigned inside a body become loop-carried values (for) or results (if), and after the
// call the C++ variables hold the op's results. Reassigning one with another shape is an error.
// Plain C++ `for`/`if` over meta-parameters or other C++ values simply unroll/specialize the trace.
#pragma once
#include <concepts>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "tessera/tile.hpp"

namespace tessera {

namespace detail {
// A loop bound: an i32 scalar tile or a C++ integer (which must fit in i32).
class LoopBound {
 public:
  LoopBound(const Int& t) : tile_(&t) {}
  template <std::integral I>
  LoopBound(I v) : value_(static_cast<std::int64_t>(v)) {}
  TESSERA_API ir::Value* materialize(const Loc& loc) const;

 private:
  const Int* tile_ = nullptr;
  std::int64_t value_ = 0;
};
}  // namespace detail

// How the compiler treats one loop (Triton's tl.range(..., num_stages=)).
// num_stages >= 2 asks the pipeline pass to load this loop's tiles num_stages - 1 iterations
// ahead, also where the loop stores and has no dot (a persistent row loop: layer norm's backward):
// each tile load whose masked-off elements are 0 is copied into a ring of num_stages stages of
// shared memory (cp.async) and read back where it was loaded; each scalar load is loaded one
// iteration ahead in registers. The loop's step must be a positive constant or num_programs. The
// pass assumes, as Triton's does, that the loop's stores do not write what a later iteration loads
// through another pointer argument; a store through the same argument as a load leaves the loop as
// written. 1 leaves the loop as written; 0 (the default) pipelines it only if it feeds a ts::dot, by
// LaunchOptions::num_stages.
struct LoopOptions {
  int num_stages = 0;
};

// for (i = lb; step > 0 ? i < ub : i > ub; i += step) body(i), as one `for` op.
// The body takes the induction variable (an ts::Int) or nothing. A step of 0, and constant bounds
// whose counter would step past the end of i32 (for_range(0, INT32_MAX, 1 << 30)), are a
// ProgramError at trace time; with bounds known only at run time the loop ends where the counter
// would wrap, and a step of 0 is the runtime's to report (README, "Errors and limits").
template <class F>
  requires std::invocable<F&, Int> || std::invocable<F&>
void for_range(detail::LoopBound lb, detail::LoopBound ub, detail::LoopBound step, F&& body, LoopOptions options,
               const Loc& loc = Loc::current()) {
  ir::Value* l = lb.materialize(loc);
  ir::Value* u = ub.materialize(loc);
  ir::Value* s = step.materialize(loc);
  detail::trace_for(l, u, s, [&](ir::Value* iv) {
    if constexpr (std::invocable<F&, Int>) body(Int(iv, loc));
    else body();
  }, options.num_stages, loc);
}
template <class F>
  requires std::invocable<F&, Int> || std::invocable<F&>
void for_range(detail::LoopBound lb, detail::LoopBound ub, detail::LoopBound step, F&& body,
               const Loc& loc = Loc::current()) {
  for_range(lb, ub, step, std::forward<F>(body), LoopOptions{}, loc);
}
template <class F>
  requires std::invocable<F&, Int> || std::invocable<F&>
void for_range(detail::LoopBound lb, detail::LoopBound ub, F&& body, const Loc& loc = Loc::current()) {
  for_range(lb, ub, 1, std::forward<F>(body), loc);
}

// if (cond) then_body() [else else_body()], as one `if` op; cond is a scalar mask.
template <class C, std::invocable Then>
void if_(const Tile<C>& cond, Then&& then_body, const Loc& loc = Loc::current()) {
  static_assert(std::is_same_v<C, bool>, "tessera::if_: the condition must be a scalar Tile<bool>; compare it, e.g. x != 0");
  const std::function<void()> t = [&] { then_body(); };
  detail::trace_if(cond.ir_value(loc), t, nullptr, loc);
}
template <class C, std::invocable Then, std::invocable Else>
void if_(const Tile<C>& cond, Then&& then_body, Else&& else_body, const Loc& loc = Loc::current()) {
  static_assert(std::is_same_v<C, bool>, "tessera::if_: the condition must be a scalar Tile<bool>; compare it, e.g. x != 0");
  const std::function<void()> t = [&] { then_body(); };
  const std::function<void()> e = [&] { else_body(); };
  detail::trace_if(cond.ir_value(loc), t, &e, loc);
}
// while (cond()) body(), as one loop (ops.def do_while): cond returns a scalar Tile<bool> and is
// traced once, then evaluated before every iteration. Variables assigned in cond or body are
// carried around the loop, as in for_range. The condition is one value for the whole program
// (scalars are uniform), so every thread iterates alike:
//
//   ts::Int lo = 0, hi = n;
//   ts::while_([&] { return lo < hi; }, [&] {
//     auto mid = (lo + hi) / 2;
//     ts::if_(ts::load(keys + mid) < key, [&] { lo = mid + 1; }, [&] { hi = mid; });
//   });
//
// A condition that never becomes false runs forever, on the GPU as on the interpreter.
template <class Cond, std::invocable Body>
  requires std::invocable<Cond&>
void while_(Cond&& cond, Body&& body, const Loc& loc = Loc::current()) {
  using C = std::remove_cvref_t<std::invoke_result_t<Cond&>>;
  static_assert(std::is_same_v<C, Tile<bool>>,
                "tessera::while_: the condition must return a scalar Tile<bool> (a comparison such as i < n); a C++ "
                "bool is decided at trace time: use a plain C++ while");
  const std::function<ir::Value*()> c = [&] { return cond().ir_value(loc); };
  const std::function<void()> b = [&] { body(); };
  detail::trace_while(c, b, loc);
}

// Every thread of the program waits here, and what each wrote to memory before it is seen by all
// after it (Triton's tl.debug_barrier; bar.sync on NVIDIA). Tile ops never need it: the compiler
// places the barriers its own shared-memory exchanges need. It is for a kernel whose threads
// exchange data through global memory within one program (store, debug_barrier, load what other
// threads stored). Call it where every thread gets to: not under a per-thread condition (if_
// conditions are scalars, so any if_ or while_ body qualifies).
inline void debug_barrier(const Loc& loc = Loc::current()) { detail::emit_debug_barrier(loc); }

// A plain C++ condition needs no tracing construct.
template <std::invocable Then, class... Rest>
void if_(bool, Then&&, Rest&&...) {
  static_assert(sizeof(Then) == 0, "tessera::if_ on a C++ bool: use a plain C++ `if` (it specializes the trace)");
}

}  // namespace tessera
