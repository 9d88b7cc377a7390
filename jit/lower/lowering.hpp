// Tile IR to LLVM IR (internal to jit/lower). Each tile value becomes the list of elements that one
// thread owns under the value's layout (jit/analysis/layouts.hpp), one LLVM value per slot; a
// scalar is one LLVM value shared by all threads.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "jit/analysis/axis_info.hpp"
#include "jit/analysis/layouts.hpp"
#include "jit/analysis/shared_memory.hpp"
#include "jit/lower/target.hpp"

namespace tessera::lower {

using Elems = std::vector<llvm::Value*>;

// An i32 constant of an index or a size.
inline llvm::Value* i32(llvm::IRBuilder<>& b, std::int64_t v) { return b.getInt32(static_cast<std::uint32_t>(v)); }

class KernelLowering {
 public:
  KernelLowering(const ir::Module& m, const Target& target, llvm::LLVMContext& ctx, const CodegenOptions& options = {});
  ~KernelLowering();
  std::unique_ptr<llvm::Module> run();
  int shared_bytes() const { return shared_bytes_; }
  int num_threads() const { return num_threads_; }

 private:
  // Kernel structure and control flow (lowering.cpp).
  void declare_kernel();
  // The op's shared-memory region, and the barrier (if the plan places one) before phase
  // `phase` of its use: 0 before its writes, 1 before its reads.
  llvm::Value* scratch(const ir::Op& op) const;
  void shared_phase(const ir::Op& op, int phase);
  // Line info (debug_info.cpp): a compile unit and subprogram for the kernel, and the location
  // of an op's source line, in its own file's scope.
  void begin_line_info();
  llvm::DILocation* debug_location(const ir::SourceLoc& loc);
  void lower_block(const ir::Block& b);
  void lower_op(const ir::Op& op);
  void lower_for(const ir::Op& op);
  void lower_if(const ir::Op& op);
  void lower_do_while(const ir::Op& op);
  // A loop's carried values (for, do_while): one phi per slot of each, at the insertion point (the
  // loop's first block), taking operands first_init... from `pre` and standing for block arguments
  // first_arg...; close_carried adds the yielded values first_yield... as the edge from `latch`.
  using CarriedPhis = std::vector<std::vector<llvm::PHINode*>>;
  CarriedPhis open_carried(const ir::Op& op, std::size_t first_init, const ir::Block& body, std::size_t first_arg,
                           llvm::BasicBlock* pre);
  void close_carried(const CarriedPhis& carried, const ir::Block& body, int first_yield, llvm::BasicBlock* latch);
  const Elems& yielded_by(const ir::Block& b, int i);

  // Types, constants and layouts.
  llvm::Type* scalar_type(const ir::Type& t) const;
  llvm::Value* constant_of(const ir::Type& t, const ir::Attr& value) const;
  const std::vector<llvm::Value*>& thread_base(const ir::Type& t);  // base_d per parent dim
  const Elems& get(const ir::Value* v) const;
  void set(const ir::Value* v, Elems e) { values_[v] = std::move(e); }

  // Ops (lower_ops.cpp).
  void lower_elementwise(const ir::Op& op);
  // rounding: a div's {rounding} attribute: "rn" (IEEE division even where `/` is faster),
  // "approx" (fast_dividef) or "" (none: `/`).
  llvm::Value* lower_binary(ir::OpKind k, ir::DType d, llvm::Value* a, llvm::Value* b, const std::string& rounding = "");
  llvm::Value* lower_float_rem(llvm::Value* a, llvm::Value* b);
  llvm::Value* lower_compare(ir::OpKind k, ir::DType d, llvm::Value* a, llvm::Value* b);
  llvm::Value* lower_unary(const ir::Op& op, llvm::Value* x);
  llvm::Value* lower_cast(const ir::Type& from, const ir::Type& to, llvm::Value* x);
  llvm::Value* lower_cast_toward_zero(const ir::Type& from, llvm::Value* x, const ir::Type& to);  // a float downcast, rtz
  // A cast from or to fp8 (lower_fp8.cpp): fp8 values are i8 codes.
  llvm::Value* lower_fp8_cast(const ir::Type& from, const ir::Type& to, llvm::Value* x, bool toward_zero);
  // exp2 log2 rsqrt sin cos tanh sigmoid erf floor ceil pow fma (lower_math.cpp).
  llvm::Value* lower_math(const ir::Op& op, const std::vector<llvm::Value*>& args);
  // The target's form of unary `op`'s function at x, or null (tessera's own IR then): for an op
  // with {ftz} (fast_expf, fast_exp2f) its flushing form NAME_ftz where the target has one.
  llvm::Value* target_math(const ir::Op& op, llvm::Value* x);
  void lower_arange(const ir::Op& op);
  void lower_broadcast(const ir::Op& op);
  void lower_convert_layout(const ir::Op& op);
  void lower_load(const ir::Op& op);
  void lower_store(const ir::Op& op);
  std::vector<std::vector<std::int64_t>> access_groups(const ir::Value* ptrs, const ir::Value* mask);
  // Row-major index, in the tile's shape, of the element in slot k of this thread.
  llvm::Value* element_linear_index(const ir::Type& t, std::int64_t k);

  // reshape, trans, join, split through shared memory (lower_shape.cpp).
  void lower_shape_op(const ir::Op& op);
  // Per-dim element indices, in the value's own rank, of the element in slot k of this thread.
  std::vector<llvm::Value*> element_coords(const ir::Type& t, std::int64_t k);

  // Reductions (lower_reduce.cpp) and scans (lower_scan.cpp).
  void lower_reduce(const ir::Op& op);
  void lower_scan(const ir::Op& op);
  std::vector<llvm::Value*> combine(const ir::Op& op, const std::vector<llvm::Value*>& lhs,
                                    const std::vector<llvm::Value*>& rhs);
  // A lane shuffle of a value of any type, through `shuffle32` applied to 32-bit pieces.
  llvm::Value* shuffle_any(llvm::Value* v, const std::function<llvm::Value*(llvm::Value*)>& shuffle32);
  llvm::Value* shuffle_xor_any(llvm::Value* v, int lane_mask);
  llvm::Value* warp_coord(const ir::Layout& l, int d);
  // This thread's warp, computed once in the entry block as lane 0's (a shuffle): ptxas then knows
  // it is the same across the warp and keeps what derives from it (a wgmma's descriptors, a
  // layout's warp coordinates) in uniform registers, as Triton does, instead of moving it there
  // before every wgmma (R2UR, measured as dispatch stalls on the H200).
  llvm::Value* warp_id();
  // This thread's lane coordinate along dim d of a blocked layout.
  llvm::Value* lane_coord(const ir::Layout& l, int d);

  // dot (lower_dot.cpp): operands staged in shared memory, then wgmma, mma.sync or fma loops.
  void lower_dot(const ir::Op& op);
  void lower_inline_asm(const ir::Op& op);  // lower_inline_asm.cpp
  // How a dot operand tile lies in shared memory (lower_wgmma.cpp): row-major with padded rows
  // (swizzle 0: mma.sync and fma loops), or wgmma's canonical layout: `contiguous_dim` stored
  // contiguously in swizzled blocks of `swizzle` bytes, rows in tile order.
  struct SharedTile {
    std::int64_t rows = 0, cols = 0, esz = 0;
    std::int64_t row_stride = 0;  // padded layout: elements from one row to the next
    int contiguous_dim = 1;
    std::int64_t swizzle = 0;
  };
  SharedTile dot_operand_tile(const ir::Op& dot, const ir::Type& t) const;
  // How a shared buffer's stage (a view) lies, from its type's encoding (lower_shared.cpp).
  SharedTile shared_tile(const ir::Type& view) const;
  // Byte offset (i32) of element (row, col) of a tile laid out as `s`.
  llvm::Value* shared_tile_offset(const SharedTile& s, llvm::Value* row, llvm::Value* col);
  // The byte shift of every element of `s` moved by (d_row, d_col), where that move is a pure
  // translation whatever the element (a whole number of swizzle periods and blocks); else none.
  std::optional<std::int64_t> shared_tile_shift(const SharedTile& s, std::int64_t d_row, std::int64_t d_col) const;
  // Offsets in `tile` of the elements `slots` this thread holds of a tile of type `t`: a few
  // computed in full, here, and the others as constant shifts from those where shared_tile_shift
  // allows, so that ptxas folds them into immediates instead of keeping an address per element
  // live (ring copies in a K loop: 8 registers for the 4-warp 128 x 128 x 32 matmul).
  std::function<llvm::Value*(std::int64_t)> shared_element_offsets(const ir::Type& t, const SharedTile& tile,
                                                                   const std::vector<std::int64_t>& slots);
  void lower_dot_wgmma(const ir::Op& op, llvm::Value* a_smem, llvm::Value* b_smem);
  // b_transposed: b is a transposed view (smem_trans), Bᵀ's rows b_stride elements apart.
  void lower_dot_mma(const ir::Op& op, llvm::Value* a_smem, llvm::Value* b_smem, std::int64_t a_stride,
                     std::int64_t b_stride, bool b_transposed);
  // Shared-memory ops (ops.def "Shared memory"; lower_shared.cpp): buffers, views, cp.async and
  // its groups, the async-proxy fence. A dot over views reads its operands where they lie.
  void lower_shared_memory_op(const ir::Op& op);
  void lower_async_copy(const ir::Op& op);
  void check_compiled_view(const ir::Op& op) const;  // of a local_store or local_load
  void lower_local_store(const ir::Op& op);
  void lower_local_load(const ir::Op& op);
  // Writes tile `v` into shared memory at `base`, laid out as `tile` says; reads a tile of type `t`
  // from there. Both move shared_run(t, tile) elements at a time.
  void stage_in_shared(const ir::Value* v, llvm::Value* base, const SharedTile& tile);
  Elems load_from_shared(const ir::Type& t, llvm::Value* base, const SharedTile& tile);
  // The elements of `t` one vector access moves: a run the layout keeps in one thread along the
  // dim the tile stores contiguously (analysis::row_run), halved until every row starts aligned
  // to it (padded rows of any width).
  std::int64_t shared_run(const ir::Type& t, const SharedTile& tile) const;
  // elems[first, first + count) as one vector, for a store of a run of them.
  llvm::Value* vector_of(const Elems& elems, std::int64_t first, std::int64_t count);

  // device_print (lower_print.cpp).
  void lower_print(const ir::Op& op);
  // Runs `body` only in threads where `pred` holds (all threads when pred is null).
  void only_where(llvm::Value* pred, const std::function<void()>& body);

  // Checks (lower_checks.cpp): device_assert, and debug mode's overflow checks of signed integer
  // + - * (options_.debug). report_failures stops the launch at the first element k of a tile of
  // type `t` whose failed[k] is true, printing its program and index, then `text` (print_format's
  // failure_line_format) and stopping with `message` at `loc`.
  void lower_assert(const ir::Op& op);
  void report_failures(const ir::Type& t, const Elems& failed, const std::string& text, const std::string& message,
                       const ir::SourceLoc& loc);
  // Whether any of `failed` holds, and the values (values[k], the same count for each k) of the
  // first k where it does: selects, so that an op's elements share one failure report.
  struct FirstFailure {
    llvm::Value* any = nullptr;
    std::vector<llvm::Value*> values;
  };
  FirstFailure first_failure(const Elems& failed, const std::vector<std::vector<llvm::Value*>>& values);
  // Target::fail_check at `b` with the three program ids, then `values`, as the format's arguments.
  void fail_check_with_pid(llvm::IRBuilder<>& b, const std::string& format, const std::vector<llvm::Value*>& values,
                           const Target::CheckSite& site) const;
  // Whether `op` is a signed integer + - * that debug mode checks; report_overflow stops the
  // launch at its first element that overflowed.
  bool checks_overflow(const ir::Op& op) const;
  void report_overflow(const ir::Op& op, const Elems& overflowed);
  // a op b with its signed-overflow bit: {result, overflowed}.
  std::pair<llvm::Value*, llvm::Value*> checked_binary(ir::OpKind k, llvm::Value* a, llvm::Value* b);

  // Debug mode's bounds checks of global accesses (lower_bounds.cpp), where the target makes them
  // in the kernel (Target::checks_bounds_in_kernel). check_bounds marks, at the builder, the
  // accesses of one op: each element k (of the accessed tile, or scalar, of type `t`), `bytes`
  // bytes at ptrs[k], by the threads where (*active)[k] holds (null: all); finish_bounds_checks builds
  // the checks there once the function is whole, when the origin of every pointer (through
  // loop-carried phis) is known.
  struct BoundsElement {
    llvm::Value* ptr;
    llvm::Value* active;
    std::vector<llvm::Value*> coords;  // its index, for the failure line
  };
  bool checks_bounds() const { return options_.debug && target_.checks_bounds_in_kernel(); }
  void check_bounds(const ir::Op& op, const char* access, const ir::Type& t, const Elems& ptrs, const Elems* active,
                    std::int64_t bytes);
  void finish_bounds_checks();
  struct BoundsSite {
    llvm::CallInst* marker;  // a call of the placeholder tessera.bounds(): where the checks go
    const char* access;      // "load", "store", "atomic"
    std::int64_t bytes;
    ir::SourceLoc loc;
    ir::Type type;
    std::vector<BoundsElement> elements;
  };
  std::vector<BoundsSite> bounds_sites_;
  std::vector<llvm::Value*> extents_;  // per kernel argument: its hidden extent parameter, or null

  // Atomics (lower_atomics.cpp).
  void lower_atomic(const ir::Op& op);
  llvm::Value* owner_predicate(const ir::Type& t);  // null: every thread owns its elements
  Elems share_from_owners(const ir::Op& op, const Elems& old, llvm::Value* owner);

  const ir::Module& m_;
  const Target& target_;
  CodegenOptions options_;
  std::unique_ptr<llvm::DIBuilder> dib_;
  llvm::DISubprogram* subprogram_ = nullptr;
  std::map<std::string, llvm::DIScope*> file_scopes_;
  llvm::LLVMContext& ctx_;
  std::unique_ptr<llvm::Module> module_;
  mutable llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::GlobalVariable* smem_ = nullptr;
  std::unique_ptr<analysis::SharedMemoryPlan> smem_plan_;
  analysis::AxisInfoAnalysis axis_;
  std::unordered_map<const ir::Value*, Elems> values_;
  std::map<std::string, std::vector<llvm::Value*>> bases_;  // thread_base per layout, this epoch
  llvm::Value* tid_ = nullptr;
  // Per-thread index arithmetic (thread bases, lane coordinates) goes to the prologue, or after
  // `epoch_head_`: this epoch's thread-id read (start_index_epoch), or its warp id read once
  // warp_id() made one, so that what goes right after the head may use both.
  llvm::Instruction* epoch_head_ = nullptr;
  void position_for_indices(llvm::IRBuilder<>& pb) const;
  // After a top-level loop that holds a dot: index arithmetic from here on starts from a new
  // thread-id read, so that the epilogue's addresses are not the prologue's values kept live
  // beside the accumulators through the loop (LLVM merges equal expressions: a B row k0 + r of
  // the prologue's copies is the C row 32 + r of the epilogue). Measured: 198 -> 168 registers for
  // the 4-warp 128 x 128 x 32 matmul (ptxas -v).
  void start_index_epoch();
  llvm::Value* warp_id_ = nullptr;  // this epoch's (warp_id)
  int num_threads_ = 0;
  int shared_bytes_ = 0;
};

// The fp8 code of a constant (tessera/float8.hpp's rounding), for constants of fp8 tiles.
std::uint8_t fp8_code(ir::DType d, double value);

}  // namespace tessera::lower
