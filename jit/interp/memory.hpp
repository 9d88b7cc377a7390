// Host memory as the interpreted program sees it: the buffers it may touch, the checks on every
// active lane of a load or store, and the memory ops themselves (private to the interpreter).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "jit/interp/interpreter.hpp"
#include "jit/interp/tile.hpp"

namespace tessera::interp {

class MemoryMap {
 public:
  MemoryMap(const ir::Module& m, std::span<const ArgValue> args, std::span<const HostBuffer> extra);

  // Throws MemoryAccessError, naming op's source location, for the first active lane (mask null:
  // all lanes) that is null, misaligned, straddles the end of a known buffer, or, when some
  // pointer argument has a known size, lies outside every known buffer.
  void check(const ir::Op& op, const Tile& ptrs, const std::uint8_t* mask, int elem_bytes, bool is_store) const;

 private:
  struct Buffer {
    std::uint64_t base;
    std::uint64_t bytes;
    std::string name;  // "argument 'x'", for messages
  };
  bool fits(std::uint64_t addr, std::uint64_t len) const;
  void check_lane(const ir::Op& op, const Tile& ptrs, std::int64_t lane, int elem_bytes, bool is_store) const;

  std::vector<Buffer> buffers_;
  bool checked_ = false;  // raw pointers of unknown size only: nothing to check against
};

Tile eval_addptr(const ir::Op& op, const Tile& ptr, const Tile& offset);
Tile eval_load(const ir::Op& op, const MemoryMap& mem, const Tile& ptrs, const Tile* mask, const Tile* other);
void eval_store(const ir::Op& op, const MemoryMap& mem, const Tile& ptrs, const Tile& value, const Tile* mask);
// atomic_rmw and atomic_cas (atomics.cpp): lanes in order, each a read-modify-write of its own.
Tile eval_atomic_rmw(const ir::Op& op, const MemoryMap& mem, const Tile& ptrs, const Tile& value, const Tile* mask);
Tile eval_atomic_cas(const ir::Op& op, const MemoryMap& mem, const Tile& ptrs, const Tile& cmp, const Tile& value);

}  // namespace tessera::interp
