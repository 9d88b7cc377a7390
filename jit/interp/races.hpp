// Races between the programs of one launch. The programs of a grid run in no fixed order on a
// GPU, so two programs that touch the same byte without an atomic — both writing, or one writing
// where another reads — compute something that depends on the schedule. Triton's interpreter runs
// the programs one after another and never notices; this tracker does.
//
// It keeps, for every byte of a sized buffer that the launch touched, the program that last wrote
// it and up to two programs that read it (with the op of each, to name its source line): two
// readers suffice to name a reader other than any given writer. The shadow is allocated per 4 KiB
// page on first touch, so memory grows with what the launch touches (20 bytes per byte touched).
// Atomics are not recorded: they are how programs share memory on purpose.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/ir/ir.hpp"
#include "tessera/args.hpp"

namespace tessera::interp {

class RaceTracker {
 public:
  explicit RaceTracker(Dim3 grid) : grid_(grid) {}

  // The program whose accesses follow (x fastest, as run() numbers them).
  void set_program(const std::array<std::int64_t, 3>& id);

  // Records a plain load or store of `bytes` bytes at byte `offset` of buffer `buffer` (an index
  // the caller keeps stable, with `buffer_name` for messages); throws MemoryAccessError naming both
  // programs and both source lines when another program wrote that byte, or, for a store, read it.
  void record(const ir::Op& op, bool is_store, int buffer, const std::string& buffer_name, std::uint64_t offset,
              std::uint64_t bytes);

 private:
  static constexpr std::uint64_t kPageBytes = 4096;
  struct Cell {
    std::uint32_t writer = 0, reader = 0, reader2 = 0;  // program index + 1; 0: none
    std::uint16_t writer_op = 0, reader_op = 0, reader2_op = 0;  // index into ops_ (+1); 0: unknown
  };
  using Page = std::unique_ptr<Cell[]>;

  Cell& cell(int buffer, std::uint64_t offset);
  std::uint16_t op_index(const ir::Op& op);
  std::string program_name(std::uint32_t program) const;
  std::string op_where(std::uint16_t index) const;
  [[noreturn]] void report(const ir::Op& op, bool is_store, const std::string& buffer_name, std::uint64_t offset,
                           std::uint32_t other, std::uint16_t other_op, bool other_wrote) const;

  Dim3 grid_;
  std::uint32_t program_ = 0;  // current program index + 1
  std::unordered_map<std::uint64_t, Page> pages_;  // (buffer << 44 | page number) -> cells; never iterated
  std::uint64_t last_key_ = 0;
  Cell* last_page_ = nullptr;  // pages_[last_key_]: pages never move once made
  std::vector<const ir::Op*> ops_;
  std::unordered_map<const ir::Op*, std::uint16_t> op_ids_;  // looked up, never iterated
};

}  // namespace tessera::interp
