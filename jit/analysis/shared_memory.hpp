// Shared memory of a kernel whose tiles have layouts: how many bytes each op needs, where its
// region lies, and where barriers must go.
//
// Ops that move elements between threads (convert_layout, reductions and scans across warps, the
// shape ops, atomics that hand old values to replicas) use shared memory in two phases: every
// thread writes (phase 0), then every thread reads (phase 1). A barrier is needed before a phase
// exactly when it touches bytes that another access since the last barrier touched, one of the
// two being a write (read-after-write, write-after-read, write-after-write). The plan finds those
// points by walking the program in execution order with the set of accesses pending since the
// last barrier; a loop is walked until that set at its head stops growing (the next iteration
// sees what the end of the body left), the two arms of an if are joined. The lowering asks the
// plan before each phase and never places a barrier of its own.
//
// Allocation: conversions, reductions, scans and shared buffers (local_alloc: a conversion's,
// transforms/expand_conversions.hpp, or a ring) get regions of their own, so that two of them in
// a row need no barrier between them (softmax's max then sum); the other users share one region
// at offset 0, reused by each of them. Two buffers used in different top-level ops (conversions
// one after the other) may share bytes, with a barrier between (place-barriers finds it). Where
// regions of their own would take more than kSeparateRegionsBytes, any two of these users in
// different top-level ops share bytes the same way: a barrier between them is cheaper than the
// programs per SM (or the launch) that the bytes would cost.
// A pipelined dot's ring (a buffer that async copies fill) is
// live from its prologue to the end of its loop: ops after that loop (a matmul's epilogue
// conversion) may reuse its bytes, where the loop is not itself inside a loop (whose next
// iteration's prologue would write the ring again).
// That is, a ring (local_alloc, at the kernel's top level) is live until the end of the
// top-level op that holds its last use, or until the first top-level async_wait {pending = 0}
// after it (its last copies may land until then). For the barriers, the end of a loop that uses a buffer
// counts as a write of the whole buffer: its last copies and its reads by the dot. A
// debug_barrier in the IR is a barrier: nothing is pending after it.
//
// Barriers live in the IR: the place-barriers pass (jit/transforms/place_barriers.hpp) writes
// those this walk finds missing (a debug_barrier before a local_store or local_load, the attribute
// {barrier_before_writes = 1} on an op whose writes need one), and the lowering emits what the IR
// says, after checking that nothing is missing. The barrier between an op's own writes and reads
// is part of the op.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "jit/ir/ir.hpp"

namespace tessera::analysis {

// The bytes of private regions (reductions', scans', conversions' other than buffers) above which
// those in different top-level ops share bytes (see above). Sharing costs a barrier before each
// one's writes, in a loop on every iteration even where only the first conflicts.
inline constexpr std::int64_t kSeparateRegionsBytes = 16 * 1024;
// True when some element of `t` is held by more than one thread (a tile smaller than its layout's
// CTA tile, or a scalar): an atomic on it runs once, in the owner, and shares its old value.
bool has_replicas(const ir::Type& t);
// The attribute that puts a barrier before an op's shared-memory writes (place-barriers).
inline constexpr const char* kBarrierBeforeWrites = "barrier_before_writes";
// local_store and local_load: the IR's own synchronous accesses of a shared buffer, one phase each
// (a write, a read), ordered by debug_barriers before them.
bool is_shared_access(const ir::Op& op);
// dot stages a (M x K) then b (K x N) in shared memory, each row padded by 16 bytes so that the
// eight 16-byte rows an ldmatrix reads fall in distinct banks for any row length: the padding in
// elements of `operand`'s type, and the row stride in elements.
std::int64_t dot_row_pad(ir::DType operand);
std::int64_t dot_row_stride(ir::DType operand, std::int64_t row_elems);
// Whether a dot reads `operand` (0: a, 1: b) from a shared-memory view (ops.def "Shared memory":
// a pipeline pass's ring, or a loop-invariant operand it stored once): the buffer's local_alloc
// holds the bytes and the IR's own waits, fences and barriers order them. A dot stages only the
// operands it reads from registers, in a region of its own (dot_staged_bytes).
bool dot_reads_view(const ir::Op& dot, int operand);
// A dot that reads both a and b from views.
bool is_async_dot(const ir::Op& op);
// The local_alloc whose buffer `v` (a buffer, or a view of it by smem_index or smem_trans) is; null otherwise.
const ir::Op* shared_buffer_of(const ir::Value* v);
// Bytes of one stage of a shared buffer (`view`: the stage's type, or a whole 2-D buffer as one
// stage): padded rows as #padded says, wgmma's swizzled tiles (#nvmma) rounded up to 1024 bytes
// (the swizzle atoms, 8 rows of up to 128 bytes, must start 1024-byte aligned).
std::int64_t shared_stage_bytes(const ir::Type& view);
// Whether a dot stores `operand` from registers into its own region before reading it: neither
// a view nor a wgmma A that stays in registers (wgmma_a_in_registers).
bool dot_stages(const ir::Op& dot, int operand);
// Bytes of one stage of a dot's staged a (operand 0) or b (operand 1), from registers; the dot's
// region holds a's then b's, of those it stages (dot_staged_offset: where b's start).
std::int64_t dot_stage_bytes(const ir::Op& dot, int operand);
std::int64_t dot_staged_offset(const ir::Op& dot, int operand);
std::int64_t dot_staged_bytes(const ir::Op& dot);
// A conversion (convert_layout) writes each element at its row-major index, rows padded. Where
// both layouts hold runs of two or more elements along the last dim (row_run) and a row is whole
// 16-byte pieces, it writes and reads whole runs as vectors, and rows are padded by 16 bytes: the
// eight rows that a warp of an mma accumulator writes then start four banks apart and cover all
// 32. Otherwise it moves single elements, rows padded by one element, so that a column walked down
// (a transposing conversion) spreads over the banks. The padding in elements.
std::int64_t convert_row_pad(const ir::Op& convert);
// A reduction's or scan's region holds one part per operand, `elements` values each: the byte
// offset of each part, aligned to its element's size (an i8 part before an i32 one is padded), and
// the region's bytes.
struct OperandParts {
  std::vector<std::int64_t> base;
  std::int64_t bytes = 0;
};
OperandParts operand_parts(const ir::Op& op, std::int64_t elements);
// The bytes of shared memory `op` needs while it runs (0: none), and the alignment of its region
// (16 bytes; 1024 for a wgmma dot's swizzled operands).
std::int64_t shared_bytes(const ir::Op& op);
std::int64_t shared_alignment(const ir::Op& op);

class SharedMemoryPlan {
 public:
  explicit SharedMemoryPlan(const ir::Module& m);

  std::int64_t total_bytes() const { return total_bytes_; }
  // The alignment the buffer's start needs: the largest of its regions' (shared_alignment).
  std::int64_t alignment() const { return alignment_; }
  bool has_region(const ir::Op& op) const { return regions_.count(&op) > 0; }
  // Byte offset of the op's region; throws InternalError for an op without one.
  std::int64_t offset(const ir::Op& op) const;
  // Whether a barrier goes right before phase `phase` (0: the writes, 1: the reads) of `op`: one
  // the IR has (the attribute; phase 1 always) or one it needs. A local_store or local_load, and
  // a dot that reads views but stages nothing, has phase 0 only (place-barriers puts a
  // debug_barrier before it).
  bool barrier_before(const ir::Op& op, int phase) const;
  int num_barriers() const { return static_cast<int>(barriers_.size()); }
  // The barriers needed that the IR does not have, in the order the walk met them (what
  // place-barriers inserts; the lowering requires none).
  const std::vector<std::pair<const ir::Op*, int>>& missing_barriers() const { return missing_; }
  // A ring: a buffer that async copies fill. Its copies are ordered by the IR's waits and the
  // pipeliner's barriers, which the walk does not model (it models only a dot's reads of a ring):
  // the lowering compiles no local_store or local_load of a ring.
  bool is_ring(const ir::Op& alloc) const { return rings_.count(&alloc) > 0; }
  // One line per shared-memory op: "<op> @<line>: [offset, end) barriers before: write read".
  std::string describe() const;

 private:
  struct Access {
    std::int64_t begin, end;
    bool write;
    bool operator<(const Access& o) const { return std::tie(begin, end, write) < std::tie(o.begin, o.end, o.write); }
    bool operator==(const Access& o) const = default;
  };
  using Pending = std::vector<Access>;  // sorted, unique: accesses since the last barrier

  void allocate(const ir::Module& m);
  void walk_block(const ir::Block& b, Pending& pending);
  void walk_phase(const ir::Op& op, int phase, Access access, Pending& pending);
  // The bytes operand `operand` of `op` (a view: a local_store's or local_load's, a dot's a or b)
  // touches: its stage where the slot is a constant, else the whole buffer.
  Access view_access(const ir::Op& op, int operand, bool write) const;
  // A dot's reads of its views: with the reads of its own region where it stages the other
  // operand (after that phase's barrier), else as an access of its own (phase 0: a barrier before
  // the dot where one is missing).
  void walk_dot_with_views(const ir::Op& dot, Pending& pending);
  static Pending join(const Pending& a, const Pending& b);

  std::map<const ir::Op*, std::pair<std::int64_t, std::int64_t>> regions_;  // op -> [begin, end)
  std::vector<const ir::Op*> users_;                                         // in program order
  std::set<std::pair<const ir::Op*, int>> barriers_;                         // (op, phase)
  std::vector<std::pair<const ir::Op*, int>> missing_;                       // needed, not in the IR
  std::set<const ir::Op*> rings_;                                            // buffers async copies fill
  std::int64_t total_bytes_ = 0;
  std::int64_t alignment_ = 16;
};

}  // namespace tessera::analysis
