#include "jit/interp/races.hpp"

#include <fmt/format.h>

#include <limits>

#include "tessera/error.hpp"

namespace tessera::interp {

void RaceTracker::set_program(const std::array<std::int64_t, 3>& id) {
  const auto linear = static_cast<std::uint64_t>(id[0] + std::int64_t{grid_[0]} * (id[1] + std::int64_t{grid_[1]} * id[2]));
  // Beyond 2^32 - 1 programs (never reached by an interpreted launch in practice) nothing is tracked.
  program_ = linear < std::numeric_limits<std::uint32_t>::max() ? static_cast<std::uint32_t>(linear + 1) : 0;
}

RaceTracker::Cell& RaceTracker::cell(int buffer, std::uint64_t offset) {
  // Consecutive lanes touch the same page: remember the last one instead of hashing every byte.
  const std::uint64_t key = (static_cast<std::uint64_t>(buffer) << 44) | (offset / kPageBytes);
  if (last_page_ == nullptr || key != last_key_) {
    Page& page = pages_[key];
    if (!page) page = std::make_unique<Cell[]>(kPageBytes);
    last_key_ = key;
    last_page_ = page.get();
  }
  return last_page_[offset % kPageBytes];
}

std::uint16_t RaceTracker::op_index(const ir::Op& op) {
  auto it = op_ids_.find(&op);
  if (it != op_ids_.end()) return it->second;
  if (ops_.size() >= std::numeric_limits<std::uint16_t>::max()) return 0;
  ops_.push_back(&op);
  const auto index = static_cast<std::uint16_t>(ops_.size());
  op_ids_.emplace(&op, index);
  return index;
}

std::string RaceTracker::program_name(std::uint32_t program) const {
  const std::uint64_t linear = program - 1;
  const std::uint64_t x = linear % grid_[0], y = linear / grid_[0] % grid_[1], z = linear / grid_[0] / grid_[1];
  return fmt::format("program ({}, {}, {})", x, y, z);
}

std::string RaceTracker::op_where(std::uint16_t index) const {
  if (index == 0) return "an access";
  const ir::Op& op = *ops_[index - 1];
  return fmt::format("the {} at {}", op.kind == ir::OpKind::Store ? "store" : "load", op.loc.str());
}

void RaceTracker::report(const ir::Op& op, bool is_store, const std::string& buffer_name, std::uint64_t offset,
                         std::uint32_t other, std::uint16_t other_op, bool other_wrote) const {
  throw MemoryAccessError(fmt::format(
      "data race between programs of one launch: the {} at {} in {} {} byte {} of the buffer of {}, which {} {} "
      "({}); programs run in no fixed order on a GPU, so the result depends on the schedule: give each "
      "program elements of its own, or use an atomic",
      is_store ? "store" : "load", op.loc.str(), program_name(program_), is_store ? "writes" : "reads", offset,
      buffer_name, program_name(other), other_wrote ? "writes" : "reads", op_where(other_op)));
}

void RaceTracker::record(const ir::Op& op, bool is_store, int buffer, const std::string& buffer_name,
                         std::uint64_t offset, std::uint64_t bytes) {
  if (program_ == 0) return;
  const std::uint16_t me_op = op_index(op);
  for (std::uint64_t b = offset; b < offset + bytes; ++b) {
    Cell& c = cell(buffer, b);
    if (c.writer != 0 && c.writer != program_) report(op, is_store, buffer_name, b, c.writer, c.writer_op, true);
    if (is_store) {
      if (c.reader != 0 && c.reader != program_) report(op, true, buffer_name, b, c.reader, c.reader_op, false);
      if (c.reader2 != 0 && c.reader2 != program_) report(op, true, buffer_name, b, c.reader2, c.reader2_op, false);
      c.writer = program_;
      c.writer_op = me_op;
    } else if (c.reader == 0) {
      c.reader = program_;
      c.reader_op = me_op;
    } else if (c.reader != program_ && c.reader2 == 0) {
      c.reader2 = program_;
      c.reader2_op = me_op;
    }
  }
}

}  // namespace tessera::interp
