// Random, well-typed tile programs for differential testing: the generator builds tile IR directly
// with the IR builder (no tracer), each program with its grid, its arguments and the buffers they
// point to, so that a harness can run it on the interpreter (bound-checked: every buffer's size is
// known) before and after each pass, assemble it with ptxas, or run it on a GPU.
//
// A program is a pure function of its seed: `generate(seed, mode)` always builds the same module,
// and the harness (random_harness.hpp) derives the input data from the same seed, so one number
// reproduces a failure.
//
// What a program is made of (each drawn at random, nested where regions allow):
//   - a domain: a 1-D tile of B elements or a 2-D tile MxN (powers of two, at most 4096 elements)
//     over buffers of n (or R x C, row- or column-major) elements that need not be multiples of the
//     tile; offsets from program_id, masks from comparisons with the integer arguments, masked loads
//     with and without `other`;
//   - elementwise arithmetic, comparisons, select, casts and math over f32 f16 bf16 f64 i8 i16 i32
//     i64 u8 u32 and i1 masks;
//   - reductions (sum, max, min, argmax/argmin as a two-operand reduce; both axes) and scans
//     (forward and reverse);
//   - shape ops: expand_dims + broadcast, trans, reshape, join/split, splat;
//   - for loops with loop-carried accumulators (and loads inside that move with the induction
//     variable), if with results;
//   - gathers (loads at computed, clamped indices), atomic_rmw, stores of every shape (into the
//     domain, masked; or "program-major": each program its own slice of an output buffer).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jit/ir/ir.hpp"
#include "tessera/args.hpp"

namespace tessera::random_program {

enum class Mode : std::uint8_t {
  // Anything the IR defines: NaN, inf and -0 in the inputs and constants, integer division by zero
  // (defined by ops.def), wrapping, a program reading back what it stored, atomics whose old values
  // are used. For the interpreter before and after passes (compared bit for bit) and for ptxas.
  Wide,
  // Programs whose GPU results can be compared with the interpreter's: inputs are small multiples
  // of 1/4, math ops get inputs inside their domain, integer divisors are never 0, values stay far
  // from overflow, and float sums over reductions, scans and loops either stay exact (every partial
  // sum representable, so any order gives the same bits) or carry an error bound into the
  // tolerance of the buffer they reach.
  Gpu,
};

const char* mode_name(Mode m);

// One buffer a pointer argument points to.
struct BufferSpec {
  DType dtype = DType::F32;
  std::int64_t elements = 0;
  bool output = false;  // poisoned before a run (outputs are compared after it)
  // Inputs in Mode::Gpu: integers, or floats that are multiples of 2^-quantum, in [-bound, bound].
  double bound = 0;
  int quantum = 0;
  // Outputs in Mode::Gpu: how far (absolutely) the GPU may be from the interpreter on top of the
  // dtype's relative tolerance, from the error bounds of the approximate ops (exp, div, ...) and
  // inexact sums behind the stored values. 0: the values are computed exactly alike.
  double tolerance = 0;
};

// One kernel argument: a buffer, or a scalar with its value.
struct ArgSpec {
  enum class Kind : std::uint8_t { Buffer, Int, Float } kind = Kind::Int;
  DType dtype = DType::I32;  // pointee for a buffer
  int buffer = -1;           // index into Program::buffers
  std::int64_t int_value = 0;
  double float_value = 0;
};

struct Program {
  std::uint64_t seed = 0;
  Mode mode = Mode::Wide;
  std::unique_ptr<ir::Module> module;  // verified
  Dim3 grid{1, 1, 1};
  std::vector<ArgSpec> args;           // one per kernel argument, in order
  std::vector<BufferSpec> buffers;
  std::string summary;                 // one line: domain, grid, warps, dtypes
};

// Builds the program of `seed`. Throws tessera::InternalError naming the seed when the module it
// built does not verify (a generator bug).
Program generate(std::uint64_t seed, Mode mode);

// The mode the test programs give a seed when none is asked for: every fourth seed is a GPU-mode
// program, so that both kinds run through the passes and ptxas.
Mode default_mode(std::uint64_t seed);

}  // namespace tessera::random_program
