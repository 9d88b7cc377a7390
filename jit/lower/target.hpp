// The small interface between the common lowering (tile IR -> LLVM IR) and one GPU target.
// Adding a target means implementing this interface in backends/<target>/; the common lowering
// in jit/lower/ never names a target.
//
// This header includes LLVM: include it only from jit/lower and backends/*_target.cpp.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "jit/lower/codegen.hpp"

namespace tessera::lower {

// A load's or store's cache and eviction hints (ops.def `load`/`store`: attrs `cache`, `eviction`,
// as the IR spells them: "cg", "evict_last"; empty: none). They never change values.
struct AccessHints {
  std::string cache, eviction;
  bool empty() const { return cache.empty() && eviction.empty(); }
};


// An f32 as the tensor cores read a tf32 operand: its 13 low mantissa bits dropped (rounded toward
// zero; "only the first 10 bits of the input mantissa are read"), infinities and NaNs unchanged.
// The interpreter truncates alike (interp/dot.cpp), so that it stays the GPU's oracle.
llvm::Value* truncate_to_tf32(llvm::IRBuilder<>& b, llvm::Value* f32);

// x % y on f32 or f64 as C's fmod, exactly: a call to a function built into the module once
// (exact_fmod.cpp), for targets whose frem is not exact (NVPTX and AMDGPU expand it through x/y).
llvm::Value* exact_fmod(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y);

class Target {
 public:
  virtual ~Target() = default;
  virtual std::string name() const = 0;          // "sm_90a", "sm_80", "gfx942", "gfx90a"
  virtual std::string triple() const = 0;
  virtual std::string data_layout() const = 0;
  virtual int warp_size() const = 0;
  virtual unsigned global_address_space() const = 0;   // where kernel pointer arguments live
  virtual unsigned shared_address_space() const = 0;
  // Whether the kernel's shared memory is declared dynamic (an extern array sized at launch: the
  // binary's shared_bytes), as NVIDIA needs beyond 48 KB per block; else a static array.
  virtual bool dynamic_shared_memory() const { return false; }

  // Special registers and synchronization, emitted at the builder's insertion point.
  virtual llvm::Value* thread_id(llvm::IRBuilder<>& b) const = 0;           // i32, x only
  // The thread id again, as a value that no optimization merges with an earlier read: index
  // arithmetic computed from it after a loop is not shared with the same arithmetic before the
  // loop, which would keep it live through the loop (KernelLowering::start_index_epoch).
  virtual llvm::Value* thread_id_unshared(llvm::IRBuilder<>& b) const { return thread_id(b); }
  virtual llvm::Value* program_id(llvm::IRBuilder<>& b, int axis) const = 0; // i32
  virtual llvm::Value* num_programs(llvm::IRBuilder<>& b, int axis) const = 0;
  virtual void barrier(llvm::IRBuilder<>& b) const = 0;
  // Marks `f` as a kernel entry run by `num_threads` threads per program.
  virtual void mark_kernel(llvm::Function* f, int num_threads) const = 0;
  // Caps the registers per thread of kernel `f` (NVIDIA .maxnreg). A target without such a
  // control refuses: a cap silently ignored would change what a user's tuning measures.
  virtual void set_max_registers(llvm::Function* f, int max_registers) const;
  // Whether CodegenOptions::fp_fusion may let float multiplies and adds contract to fma here.
  virtual bool allows_fp_contraction() const { return true; }
  // Optional target math (e.g. fast exp2 / sqrt); null means "use the LLVM intrinsic".
  virtual llvm::Value* math(llvm::IRBuilder<>& b, const std::string& fn, llvm::Value* x) const { return nullptr; }
  // The same for the two-operand math functions ("pow"); null means tessera's own IR (lower_math.cpp).
  virtual llvm::Value* math_binary(llvm::IRBuilder<>& b, const std::string& fn, llvm::Value* x, llvm::Value* y) const {
    return nullptr;
  }
  // Links the device math library that math() calls into (CUDA's libdevice) into `m`; called by
  // compile() before it optimizes, so that the library's functions inline and fold.
  virtual void link_device_library(llvm::Module& m) const {}
  // A load of `type` from `ptr` performed only where `pred` (i1) holds, else `other`; and the
  // matching store. The defaults (jit/lower/target_defaults.cpp) branch around the access and
  // ignore `hints`; a target may emit predicated instructions, and the hints, instead.
  virtual llvm::Value* predicated_load(llvm::IRBuilder<>& b, llvm::Type* type, llvm::Value* ptr, llvm::Value* pred,
                                       llvm::Value* other, unsigned align, const AccessHints& hints = {}) const;
  virtual void predicated_store(llvm::IRBuilder<>& b, llvm::Value* value, llvm::Value* ptr, llvm::Value* pred,
                                unsigned align, const AccessHints& hints = {}) const;

  // Exchanges a 32-bit value (i32) with the lane whose id is this lane's xor `lane_mask`, within
  // the warp/wavefront (a butterfly step of a reduction).
  virtual llvm::Value* shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v32, int lane_mask) const = 0;
  // The same with the lane `delta` below this one (lanes below delta get their own value back):
  // one step of a warp scan.
  virtual llvm::Value* shuffle_up(llvm::IRBuilder<>& b, llvm::Value* v32, int delta) const = 0;
  // The same with the lane `delta` above this one (lanes past the last get their own value back):
  // one step of a reverse warp scan.
  virtual llvm::Value* shuffle_down(llvm::IRBuilder<>& b, llvm::Value* v32, int delta) const = 0;
  // The value of lane `src_lane` (i32, any lane of the warp): a broadcast from one lane.
  virtual llvm::Value* shuffle_idx(llvm::IRBuilder<>& b, llvm::Value* v32, llvm::Value* src_lane) const = 0;

  // Tensor-core hooks (warps of 32 only; lower_dot.cpp). The defaults (jit/lower/mma_emulation.cpp)
  // compute exactly what the PTX instruction defines from each lane's registers, through
  // shuffle_idx, so that a target without the instruction (the host target) checks the fragment
  // maps element by element; NVIDIA targets emit the instruction.
  //
  // ldmatrix.sync.aligned.m8n8.x4[.trans].b16: each lane gives the shared-memory address of one
  // 16-byte row (lanes 8q..8q+7 the rows of matrix q); returns four i32, one per matrix: without
  // trans, lane l gets row l/4, elements 2*(l%4) and 2*(l%4)+1 of matrix q (low half first); with
  // trans, rows 2*(l%4) and 2*(l%4)+1 of column l/4.
  virtual std::vector<llvm::Value*> ldmatrix_x4(llvm::IRBuilder<>& b, llvm::Value* row_address, bool trans) const;
  // The operand types of an mma.sync m16n8: f16 and bf16 (k16, f32 accumulator), tf32 (k8, f32
  // accumulator; each operand word an f32 of which the tensor core reads the sign, the exponent
  // and the top 10 mantissa bits: truncate_to_tf32), s8
  // (k32, wrapping i32 accumulator). In every case an operand register is one 32-bit word of
  // 32 / k-bytes elements, the lower k first.
  enum class MmaType { F16, BF16, TF32, S8 };
  // mma.sync.aligned.m16n8k{16,8,32}.row.col: a is four i32 words, b two, c four f32 (i32 for s8);
  // returns d = a·b + c in the PTX ISA's fragment layout (c0, c1: row l/4, columns 2*(l%4) and
  // +1; c2, c3: row l/4 + 8). In 32-bit words of K every type has the same operand map: a[r] is
  // row l/4 + 8*(r%2), word l%4 + 4*(r/2); b[r] is column l/4, word l%4 + 4*r.
  virtual std::vector<llvm::Value*> mma_m16n8(llvm::IRBuilder<>& b, MmaType type, const std::vector<llvm::Value*>& a,
                                              const std::vector<llvm::Value*>& bm,
                                              const std::vector<llvm::Value*>& c) const;
  // Warpgroup MMA (sm_90a; lower_wgmma.cpp): wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}
  // with both operands in shared memory, given by 64-bit matrix descriptors (PTX ISA "Matrix
  // Descriptor Format": start address, leading and stride byte offsets, each >> 4 in 14 bits;
  // swizzle mode in bits 62-63: 1 = 128-byte, 2 = 64-byte, 3 = 32-byte). A is K-major; B is
  // K-major, or N-major when `trans_b`. `acc` holds the n/2 f32 accumulators of this thread of the
  // warpgroup (register v: row 16*(warp%4) + 8*((v/2)%2) + lane/4, column 8*(v/4) + 2*(lane%4) +
  // v%2); the result is d = a·b + acc in the same registers. The default (wgmma_emulation.cpp)
  // decodes the descriptors relative to `shared_base` and sums the 16 products of each element in
  // k order, as the interpreter does; NVIDIA emits the instruction (inline PTX, accumulators tied).
  struct Wgmma {
    int n;
    bool bf16;
    bool trans_a;  // A M-major (else K-major)
    bool trans_b;  // B N-major (else K-major)
    // d = a·b: the accumulators passed in are ignored (wgmma's scale-d 0), so that a dot from a
    // zero accumulator needs no registers set to 0 before it (which ptxas, where another
    // wgmma is still in flight, answers with a wait it injects: C7517).
    bool zero_acc = false;
  };
  // With `a_words` given (four i32, each two 16-bit elements, the lower k first), A comes from
  // registers instead, desc_a null: word r holds row 16*(warp%4) + lane/4 + 8*(r%2), columns
  // 2*(lane%4) + 8*(r/2) + {0,1} of the warp's 16 rows, as mma_m16n8's A (analysis::wgmma_a_in_registers).
  virtual std::vector<llvm::Value*> wgmma(llvm::IRBuilder<>& b, const Wgmma& shape, llvm::Value* desc_a,
                                          const std::vector<llvm::Value*>& a_words, llvm::Value* desc_b,
                                          const std::vector<llvm::Value*>& acc, llvm::Value* shared_base) const;
  // The address (i32) of shared pointer `p` as a descriptor holds it: its offset in the shared
  // window on NVIDIA; 0 by default, where the emulation reads descriptors relative to the kernel's
  // shared memory.
  virtual llvm::Value* shared_window_address(llvm::IRBuilder<>& b, llvm::Value* p) const { return b.getInt32(0); }
  // The first of a dot's wgmma descriptors (i64), from which the others are small constants
  // apart (lower_wgmma.cpp). NVIDIA hides its bits from LLVM, which would otherwise turn each
  // later descriptor's 64-bit add into an or of disjoint bits: ptxas makes the add one UIADD3.64
  // and the or an or and a move of the high word (a 128x256x64 bf16 K loop: 109 instructions
  // against 123). The default returns it as is.
  virtual llvm::Value* wgmma_descriptor_base(llvm::IRBuilder<>& b, llvm::Value* desc) const { return desc; }
  // wgmma.fence before wgmmas whose accumulators other instructions wrote; commit_group after
  // them; wait_group until at most `pending` groups are in flight, the accumulators passed through
  // so that nothing reads them before (ptxas serializes the wgmmas otherwise: warning C7515);
  // with `acc` empty, a wait that passes nothing through (for wgmmas whose results are read later).
  // fence.proxy.async orders this thread's generic-proxy shared-memory writes (st.shared,
  // cp.async) before the async proxy's reads (wgmma). The defaults do nothing: the emulation
  // computes at once.
  virtual void wgmma_fence(llvm::IRBuilder<>& b) const {}
  virtual void wgmma_commit(llvm::IRBuilder<>& b) const {}
  virtual std::vector<llvm::Value*> wgmma_wait(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& acc, int pending) const {
    return acc;
  }
  virtual void fence_proxy_async(llvm::IRBuilder<>& b) const {}

  // Asynchronous copies global -> shared (cp.async on sm_80+; async_copy, lower_shared.cpp).
  // async_copy copies `bytes` (4, 8 or 16) from `global` to `shared` where `pred` holds and writes
  // zeros where it does not; async_commit closes a group of copies; async_wait blocks until at most
  // `pending` groups of this thread are still in flight. The defaults copy at once (an ordinary
  // predicated load and a store; commit and wait do nothing), which is what the asynchronous form
  // computes once waited for.
  virtual void async_copy(llvm::IRBuilder<>& b, llvm::Value* shared, llvm::Value* global, int bytes, llvm::Value* pred) const;
  virtual void async_commit(llvm::IRBuilder<>& b) const {}
  virtual void async_wait(llvm::IRBuilder<>& b, int pending) const {}

  // device_print: whether the target can print, and one printf call of `format` (print_format.hpp)
  // with `args` (i32, i64 or double values) by this thread. The default cannot (AMD: hostcall
  // printf is not wired yet); lower_print refuses the op, naming its line, before calling print.
  virtual bool can_print() const { return false; }
  // Whether the target runs inline assembly (inline_asm: PTX, AMDGCN); the host targets do not.
  virtual bool runs_inline_asm() const { return false; }
  virtual void print(llvm::IRBuilder<>& b, const std::string& format, const std::vector<llvm::Value*>& args) const;

  // A failed check (device_assert, a debug-mode overflow): this thread prints `format` with `args`
  // as print does, then stops the launch, reporting `site` (NVIDIA: __assertfail, which traps; the
  // host targets: a ProgramError once the launch ends). The default cannot (AMD: not wired yet);
  // lowering refuses a check, naming its line, before calling fail_check.
  struct CheckSite {
    std::string message, file, function;
    int line = 0;
  };
  virtual bool can_fail_checks() const { return false; }
  // Debug mode's bounds checks of global memory accesses in the kernel itself: the kernel takes
  // each pointer argument's extent in bytes as a hidden i64 parameter after the user's (in the
  // order of the pointer arguments; the launch appends them, UINT64_MAX where the size is not
  // known) and checks every access whose address derives from one argument against it
  // (lower_bounds.cpp). NVIDIA does; the host targets check every access in their own
  // instrumentation (host_checks_target.cpp); AMD cannot fail checks yet.
  virtual bool checks_bounds_in_kernel() const { return false; }
  virtual void fail_check(llvm::IRBuilder<>& b, const std::string& format, const std::vector<llvm::Value*>& args,
                          const CheckSite& site) const;

  // The LLVM syncscope name of an atomic's scope ("cta", "gpu" or "sys"). The default, "" (the
  // whole system), is correct everywhere but may be slower than the target's narrower scopes.
  virtual std::string sync_scope(const std::string& scope) const;

  // Runs LLVM's optimization pipeline and code generation; takes ownership of the module.
  virtual DeviceBinary compile(std::unique_ptr<llvm::Module> m, const std::string& kernel_name) const = 0;
};

// The default tensor-core hooks' view of an A fragment (mma_m16n8's; wgmma's from registers, per
// warp): rows lane/4 and lane/4 + 8 of the warp's 16, each as its K elements in f32 (i32 for s8),
// k ascending, gathered from the lanes that hold them through shuffle_idx (mma_emulation.cpp).
std::array<std::vector<llvm::Value*>, 2> emulated_a_rows(const Target& t, llvm::IRBuilder<>& b,
                                                         const std::vector<llvm::Value*>& a, Target::MmaType type);

// "sm_80", "sm_90a", "gfx90a", "gfx942". Throws tessera::Error for an unknown name.
std::unique_ptr<Target> make_target(const std::string& name);

}  // namespace tessera::lower
