#include "jit/ir/verifier.hpp"

#include <fmt/format.h>

#include <unordered_set>

#include "jit/ir/printer.hpp"
#include "jit/ir/verifier_rules.hpp"
#include "tessera/error.hpp"

namespace tessera::ir {
namespace {

[[noreturn]] void fail(const Op& op, const std::string& problem) {
  throw ProgramError(fmt::format("{}: invalid IR: {}\n  in: {}", op.loc.str(), problem, print_op(op)));
}

std::string count_text(int n, const char* noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

class Verifier {
 public:
  explicit Verifier(const Module& m) : module_(m) {}

  void run() {
    const Block& entry = module_.entry();
    check_module_header();
    for (const auto& a : entry.args) visible_.insert(a.get());
    if (entry.ops.empty() || entry.terminator()->kind != OpKind::Return)
      throw ProgramError(fmt::format("invalid IR: the body of kernel @{} must end in return{}", module_.name,
                                     entry.ops.empty() ? "" : ", found " + print_op(*entry.terminator())));
    block(entry, /*is_entry=*/true);
  }

 private:
  void check_module_header() const {
    const Block& entry = module_.entry();
    auto bad = [&](const std::string& what) {
      throw ProgramError(fmt::format("invalid IR: kernel @{}: {}", module_.name, what));
    };
    // 32 as the launch's check (runtime/validate.cpp): 1024 threads of 32 lanes.
    if (module_.num_warps <= 0 || module_.num_warps > 32 || (module_.num_warps & (module_.num_warps - 1)) != 0)
      bad(fmt::format("num_warps must be a power of two from 1 to 32, got {}", module_.num_warps));
    if (!module_.arg_facts.empty() && module_.arg_facts.size() != entry.args.size())
      bad(fmt::format("{} argument facts for {} arguments", module_.arg_facts.size(), entry.args.size()));
    for (std::size_t i = 0; i < module_.arg_facts.size(); ++i)
      if (module_.arg_facts[i].divisibility < 1)
        bad(fmt::format("argument {} has divisibility {} (must be >= 1)", i, module_.arg_facts[i].divisibility));
    for (const auto& a : entry.args) {
      if (a->owner != &entry || a->def) bad(fmt::format("argument {} does not belong to the kernel body", a->index));
      if (a->type.shared) bad(fmt::format("argument {} is a shared buffer ({}); local_alloc makes one", a->index, to_string(a->type)));
      if (auto p = type_problem(a->type, module_.num_warps); !p.empty()) bad(fmt::format("argument {}: {}", a->index, p));
    }
  }

  // Values that the block defines leave the visible set when the block ends (region scoping).
  void block(const Block& b, bool is_entry) {
    std::vector<const Value*> defined;
    if (!is_entry)
      for (const auto& a : b.args) {
        visible_.insert(a.get());
        defined.push_back(a.get());
      }
    for (std::size_t i = 0; i < b.ops.size(); ++i) {
      const Op& op = *b.ops[i];
      if (op.parent != &b) fail(op, "op's parent pointer is not the block that holds it");
      check_placement(op, is_entry, i + 1 == b.ops.size());
      this->op(op);
      for (const auto& r : op.results) {
        visible_.insert(r.get());
        defined.push_back(r.get());
      }
    }
    if (!is_entry)
      for (const Value* v : defined) visible_.erase(v);
  }

  static void check_placement(const Op& op, bool is_entry, bool is_last) {
    if (op.kind == OpKind::Return && (!is_entry || !is_last))
      fail(op, is_entry ? "return must be the last op of the kernel body" : "return inside a region (use yield)");
    if (op.kind == OpKind::Yield && (is_entry || !is_last))
      fail(op, is_entry ? "yield in the kernel body (use return)" : "yield must be the last op of its region");
  }

  void op(const Op& op) {
    const OpInfo& info = op.info();
    int n = static_cast<int>(op.operands.size());
    if (n < info.min_operands || (info.max_operands >= 0 && n > info.max_operands)) {
      std::string expected = info.max_operands < 0 ? fmt::format("at least {}", info.min_operands)
                             : info.min_operands == info.max_operands
                                 ? std::to_string(info.min_operands)
                                 : fmt::format("{} to {}", info.min_operands, info.max_operands);
      fail(op, fmt::format("'{}' expects {} operand(s), got {}", info.name, expected, n));
    }
    int results = static_cast<int>(op.results.size());
    if (info.num_results >= 0 && results != info.num_results)
      fail(op, fmt::format("'{}' must have {}, got {}", info.name, count_text(info.num_results, "result"), results));
    if (static_cast<int>(op.regions.size()) != info.num_regions)
      fail(op, fmt::format("'{}' must have {}, got {}", info.name, count_text(info.num_regions, "region"),
                           op.regions.size()));
    for (int i = 0; i < n; ++i) check_operand(op, i);
    if (!is_shared_memory_op(op.kind)) check_no_shared_buffer(op);
    for (const auto& r : op.results) {
      if (r->def != &op || r->index != (&r - op.results.data())) fail(op, "result's def/index pointers are stale");
      if (auto p = type_problem(r->type, module_.num_warps); !p.empty()) fail(op, fmt::format("result #{}: {}", r->index, p));
    }
    // The verifier, the printer and the passes recurse once per nesting level: IR deeper than the
    // parser and the tracer allow (built by hand) stops here, before a pass overflows the stack.
    if (!op.regions.empty() && depth_ >= kMaxRegionDepth)
      fail(op, fmt::format("regions nested more than {} deep", kMaxRegionDepth));
    ++depth_;
    for (std::size_t i = 0; i < op.regions.size(); ++i) region(op, i);
    --depth_;
    if (auto p = type_rule_problem(op); !p.empty()) fail(op, p);
  }

  void check_operand(const Op& op, int i) const {
    const Value* v = op.operands[i];
    if (!v) fail(op, fmt::format("operand #{} is null", i));
    if (!visible_.count(v))
      fail(op, fmt::format("operand #{} ({}) is not defined before this use or not visible in this region", i,
                           to_string(v->type)));
  }

  // A shared buffer lives only between the ops of ops.def's "Shared memory": no other op, loop or
  // branch carries one (the lowering keeps a buffer's address, not a register value).
  static void check_no_shared_buffer(const Op& op) {
    for (std::size_t i = 0; i < op.operands.size(); ++i)
      if (op.operands[i]->type.shared && !(op.kind == OpKind::Dot && i < 2))  // a dot reads a and b from views
        fail(op, fmt::format("operand #{} is a shared buffer ({}); only the shared-memory ops (local_load, "
                             "local_store, async_copy, smem_index, smem_trans) and a dot's a and b take one", i, to_string(op.operands[i]->type)));
    for (const auto& r : op.results)
      if (r->type.shared)
        fail(op, fmt::format("'{}' makes a shared buffer ({}); only local_alloc, smem_index and smem_trans do", op.name(),
                             to_string(r->type)));
  }

  void region(const Op& op, std::size_t i) {
    const Region& r = *op.regions[i];
    if (r.parent != &op || !r.block || r.block->parent != &r) fail(op, fmt::format("region #{}'s parent pointers are stale", i));
    const Block& b = *r.block;
    if (b.ops.empty() || b.terminator()->kind != OpKind::Yield)
      fail(op, fmt::format("region #{} of '{}' must end in yield", i, op.name()));
    for (const auto& a : b.args) {
      if (a->owner != &b || a->def) fail(op, fmt::format("region #{}: block argument {} has stale pointers", i, a->index));
      if (a->type.shared) fail(op, fmt::format("region #{}: block argument {} is a shared buffer; no region carries one", i, a->index));
      if (auto p = type_problem(a->type, module_.num_warps); !p.empty())
        fail(op, fmt::format("region #{}: block argument {}: {}", i, a->index, p));
    }
    block(b, /*is_entry=*/false);
  }

  const Module& module_;
  std::unordered_set<const Value*> visible_;
  int depth_ = 0;  // regions entered
};

}  // namespace

void verify(const Module& m) { Verifier(m).run(); }

}  // namespace tessera::ir
