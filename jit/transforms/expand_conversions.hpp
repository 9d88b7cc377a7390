// Layout conversions as shared-memory IR (issue 9 §2).
#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// A convert_layout of a 2-D tile whose elements move between threads (no register renaming:
// analysis::register_renaming) becomes, for %y = convert_layout %x : <MxNxT, #dst>,
//   %buf = local_alloc : !smem<1xMxNxT, #padded<P>>   (at the kernel's top level, just before the
//   %c = constant {value = 0} : i32                    top-level op that holds the conversion)
//   %view = smem_index %buf, %c
//   local_store %view, %x        (each thread writes the elements it holds)
//   %y = local_load %view : <MxNxT, #dst>
// so that its buffer is the shared-memory plan's to allocate like any other and its barriers are
// place-barriers' to write: one between the store and the load, one before the store where
// earlier accesses of those bytes are pending (a loop's previous iteration). Rows are padded as
// analysis::convert_row_pad says, at least 4 bytes (#padded's unit): 16 bytes where both layouts
// move runs of elements along rows, so that an mma accumulator's eight rows of a warp start four
// banks apart; otherwise one element, so that a column walked down spreads over the banks.
// Conversions of other ranks, of i1 and of pointers keep their own lowering (the lowering
// compiles views of 2-D tiles; a buffer holds no pointers). Run after the layout pass and sink,
// before place-barriers.
void expand_conversions(ir::Module& m);

}  // namespace tessera::transforms
