// Running random programs (random_program.hpp): host memory with inputs drawn from the program's
// seed and poisoned outputs, the interpreter, comparisons (bit for bit across passes; within
// tolerances GPU against interpreter), counts of the constructs a module contains, and the check
// that every pass preserves a program's meaning.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "random_program.hpp"

namespace tessera::random_program {

// The byte every output element starts as: a value a program is unlikely to compute, so that an
// element written on one side only shows.
inline constexpr unsigned char kPoison = 0x7f;

// One host buffer per BufferSpec, 64-byte aligned and exactly as large as the spec says (the
// interpreter bound-checks every access against it).
class Memory {
 public:
  Memory(const Program& p, std::uint64_t data_seed);
  Memory(const Memory& other);
  Memory& operator=(const Memory&) = delete;
  Memory(Memory&&) = default;

  std::size_t count() const { return buffers_.size(); }
  std::byte* data(std::size_t i) const { return buffers_[i].data.get(); }
  std::size_t bytes(std::size_t i) const { return buffers_[i].bytes; }
  // The kernel's arguments: sized pointers into this memory, and the scalars' values.
  std::vector<ArgValue> arguments(const Program& p) const;

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  struct Buffer {
    std::unique_ptr<std::byte, Free> data;
    std::size_t bytes = 0;
  };
  std::vector<Buffer> buffers_;
};

// A program's kernel parameters as the drivers (and the host executor) take them: each argument
// in an 8-byte slot, a buffer as `address(i)` of its buffer i, i32 and f32 scalars in the low
// bytes; `pointers[i]` points at slot i (the slots' storage moves with the object, never copied).
struct KernelParams {
  std::vector<std::uint64_t> slots;
  std::vector<void*> pointers;
};
KernelParams kernel_params(const Program& p, const std::function<std::uint64_t(std::size_t buffer)>& address);

// The seed of a program's input data (a function of the program's seed).
std::uint64_t data_seed(const Program& p);

// Runs `m` (the program's module or a transformed one) over the program's grid on a copy of
// `initial` and returns the memory afterwards. Throws what the interpreter throws.
Memory run_interpreter(const Program& p, const ir::Module& m, const Memory& initial);

// "" when every buffer holds the same bytes, NaNs of any payload counting as equal; else the first
// differences, one per line ("buffer 3 (out3, f32) element 17: 1.5 vs 2").
std::string compare_exact(const Program& p, const Memory& want, const Memory& got);
// The GPU check: integers exact; floats within the buffer's tolerance plus a relative tolerance
// per dtype (f32 1e-5, f64 1e-12, f16/bf16 1e-2) of the reference and as much absolutely; a NaN
// only against a NaN. `want` is the interpreter's memory.
std::string compare_close(const Program& p, const Memory& want, const Memory& got);

// How often each construct occurs in a module: "op:<name>" per op, and "reduce:add",
// "reduce:argmax", "reduce:axis1", "scan:reverse", "load:masked", "load:other", "store:masked",
// "store:scalar", "gather", "dtype:<name>", "tile:2d", "tile:3d", "for:load", "region:nested", ...
std::map<std::string, std::int64_t> count_constructs(const ir::Module& m);
// The constructs a run of many programs of `mode` must produce (the generator must not silently
// stop making any of them).
std::vector<std::string> required_constructs(Mode mode);

// The harness's own check: the program with the value of its last top-level store replaced by a
// constant (a mask negated) must leave different memory. False when it does not (or there is no
// such store); a run of programs where that is common compares nothing.
bool mutation_detected(const Program& p);

// The most elements one thread holds of any tile of a module with layouts (analysis::distribute):
// what code size and compile time grow with.
std::int64_t max_slots_per_thread(const ir::Module& m);

// A failed check: which stage (the pass, or "interpreter", "print/parse"), what happened, and the
// IR before and after the stage.
struct Failure {
  std::string stage;
  std::string message;
  std::string before;
  std::string after;
};

// Interprets the program, then each transform of it, on the same inputs, and compares memory bit
// for bit after each: every registered pass alone on the generated module; the default pipeline one
// pass at a time, then the layout pass (warp 32, as the NVIDIA build does) and assign_layouts with
// warp 64; and the printed module parsed back.
std::optional<Failure> check_passes(const Program& p);

// What to print for a failure: the seed, the mode, how to rerun it, the stage, the message and the
// IR (the generated module, and the module after the stage when it differs).
std::string failure_report(const Program& p, const Failure& f, const std::string& rerun);

}  // namespace tessera::random_program
