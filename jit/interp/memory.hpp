// Host memory as the interpreted program sees it: the buffers it may touch, the checks on every
// active lane of a load or store, and the memory ops themselves (private to the interpreter).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "jit/interp/interpreter.hpp"
#include "jit/interp/races.hpp"
#include "jit/interp/tile.hpp"

namespace tessera::interp {

enum class Access : std::uint8_t { Load, Store, Atomic };

class MemoryMap {
 public:
  // `races`, when given, records every plain load and store into a sized buffer (races.hpp).
  MemoryMap(const ir::Module& m, std::span<const ArgValue> args, std::span<const HostBuffer> extra,
            RaceTracker* races = nullptr);

  // Throws MemoryAccessError, naming op's source location, for the first active lane (mask null:
  // all lanes) that is null, misaligned, or out of bounds. The bound of a pointer tile that
  // derives from one argument (Tile::provenance) is that argument's buffer, named when overrun;
  // an argument of unknown size (a raw pointer) is not bounded. A pointer of mixed or unknown
  // origin must lie in some known buffer, unless a raw pointer argument could reach it.
  void check(const ir::Op& op, const Tile& ptrs, const std::uint8_t* mask, int elem_bytes, Access access) const;

 private:
  struct Buffer {
    std::uint64_t base;
    std::uint64_t bytes;
    std::string name;  // "argument 'x'", for messages
    bool holds(std::uint64_t addr, std::uint64_t len) const;  // [addr, addr + len) lies inside
  };
  const Buffer* find(std::uint64_t addr, std::uint64_t len) const;
  // Whether the pointers derive from a raw pointer argument that no extra buffer describes: the
  // caller vouches for such accesses.
  bool vouched_for(const Tile& ptrs) const;
  void check_lane(const ir::Op& op, const Tile& ptrs, std::int64_t lane, int elem_bytes, Access access,
                  const Buffer* bound) const;
  void record_races(const ir::Op& op, const Tile& ptrs, const std::uint8_t* mask, int elem_bytes, Access access,
                    const Buffer* bound) const;

  std::vector<Buffer> buffers_;
  std::vector<int> buffer_of_arg_;  // per argument: index into buffers_, or -1 (not a sized pointer)
  std::vector<bool> raw_arg_;       // per argument: a pointer of unknown size
  bool any_raw_ = false;            // some pointer argument has an unknown size
  RaceTracker* races_ = nullptr;
};

Tile eval_addptr(const ir::Op& op, const Tile& ptr, const Tile& offset);
Tile eval_load(const ir::Op& op, const MemoryMap& mem, const Tile& ptrs, const Tile* mask, const Tile* other);
// The same read for an op whose result is not the loaded tile (async_copy): `loaded` is its type.
Tile eval_load(const ir::Op& op, const MemoryMap& mem, const ir::Type& loaded, const Tile& ptrs, const Tile* mask,
               const Tile* other);
void eval_store(const ir::Op& op, const MemoryMap& mem, const Tile& ptrs, const Tile& value, const Tile* mask);
// atomic_rmw and atomic_cas (atomics.cpp): lanes in order, each a read-modify-write of its own.
Tile eval_atomic_rmw(const ir::Op& op, const MemoryMap& mem, const Tile& ptrs, const Tile& value, const Tile* mask);
Tile eval_atomic_cas(const ir::Op& op, const MemoryMap& mem, const Tile& ptrs, const Tile& cmp, const Tile& value);

}  // namespace tessera::interp
