#include "jit/transforms/cse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "jit/ir/printer.hpp"
#include "jit/transforms/rewrite.hpp"

namespace tessera::transforms {
using namespace ir;

namespace {

bool is_candidate(const Op& op) {
  if (!op.regions.empty()) return false;
  // Memory ops (loads, stores, atomics) read or write state that changes between two of them:
  // two identical atomics are two updates, never one.
  return op.info().category != OpCategory::Memory && op.kind != OpKind::Yield && op.kind != OpKind::Return &&
         !is_impure_asm(op) && !reads_shared_view(op);
}

bool commutes(OpKind k) {
  switch (k) {
    case OpKind::Add: case OpKind::Mul: case OpKind::And: case OpKind::Or: case OpKind::Xor:
    case OpKind::Min: case OpKind::Max: case OpKind::CmpEq: case OpKind::CmpNe: return true;
    default: return false;
  }
}

// Operands enter the key by identity: the key is only looked up, never iterated, so pointer
// values do not reach the output.
std::string key_of(const Op& op) {
  std::vector<const Value*> operands(op.operands.begin(), op.operands.end());
  if (commutes(op.kind)) std::sort(operands.begin(), operands.end(), std::less<const Value*>());
  std::string key = op.name();
  for (const Value* v : operands) key += fmt::format(" {}", fmt::ptr(v));
  for (const auto& [name, value] : op.attrs) key += " " + name + "=" + print_attr(value);
  for (const auto& r : op.results) key += " : " + to_string(r->type);
  return key;
}

class Cse {
 public:
  explicit Cse(Module& m) : m_(m) {}

  void block(Block& b) {
    scopes_.emplace_back();
    std::size_t i = 0;
    while (i < b.ops.size()) {
      Op& op = *b.ops[i];
      if (is_candidate(op)) {
        std::string key = key_of(op);
        if (Op* earlier = lookup(key)) {
          std::vector<Value*> values;
          for (auto& r : earlier->results) values.push_back(r.get());
          replace_op(m_, op, values);  // the next op is now at i
          continue;
        }
        scopes_.back().emplace(std::move(key), &op);
      }
      for (auto& r : op.regions) block(*r->block);
      ++i;
    }
    scopes_.pop_back();
  }

 private:
  Op* lookup(const std::string& key) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto found = it->find(key); found != it->end()) return found->second;
    return nullptr;
  }

  Module& m_;
  std::vector<std::unordered_map<std::string, Op*>> scopes_;  // one per enclosing block
};

}  // namespace

void cse(Module& m) { Cse(m).block(m.entry()); }

}  // namespace tessera::transforms
