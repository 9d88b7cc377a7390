// The tracer's state while a kernel body runs (internal to dsl/src). One TraceState per trace,
// reachable through a thread-local pointer that trace_kernel sets and always clears.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "jit/ir/ir.hpp"
#include "tessera/detail/core.hpp"
#include "tessera/launch.hpp"

namespace tessera::detail {

// A C++ Tile variable. `entries` holds its current SSA value in each open region where it has one,
// by increasing depth (0: the kernel body). An entry belongs to one opened region (`scope_id`); an
// entry of a region that has closed is dead and is dropped on the next access.
struct Slot {
  struct Entry {
    int depth;
    std::uint64_t scope_id;
    ir::Value* value;
  };
  std::vector<Entry> entries;
  std::uint64_t trace_id = 0;
};

// An open region: the kernel body, a for_range body, or one branch of an if_.
struct Scope {
  enum class Kind : std::uint8_t { Kernel, Loop, Branch };
  struct Incoming {
    SlotPtr slot;
    ir::Value* placeholder;  // the loop body's block argument standing for the outer value
    ir::Value* outer;        // the value in the enclosing region
  };
  Kind kind = Kind::Kernel;
  std::uint64_t id = 0;
  ir::Block* block = nullptr;
  ir::SourceLoc loc;
  std::vector<Incoming> incoming;  // loops only: outer variables read in the body, in first-read order
  std::vector<SlotPtr> assigned;   // outer variables assigned in the body, in first-assignment order
};

struct TraceState {
  std::uint64_t id = 0;
  ir::Module* module = nullptr;
  ir::Builder builder{nullptr};
  MetaValues meta;
  std::vector<Scope> scopes;
  std::uint64_t next_scope_id = 1;

  int depth() const { return static_cast<int>(scopes.size()) - 1; }
};

// The state of the trace running on this thread; ProgramError when there is none.
TraceState& current_state(const Loc& loc);
// The builder of the current trace, positioned at the innermost region, stamping ops with `loc`.
ir::Builder& builder_at(const Loc& loc);
ir::SourceLoc to_ir_loc(const Loc& loc);
[[noreturn]] void program_error(const ir::SourceLoc& loc, const std::string& what);
[[noreturn]] void program_error(const Loc& loc, const std::string& what);

// variables.cpp: the SSA construction over slots and scopes.
void open_scope(TraceState& st, Scope::Kind kind, ir::Block* block, const ir::SourceLoc& loc);
// The value of `s` seen at depth `d`, creating loop placeholders on the way (Braun's readVariable).
ir::Value* value_at(TraceState& st, const SlotPtr& s, int d);
// The value `s` has in the innermost region (it must have one: s was assigned there).
ir::Value* innermost_value(const TraceState& st, const Slot& s);
// Closes the innermost region: drops every slot entry it holds.
void close_scope(TraceState& st);
// Records `v` as the new value of `s` in the innermost region (Braun's writeVariable).
void assign(TraceState& st, const SlotPtr& s, ir::Value* v, const Loc& loc);

std::string shape_str(const Shape& s);

// Triton's limits on a tile, checked wherever the tracer makes a shape (ir::tile_shape_problem,
// the parser's and verifier's rule): every dim a positive power of two, at most 2^20 elements.
// ProgramError at `loc`, "<what>: <problem>", unless `shape` is a valid tile shape.
void check_tile_shape(const Shape& shape, const std::string& what, const Loc& loc);

// for_range / if_ bodies and reduce/scan combine functions nest at most ir::kMaxRegionDepth deep:
// the parser and verifier refuse deeper IR, and every pass recurses once per level.
// ProgramError at `loc` when opening one more region would nest deeper than ir::kMaxRegionDepth.
void check_region_depth(const TraceState& st, const char* what, const Loc& loc);

}  // namespace tessera::detail
