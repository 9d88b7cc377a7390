// Shared memory of one program while interpreting (ops.def, "Shared memory"): buffers, the views of
// their stages, and the async copies in flight. A copy reads global memory when it starts and lands
// at the async_wait that covers its group; reading or overwriting an element before that is a
// ProgramError naming both ops, which is how a pipeliner's missing or misplaced wait shows up on
// the host, before any GPU runs it.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "jit/interp/tile.hpp"

namespace tessera::interp {

struct SharedBuffer;

// A buffer, or one stage of it: `shape`'s elements from element `offset` on (a stage of a buffer
// whose leading dim counts stages is one contiguous run); `transposed` (smem_trans): a 2-D stage
// read as its transpose, `shape` the transpose's.
struct SmemView {
  std::shared_ptr<SharedBuffer> buffer;
  std::int64_t offset = 0;
  std::vector<std::int64_t> shape;
  bool transposed = false;
};

class SharedMemory {
 public:
  // Forgets every copy in flight: a new program starts (its buffers are its own).
  void reset();

  SmemView alloc(const ir::Op& local_alloc);
  SmemView index(const ir::Op& smem_index, const SmemView& buffer, std::int64_t slot) const;
  static SmemView transpose(const SmemView& view);
  void store(const ir::Op& local_store, const SmemView& view, const Tile& value);
  Tile load(const ir::Op& local_load, const SmemView& view) const;
  // The elements of `view` as a tile of `type` (a dot's operand read from shared memory).
  Tile read(const ir::Op& op, const SmemView& view, const ir::Type& type) const;
  // Starts a copy of `data` (the elements async_copy read, masked ones 0) into `view`.
  void start_copy(const ir::Op& async_copy, const SmemView& view, Tile data);
  void commit();
  void wait(const ir::Op& async_wait);

 private:
  // One execution of an async_copy (an op in a loop starts one per iteration): serials count up,
  // so the copies not yet committed are exactly those from first_uncommitted_ on.
  struct Copy {
    SmemView view;
    Tile data;
    const ir::Op* op;
    std::int64_t serial;
  };
  // A ProgramError when an element of `view` is still being written by a copy; `what` says what
  // `op` does to it ("reads", "overwrites").
  void check_not_in_flight(const ir::Op& op, const SmemView& view, const char* what) const;
  void land(const Copy& c);

  std::int64_t next_serial_ = 1, first_uncommitted_ = 1;
  std::vector<Copy> uncommitted_;
  std::deque<std::vector<Copy>> groups_;  // committed, oldest first
};

}  // namespace tessera::interp
