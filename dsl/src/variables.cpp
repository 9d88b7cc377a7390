// SSA construction while tracing, after Braun et al., "Simple and Efficient Construction of SSA
// Form" (CC 2013), specialized to structured regions.
//
// Every C++ Tile variable owns a Slot: its current SSA value per open region ("current def" in
// Braun's terms, keyed by region instead of basic block). Regions nest as a stack of Scopes.
//  - Reading a variable in region d (readVariable): if it has a value in d, that is it. Otherwise
//    its value comes from the enclosing region d-1 (read recursively). Across a loop body this
//    cannot be the outer value itself, since the body may still reassign the variable further down
//    (a back edge): so the first read inside a loop body creates a placeholder block argument of
//    the body (Braun's incomplete phi) and records (placeholder, outer value). Branch bodies have
//    no back edge, so a read there resolves straight to the enclosing value.
//  - Assigning a variable in region d (writeVariable) records the new value in d and, when the
//    variable lives outside d, remembers it among d's assigned variables.
//  - Closing a loop body (control.cpp) seals it: placeholders of variables never assigned are
//    trivial phis, replaced by their outer value and dropped; assigned variables become carried
//    values (block argument, yield operand, op result). Closing an if_ yields each assigned variable
//    from both branches (the outer value from a branch that did not assign it). Either way the
//    op's results are then assigned to the variables in the enclosing region, which is how the C++
//    variables see the loop's or branch's outcome after the call returns.
// One trace suffices: nothing is re-run, and no value is ever carried that the body did not assign.
#include <fmt/format.h>

#include <algorithm>

#include "dsl/src/trace_state.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

bool live(const TraceState& st, const Slot::Entry& e) {
  return e.depth < static_cast<int>(st.scopes.size()) && st.scopes[static_cast<std::size_t>(e.depth)].id == e.scope_id;
}

// Drops entries of closed regions; reports a variable from another trace.
Slot& checked(TraceState& st, const SlotPtr& s, const Loc& loc) {
  if (s->trace_id != st.id)
    program_error(loc, "a tile from another kernel trace is used here; tiles live only while their kernel is traced");
  std::erase_if(s->entries, [&](const Slot::Entry& e) { return !live(st, e); });
  return *s;
}

const char* region_name(Scope::Kind k) { return k == Scope::Kind::Loop ? "for_range" : "if_"; }

}  // namespace

void open_scope(TraceState& st, Scope::Kind kind, ir::Block* block, const ir::SourceLoc& loc) {
  Scope sc;
  sc.kind = kind;
  sc.id = st.next_scope_id++;
  sc.block = block;
  sc.loc = loc;
  st.scopes.push_back(std::move(sc));
}

ir::Value* value_at(TraceState& st, const SlotPtr& s, int d) {
  auto& entries = s->entries;
  auto above = std::find_if(entries.begin(), entries.end(), [&](const Slot::Entry& e) { return e.depth > d; });
  if (above == entries.begin()) throw InternalError("tracer: variable read outside the region that defines it");
  if (std::prev(above)->depth == d) return std::prev(above)->value;
  ir::Value* outer = value_at(st, s, d - 1);
  Scope& sc = st.scopes[static_cast<std::size_t>(d)];
  if (sc.kind != Scope::Kind::Loop) return outer;
  ir::Value* placeholder = sc.block->add_arg(outer->type);
  above = std::find_if(entries.begin(), entries.end(), [&](const Slot::Entry& e) { return e.depth > d; });
  entries.insert(above, Slot::Entry{d, sc.id, placeholder});
  sc.incoming.push_back({s, placeholder, outer});
  return placeholder;
}

ir::Value* innermost_value(const TraceState& st, const Slot& s) {
  if (s.entries.empty() || s.entries.back().depth != st.depth())
    throw InternalError("tracer: an assigned variable has no value in the closing region");
  return s.entries.back().value;
}

void close_scope(TraceState& st) {
  Scope& sc = st.scopes.back();
  const int d = st.depth();
  auto drop = [&](const SlotPtr& s) {
    std::erase_if(s->entries, [&](const Slot::Entry& e) { return e.depth == d; });
  };
  for (auto& in : sc.incoming) drop(in.slot);
  for (auto& s : sc.assigned) drop(s);
  st.scopes.pop_back();
}

void assign(TraceState& st, const SlotPtr& s, ir::Value* v, const Loc& loc) {
  Slot& slot = checked(st, s, loc);
  const int d = st.depth();
  Scope& sc = st.scopes.back();
  if (slot.entries.empty()) {  // its defining region closed: the variable starts over here
    slot.entries.push_back({d, sc.id, v});
    return;
  }
  if (slot.entries.front().depth < d) {  // an outer variable reassigned inside a body
    ir::Value* before = value_at(st, s, d);
    if (!(before->type == v->type)) {
      const ir::SourceLoc where = v->def != nullptr && v->def->loc.known() ? v->def->loc : to_ir_loc(loc);
      program_error(where, fmt::format("a variable assigned inside a {} body changes from {} to {}; a value "
                                       "carried out of a loop or branch must keep its type and shape",
                                       region_name(sc.kind), ir::to_string(before->type), ir::to_string(v->type)));
    }
    if (std::find(sc.assigned.begin(), sc.assigned.end(), s) == sc.assigned.end()) sc.assigned.push_back(s);
  }
  if (slot.entries.back().depth == d) slot.entries.back().value = v;
  else slot.entries.push_back({d, sc.id, v});
}

SlotPtr slot_new(ir::Value* v, const Loc& loc) {
  TraceState& st = current_state(loc);
  auto s = std::make_shared<Slot>();
  s->trace_id = st.id;
  s->entries.push_back({st.depth(), st.scopes.back().id, v});
  return s;
}

ir::Value* slot_read(const SlotPtr& s, const Loc& loc) {
  TraceState& st = current_state(loc);
  if (!s) program_error(loc, "a tile variable is read before anything was assigned to it");
  Slot& slot = checked(st, s, loc);
  if (slot.entries.empty())
    program_error(loc, "a tile defined inside a for_range/if_ body is used after that body ended; declare the "
                       "variable before the loop or branch and assign it inside");
  return value_at(st, s, st.depth());
}

void slot_assign(SlotPtr& s, ir::Value* v, const Loc& loc) {
  TraceState& st = current_state(loc);
  if (!s || s->trace_id != st.id) {
    s = slot_new(v, loc);
    return;
  }
  assign(st, s, v, loc);
}

Shape value_shape(const ir::Value* v) { return v->type.shape; }

void check_tile_shape(const Shape& shape, const std::string& what, const Loc& loc) {
  const std::string problem = ir::tile_shape_problem(shape, shape_str(shape));
  if (!problem.empty()) program_error(loc, fmt::format("{}: {}", what, problem));
}

void check_region_depth(const TraceState& st, const char* what, const Loc& loc) {
  if (st.depth() >= ir::kMaxRegionDepth)
    program_error(loc, fmt::format("{} would nest regions {} deep, more than the {} allowed (each for_range and if_ "
                                   "body and each reduce/scan combine function is one; a plain C++ for or if over "
                                   "C++ values, such as meta-parameters, nests none)",
                                   what, st.depth() + 1, ir::kMaxRegionDepth));
}

std::string shape_str(const Shape& s) {
  if (s.empty()) return "<scalar>";
  std::string r = "<";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
  return r + ">";
}

}  // namespace tessera::detail
