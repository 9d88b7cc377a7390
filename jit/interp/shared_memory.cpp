#include "jit/interp/shared_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace tessera::interp {

// Per element: whether anything wrote it, and the copy writing it now (none: a null op), for the
// checks and their messages.
struct SharedBuffer {
  struct InFlight {
    const ir::Op* op = nullptr;
    std::int64_t serial = 0;
  };
  ir::Type type;  // the local_alloc's, for messages
  Tile data;
  std::vector<bool> written;
  std::vector<InFlight> in_flight;
};

namespace {

std::int64_t numel(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

}  // namespace

void SharedMemory::reset() {
  uncommitted_.clear();
  groups_.clear();
  first_uncommitted_ = next_serial_;
}

SmemView SharedMemory::alloc(const ir::Op& op) {
  const ir::Type& t = op.result()->type;
  auto buf = std::make_shared<SharedBuffer>();
  buf->type = t;
  buf->data = Tile(t.dtype, t.pointee, t.shape);
  buf->written.assign(static_cast<std::size_t>(buf->data.numel()), false);
  buf->in_flight.assign(buf->written.size(), {});
  return SmemView{std::move(buf), 0, t.shape};
}

SmemView SharedMemory::index(const ir::Op& op, const SmemView& buffer, std::int64_t slot) const {
  const std::int64_t stages = buffer.shape.at(0);
  if (slot < 0)
    throw ProgramError(fmt::format("smem_index at {}: stage {} (negative) of a buffer of {} stages ({})", op.loc.str(), slot,
                                   stages, ir::to_string(op.operands[0]->type)));
  SmemView v{buffer.buffer, 0, std::vector<std::int64_t>(buffer.shape.begin() + 1, buffer.shape.end())};
  v.offset = buffer.offset + (slot % stages) * numel(v.shape);  // a ring: slot i is stage i mod stages
  return v;
}

SmemView SharedMemory::transpose(const SmemView& view) {
  SmemView t = view;
  t.shape = {view.shape.at(1), view.shape.at(0)};
  t.transposed = !view.transposed;
  return t;
}

void SharedMemory::check_not_in_flight(const ir::Op& op, const SmemView& view, const char* what) const {
  const std::int64_t n = numel(view.shape);
  for (std::int64_t i = 0; i < n; ++i) {
    const SharedBuffer::InFlight& copy = view.buffer->in_flight[static_cast<std::size_t>(view.offset + i)];
    if (!copy.op) continue;
    const bool committed = copy.serial < first_uncommitted_;
    throw ProgramError(fmt::format("{} at {} {} shared memory that the async_copy at {} is still writing: {}", op.name(),
                                   op.loc.str(), what, copy.op->loc.str(),
                                   committed ? "no async_wait has covered its group yet"
                                             : "it was never committed (async_commit), so no async_wait covers it"));
  }
}

void SharedMemory::store(const ir::Op& op, const SmemView& view, const Tile& value) {
  check_not_in_flight(op, view, "overwrites");
  SharedBuffer& b = *view.buffer;
  const std::int64_t n = numel(view.shape), esz = b.data.elem_bytes();
  if (value.numel() != n || value.elem_bytes() != esz) internal_error(op, "a value that is not the view's shape");
  std::memcpy(b.data.raw() + view.offset * esz, value.raw(), static_cast<std::size_t>(n * esz));
  std::fill_n(b.written.begin() + view.offset, n, true);
}

Tile SharedMemory::load(const ir::Op& op, const SmemView& view) const { return read(op, view, op.result()->type); }

Tile SharedMemory::read(const ir::Op& op, const SmemView& view, const ir::Type& type) const {
  check_not_in_flight(op, view, "reads");
  const SharedBuffer& b = *view.buffer;
  const std::int64_t n = numel(view.shape), esz = b.data.elem_bytes();
  for (std::int64_t i = 0; i < n; ++i)
    if (!b.written[static_cast<std::size_t>(view.offset + i)])
      throw ProgramError(fmt::format("{} at {} reads shared memory that nothing wrote (element {} of a view of {})",
                                     op.name(), op.loc.str(), i, ir::to_string(b.type)));
  Tile out(type);
  if (!view.transposed) {
    std::memcpy(out.raw(), b.data.raw() + view.offset * esz, static_cast<std::size_t>(n * esz));
    return out;
  }
  const std::int64_t rows = view.shape[0], cols = view.shape[1];  // element (r, c) lies at (c, r) of the stage
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      std::memcpy(out.raw() + (r * cols + c) * esz, b.data.raw() + (view.offset + c * rows + r) * esz, static_cast<std::size_t>(esz));
  return out;
}

void SharedMemory::start_copy(const ir::Op& op, const SmemView& view, Tile data) {
  check_not_in_flight(op, view, "overwrites");
  const std::int64_t serial = next_serial_++;
  std::fill_n(view.buffer->in_flight.begin() + view.offset, numel(view.shape), SharedBuffer::InFlight{&op, serial});
  uncommitted_.push_back(Copy{view, std::move(data), &op, serial});
}

// A group is closed even when empty: cp.async.wait_group counts empty groups too, which is what
// lets a pipelined loop commit once per iteration whether or not it copied.
void SharedMemory::commit() {
  groups_.push_back(std::move(uncommitted_));
  uncommitted_.clear();
  first_uncommitted_ = next_serial_;
}

void SharedMemory::wait(const ir::Op& op) {
  const auto pending = static_cast<std::size_t>(op.int_attr("pending"));
  while (groups_.size() > pending) {
    for (const Copy& c : groups_.front()) land(c);
    groups_.pop_front();
  }
}

void SharedMemory::land(const Copy& c) {
  SharedBuffer& b = *c.view.buffer;
  const std::int64_t n = numel(c.view.shape), esz = b.data.elem_bytes();
  std::memcpy(b.data.raw() + c.view.offset * esz, c.data.raw(), static_cast<std::size_t>(n * esz));
  std::fill_n(b.written.begin() + c.view.offset, n, true);
  std::fill_n(b.in_flight.begin() + c.view.offset, n, SharedBuffer::InFlight{});
}

}  // namespace tessera::interp
