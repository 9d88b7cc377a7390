#include "jit/ir/ir.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <unordered_map>

namespace tessera::ir {
namespace {
constexpr OpInfo kOpInfos[] = {
#define OP(Enum, text, min_ops, max_ops, num_results, num_regions, category) \
  {OpKind::Enum, text, min_ops, max_ops, num_results, num_regions, OpCategory::category},
#include "jit/ir/ops.def"
};
}  // namespace

const OpInfo& op_info(OpKind k) { return kOpInfos[static_cast<int>(k)]; }

bool is_shared_memory_op(OpKind k) {
  switch (k) {
    case OpKind::LocalAlloc:
    case OpKind::SmemIndex:
    case OpKind::SmemTrans:
    case OpKind::LocalStore:
    case OpKind::LocalLoad:
    case OpKind::AsyncCopy:
    case OpKind::AsyncCommit:
    case OpKind::AsyncWait:
    case OpKind::FenceAsyncShared: return true;
    default: return false;
  }
}

const OpInfo* op_info_by_name(std::string_view name) {
  for (const auto& info : kOpInfos)
    if (name == info.name) return &info;
  return nullptr;
}

std::string SourceLoc::str() const {
  if (!known()) return "<unknown location>";
  return column > 0 ? fmt::format("{}:{}:{}", file, line, column) : fmt::format("{}:{}", file, line);
}

std::int64_t Op::int_attr(const std::string& k) const {
  auto it = attrs.find(k);
  if (it == attrs.end() || !std::holds_alternative<std::int64_t>(it->second))
    throw std::logic_error(fmt::format("op '{}' has no integer attribute '{}'", name(), k));
  return std::get<std::int64_t>(it->second);
}

const std::vector<std::int64_t>* Op::int_list_attr(const std::string& k) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? nullptr : std::get_if<std::vector<std::int64_t>>(&it->second);
}

double Op::float_attr(const std::string& k) const {
  auto it = attrs.find(k);
  if (it == attrs.end()) throw std::logic_error(fmt::format("op '{}' has no attribute '{}'", name(), k));
  if (auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
  return std::get<double>(it->second);
}

const std::string& Op::string_attr(const std::string& k) const {
  auto it = attrs.find(k);
  if (it == attrs.end() || !std::holds_alternative<std::string>(it->second))
    throw std::logic_error(fmt::format("op '{}' has no string attribute '{}'", name(), k));
  return std::get<std::string>(it->second);
}

Value* Op::add_result(Type t) {
  auto v = std::make_unique<Value>();
  v->type = std::move(t);
  v->def = this;
  v->index = static_cast<int>(results.size());
  results.push_back(std::move(v));
  return results.back().get();
}

Value* Block::add_arg(Type t, std::string hint) {
  auto v = std::make_unique<Value>();
  v->type = std::move(t);
  v->owner = this;
  v->index = static_cast<int>(args.size());
  v->name_hint = std::move(hint);
  args.push_back(std::move(v));
  return args.back().get();
}

Op* Builder::create(OpKind k, std::vector<Value*> operands, std::vector<Type> result_types,
                    std::map<std::string, Attr> attrs, int num_regions) {
  auto op = std::make_unique<Op>();
  op->kind = k;
  op->operands = std::move(operands);
  op->attrs = std::move(attrs);
  op->loc = loc_;
  op->parent = block_;
  for (auto& t : result_types) op->add_result(std::move(t));
  for (int i = 0; i < num_regions; ++i) {
    op->regions.push_back(std::make_unique<Region>());
    op->regions.back()->parent = op.get();
  }
  block_->ops.push_back(std::move(op));
  return block_->ops.back().get();
}

Value* Builder::int_constant(DType d, std::int64_t v, std::vector<std::int64_t> shape) {
  Type t = Type::scalar(d).with_shape(std::move(shape));
  return create1(OpKind::Constant, {}, t, {{"value", v}});
}

Value* Builder::float_constant(DType d, double v, std::vector<std::int64_t> shape) {
  Type t = Type::scalar(d).with_shape(std::move(shape));
  return create1(OpKind::Constant, {}, t, {{"value", v}});
}

void replace_all_uses(Block& b, Value* from, Value* to) {
  walk(b, [&](Op& op) {
    for (auto*& v : op.operands)
      if (v == from) v = to;
  });
}

namespace {
using ValueMap = std::unordered_map<const Value*, Value*>;

void clone_block_into(const Block& src, Block& dst, ValueMap& map);

void clone_ops(const Block& src, Block& dst, ValueMap& map) {
  for (const auto& op : src.ops) {
    auto c = std::make_unique<Op>();
    c->kind = op->kind;
    c->attrs = op->attrs;
    c->loc = op->loc;
    c->parent = &dst;
    for (auto* v : op->operands) {
      auto it = map.find(v);
      c->operands.push_back(it == map.end() ? v : it->second);
    }
    for (const auto& r : op->results) map[r.get()] = c->add_result(r->type);
    for (const auto& r : op->regions) {
      c->regions.push_back(std::make_unique<Region>());
      c->regions.back()->parent = c.get();
      clone_block_into(*r->block, *c->regions.back()->block, map);
    }
    dst.ops.push_back(std::move(c));
  }
}

void clone_block_into(const Block& src, Block& dst, ValueMap& map) {
  for (const auto& a : src.args) map[a.get()] = dst.add_arg(a->type, a->name_hint);
  clone_ops(src, dst, map);
}
}  // namespace

std::unique_ptr<Module> Module::clone() const {
  auto m = std::make_unique<Module>();
  m->name = name;
  m->arg_facts = arg_facts;
  m->num_warps = num_warps;
  m->num_stages = num_stages;
  ValueMap map;
  clone_block_into(entry(), m->entry(), map);
  return m;
}

std::size_t index_in_block(const Op& op) {
  const auto& ops = op.parent->ops;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].get() == &op) return i;
  throw std::logic_error("op not found in its parent block");
}

}  // namespace tessera::ir
