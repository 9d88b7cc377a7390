// The tile IR: SSA values, operations with nested regions, and the kernel module.
//
// Ownership: a Module owns its body Region; a Region owns its Blocks; a Block owns its arguments
// and Ops; an Op owns its results and regions. Values are referred to by raw pointer; a value's
// uses are recomputed on demand (passes are small and rebuild what they need).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "jit/ir/types.hpp"

namespace tessera::ir {

// How deeply regions (the bodies of for, if, reduce, scan) may nest. The parser, the verifier, the
// printer, the passes and the Module's destructor all recurse once per level, so this bounds their
// stack use (512 levels take well under 1 MiB). The parser refuses deeper text with the position;
// the verifier refuses deeper IR built by hand; the DSL tracer must refuse deeper nesting of
// ts::for_range / ts::if_ with this same constant, naming the user's line.
inline constexpr int kMaxRegionDepth = 512;

enum class OpKind : std::uint16_t {
#define OP(Enum, text, min_ops, max_ops, num_results, num_regions, category) Enum,
#include "jit/ir/ops.def"
};
enum class OpCategory : std::uint8_t { Source, Unary, Binary, Compare, Memory, Shape, Control, Misc };

struct OpInfo {
  OpKind kind;
  const char* name;
  int min_operands, max_operands;  // max -1: unbounded
  int num_results;                 // -1: variadic
  int num_regions;
  OpCategory category;
};
const OpInfo& op_info(OpKind k);
const OpInfo* op_info_by_name(std::string_view name);
// The ops of ops.def's "Shared memory" (local_alloc ... fence_async_shared): the only ones that
// take or make a shared buffer (a dot may read views too).
bool is_shared_memory_op(OpKind k);

// Where a traced op came from in the user's C++ source (or the .tir text for parsed IR).
struct SourceLoc {
  std::string file;
  int line = 0, column = 0;
  bool known() const { return line > 0; }
  std::string str() const;
};

using Attr = std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>>;

class Op;
class Block;
class Region;

class Value {
 public:
  Type type;
  Op* def = nullptr;          // the op that defines it, or null for a block argument
  Block* owner = nullptr;     // for a block argument: its block
  int index = 0;              // result index or argument index
  std::string name_hint;      // kernel argument names, for messages and printing
};

class Op {
 public:
  OpKind kind;
  std::vector<Value*> operands;
  std::vector<std::unique_ptr<Value>> results;
  std::map<std::string, Attr> attrs;  // ordered: deterministic printing
  std::vector<std::unique_ptr<Region>> regions;
  SourceLoc loc;
  Block* parent = nullptr;

  const OpInfo& info() const { return op_info(kind); }
  const char* name() const { return info().name; }
  Value* result(int i = 0) const { return results.at(i).get(); }
  bool has_attr(const std::string& k) const { return attrs.count(k) != 0; }
  std::int64_t int_attr(const std::string& k) const;
  double float_attr(const std::string& k) const;
  const std::string& string_attr(const std::string& k) const;
  // The integer-list attribute `k`, or null when the op has none (or `k` holds another kind).
  const std::vector<std::int64_t>* int_list_attr(const std::string& k) const;
  Value* add_result(Type t);
};

class Block {
 public:
  std::vector<std::unique_ptr<Value>> args;
  std::vector<std::unique_ptr<Op>> ops;
  Region* parent = nullptr;

  Value* add_arg(Type t, std::string hint = {});
  Op* terminator() const { return ops.empty() ? nullptr : ops.back().get(); }
};

class Region {
 public:
  std::unique_ptr<Block> block = std::make_unique<Block>();  // structured control flow: one block
  Op* parent = nullptr;
  Region() { block->parent = this; }
};

// Facts about a kernel argument that the specialization proved (Triton's "specialization").
struct ArgFacts {
  std::int64_t divisibility = 1;   // ints: value divisible by; pointers: address divisible by (bytes)
  bool equal_to_one = false;
};

class Module {
 public:
  std::string name;
  Region body;                      // body.block->args are the kernel arguments
  std::vector<ArgFacts> arg_facts;  // one per kernel argument
  int num_warps = 4;
  int num_stages = 1;  // software-pipelining depth (transforms/pipeline_loads.hpp); printed when > 1

  Block& entry() { return *body.block; }
  const Block& entry() const { return *body.block; }
  std::unique_ptr<Module> clone() const;
};

// The op whose region holds `op` directly (a for, an if, a reduction); null at the kernel's top
// level.
inline Op* parent_op(const Op& op) { return op.parent && op.parent->parent ? op.parent->parent->parent : nullptr; }
// The position of `op` among its block's ops (std::logic_error where the block lacks it).
std::size_t index_in_block(const Op& op);

// Appends ops to a block; the tracer and the passes build IR through it.
class Builder {
 public:
  explicit Builder(Block* b) : block_(b) {}
  Block* block() const { return block_; }
  void set_block(Block* b) { block_ = b; }
  void set_loc(SourceLoc loc) { loc_ = std::move(loc); }
  const SourceLoc& loc() const { return loc_; }

  Op* create(OpKind k, std::vector<Value*> operands, std::vector<Type> result_types,
             std::map<std::string, Attr> attrs = {}, int num_regions = 0);
  Value* create1(OpKind k, std::vector<Value*> operands, Type result_type,
                 std::map<std::string, Attr> attrs = {}) {
    return create(k, std::move(operands), {std::move(result_type)}, std::move(attrs))->result();
  }
  Value* int_constant(DType d, std::int64_t v, std::vector<std::int64_t> shape = {});
  Value* float_constant(DType d, double v, std::vector<std::int64_t> shape = {});

 private:
  Block* block_;
  SourceLoc loc_;
};

// Walks every op in a block, depth first, in program order (parents before their regions' ops).
template <class F>
void walk(Block& b, F&& f) {
  for (auto& op : b.ops) {
    f(*op);
    for (auto& r : op->regions) walk(*r->block, f);
  }
}

// Replaces every use of `from` by `to` inside block `b` (recursively).
void replace_all_uses(Block& b, Value* from, Value* to);

}  // namespace tessera::ir
