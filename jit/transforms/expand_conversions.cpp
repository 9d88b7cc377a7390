#include "jit/transforms/expand_conversions.hpp"

#include <algorithm>
#include <vector>

#include "jit/analysis/register_conversion.hpp"
#include "jit/analysis/shared_memory.hpp"
#include "jit/transforms/rewrite.hpp"

namespace tessera::transforms {
using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

bool goes_through_shared_view(const Op& op) {
  if (op.kind != OpKind::ConvertLayout) return false;
  const ir::Type& src = op.operands[0]->type;
  const ir::Type& dst = op.result()->type;
  return src.is_tile() && src.rank() == 2 && !src.is_ptr() && src.dtype != ir::DType::I1 && !src.layout.is_none() &&
         !dst.layout.is_none() && !analysis::register_renaming(src, dst);
}

// The view a conversion stores into and loads from: the tile's shape and type, rows padded.
ir::Type view_type(const Op& convert) {
  ir::Type t = convert.result()->type;
  t.layout = {};
  t.shared = true;
  t.encoding.kind = ir::SharedEncoding::Kind::Padded;
  t.encoding.bytes = static_cast<int>(std::max<std::int64_t>(4, analysis::convert_row_pad(convert) * ir::dtype_bytes(t.dtype)));
  return t;
}

}  // namespace

void expand_conversions(ir::Module& m) {
  std::vector<Op*> converts;
  ir::walk(m.entry(), [&](Op& op) {
    if (goes_through_shared_view(op)) converts.push_back(&op);
  });
  for (Op* convert : converts) {
    const ir::Type view = view_type(*convert);
    ir::Type buffer = view;
    buffer.shape.insert(buffer.shape.begin(), 1);
    Op* top = convert;  // local_alloc's rule: at the kernel's top level
    while (ir::parent_op(*top)) top = ir::parent_op(*top);
    ir::Block scratch;
    ir::Builder b(&scratch);
    b.set_loc(convert->loc);
    Value* buf = b.create1(OpKind::LocalAlloc, {}, buffer);
    Value* stage = b.create1(OpKind::SmemIndex, {buf, b.int_constant(ir::DType::I32, 0)}, view);
    splice_before(scratch, *top);
    b.create(OpKind::LocalStore, {stage, convert->operands[0]}, {});
    Value* converted = b.create1(OpKind::LocalLoad, {stage}, convert->result()->type);
    splice_before(scratch, *convert);
    replace_op(m, *convert, {converted});
  }
}

}  // namespace tessera::transforms
