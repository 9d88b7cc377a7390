// Helpers of the DSL tests: trace a kernel (and verify the IR), count ops, run on the interpreter.
#pragma once
#include <catch2/catch.hpp>

#include <memory>
#include <tessera/tessera.hpp>
#include <vector>

#include "dsl/src/tracer.hpp"
#include "jit/interp/interpreter.hpp"
#include "jit/ir/ir.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"

namespace dsl_test {

namespace ts = tessera;
namespace ir = tessera::ir;

template <class K>
std::unique_ptr<ir::Module> trace(K& k, const ts::MetaValues& meta = {}) {
  auto m = ts::trace_kernel(k.def(), meta, {}, 4);
  ir::verify(*m);
  return m;
}

inline int count_ops(ir::Block& b, ir::OpKind kind) {
  int n = 0;
  ir::walk(b, [&](ir::Op& op) { n += op.kind == kind; });
  return n;
}

inline std::vector<ir::OpKind> kinds(const ir::Block& b) {
  std::vector<ir::OpKind> r;
  for (const auto& op : b.ops) r.push_back(op->kind);
  return r;
}

inline ir::Op* first_op(ir::Block& b, ir::OpKind kind) {
  ir::Op* found = nullptr;
  ir::walk(b, [&](ir::Op& op) {
    if (!found && op.kind == kind) found = &op;
  });
  return found;
}

inline std::string type_of(const ir::Value* v) { return ir::to_string(v->type); }

// Traces with `meta` and runs the kernel over `grid` on the interpreter.
template <class K, class... Args>
void run(K& k, const ts::MetaValues& meta, ts::Dim3 grid, Args&&... args) {
  auto m = trace(k, meta);
  const auto values = K::arg_values(std::forward<Args>(args)...);
  ts::interp::run(*m, grid, values);
}

}  // namespace dsl_test
