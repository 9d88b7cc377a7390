// The driver: argument checks, the grid loop, and op-by-op execution of blocks, for and if.
#include "jit/interp/interpreter.hpp"

#include <fmt/format.h>

#include <iterator>
#include <optional>
#include <unordered_map>

#include "jit/analysis/axis_info.hpp"
#include "jit/interp/memory.hpp"
#include "jit/interp/ops.hpp"
#include "jit/interp/reduce.hpp"
#include "jit/interp/shared_memory.hpp"

namespace tessera::interp {
namespace {
using ir::OpKind;

const char* kind_name(ArgValue::Kind k) {
  switch (k) {
    case ArgValue::Kind::Pointer: return "a pointer";
    case ArgValue::Kind::Int: return "an integer";
    case ArgValue::Kind::Float: return "a floating-point value";
  }
  return "an unknown kind of value";
}

ArgValue::Kind expected_kind(const ir::Type& t) {
  if (t.is_ptr()) return ArgValue::Kind::Pointer;
  return ir::is_float(t.dtype) ? ArgValue::Kind::Float : ArgValue::Kind::Int;
}

// The kernel's parameters as scalar tiles, after checking the launch supplied what they need.
std::vector<Tile> bind_arguments(const ir::Module& m, std::span<const ArgValue> args) {
  const auto& params = m.entry().args;
  if (args.size() != params.size())
    throw LaunchError(fmt::format("kernel '{}' takes {} argument{} but {} {} given", m.name, params.size(),
                                  params.size() == 1 ? "" : "s", args.size(), args.size() == 1 ? "was" : "were"));
  std::vector<Tile> tiles;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ir::Type& t = params[i]->type;
    const std::string name = params[i]->name_hint.empty() ? fmt::format("#{}", i) : "'" + params[i]->name_hint + "'";
    if (t.is_tile())
      throw InternalError(fmt::format("interpreter: parameter {} of kernel '{}' is a tile ({})", name, m.name,
                                      ir::to_string(t)));
    if (args[i].kind != expected_kind(t))
      throw LaunchError(fmt::format("argument {} of kernel '{}' is {} ({}) but {} was given", name, m.name,
                                    kind_name(expected_kind(t)), ir::to_string(t), kind_name(args[i].kind)));
    Tile v(t);
    switch (args[i].kind) {
      case ArgValue::Kind::Pointer:
        v.data<std::uint64_t>()[0] = reinterpret_cast<std::uint64_t>(args[i].p);
        v.set_provenance(static_cast<int>(i));
        break;
      case ArgValue::Kind::Int: set_from_int(v, 0, args[i].i); break;
      case ArgValue::Kind::Float: set_from_double(v, 0, args[i].f); break;
    }
    tiles.push_back(std::move(v));
  }
  return tiles;
}

// A scalar integer tile as int64 (sign- or zero-extended per its dtype).
std::int64_t scalar_int(const ir::Op& op, const Tile& t) {
  if (t.numel() != 1 || !ir::is_int(t.dtype())) internal_error(op, "a loop bound is not an integer scalar");
  std::int64_t v = 0;
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_storage_v<T>) v = static_cast<std::int64_t>(t.data<T>()[0]);
  });
  return v;
}

// Executes the ops of one program; values live in env_ for the program's duration.
class ProgramRunner {
 public:
  ProgramRunner(const ir::Module& m, const MemoryMap& mem, RaceTracker& races)
      : module_(m), mem_(mem), races_(races) {}

  void run(const ProgramPoint& p, const std::vector<Tile>& args) {
    point_ = p;
    races_.set_program(p.id);
    env_.clear();
    views_.clear();
    shared_.reset();
    const auto& params = module_.entry().args;
    for (std::size_t i = 0; i < params.size(); ++i) env_[params[i].get()] = args[i];
    exec_block(module_.entry());
  }

 private:
  // Runs a block's ops in order; returns the values its yield passes on (none for return/no terminator).
  std::vector<Tile> exec_block(const ir::Block& b) {
    for (const auto& op : b.ops) {
      if (op->kind == OpKind::Yield) {
        std::vector<Tile> out;
        for (const auto* v : op->operands) out.push_back(get(*op, v));
        return out;
      }
      if (op->kind == OpKind::Return) {
        if (&b != &module_.entry()) internal_error(*op, "return inside a nested region");
        return {};
      }
      exec_op(*op);
    }
    return {};
  }

  const Tile& get(const ir::Op& op, const ir::Value* v) const {
    auto it = env_.find(v);
    if (it == env_.end()) internal_error(op, "an operand is used before it is defined");
    return it->second;
  }
  const Tile& operand(const ir::Op& op, std::size_t i) const { return get(op, op.operands.at(i)); }
  const Tile* optional_operand(const ir::Op& op, std::size_t i) const {
    return i < op.operands.size() ? &operand(op, i) : nullptr;
  }
  void set(const ir::Value* v, Tile t) { env_[v] = std::move(t); }
  const SmemView& view(const ir::Op& op, std::size_t i) const {
    auto it = views_.find(op.operands.at(i));
    if (it == views_.end()) internal_error(op, "a shared buffer is used before it is made");
    return it->second;
  }

  void check_arity(const ir::Op& op) const {
    const auto& info = op.info();
    const auto n = static_cast<int>(op.operands.size());
    if (n < info.min_operands || (info.max_operands >= 0 && n > info.max_operands))
      internal_error(op, fmt::format("{} operands", n));
    if (info.num_results >= 0 && static_cast<int>(op.results.size()) != info.num_results)
      internal_error(op, fmt::format("{} results", op.results.size()));
    if (static_cast<int>(op.regions.size()) != info.num_regions) internal_error(op, fmt::format("{} regions", op.regions.size()));
  }

  void exec_op(const ir::Op& op) {
    check_arity(op);
    exec_op_kind(op);
    if (op.kind != OpKind::For && op.kind != OpKind::If && op.kind != OpKind::DoWhile) inherit_provenance(op);
  }

  // A pointer result of an op over pointers of one argument derives from that argument (addptr,
  // broadcasts, shape ops, a select between two pointers into it). Results of for and if are the
  // values their bodies yield, which carry their own.
  void inherit_provenance(const ir::Op& op) {
    int from = -1;
    bool first = true;
    for (const ir::Value* v : op.operands) {
      if (!v->type.is_ptr()) continue;
      const int p = get(op, v).provenance();
      from = first || p == from ? p : -1;
      first = false;
    }
    if (first || from < 0) return;
    for (const auto& r : op.results)
      if (r->type.is_ptr()) env_[r.get()].set_provenance(from);
  }

  void exec_op_kind(const ir::Op& op) {
    switch (op.kind) {
      case OpKind::Constant: case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Arange:
        return set(op.result(), eval_source(op, point_));
      case OpKind::Splat: case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::ConvertLayout:
        return set(op.result(), eval_shape(op, operand(op, 0)));
      case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
      case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Shl: case OpKind::Shr:
      case OpKind::Min: case OpKind::Max:
        return set(op.result(), eval_binary(op, operand(op, 0), operand(op, 1)));
      case OpKind::CmpEq: case OpKind::CmpNe: case OpKind::CmpLt: case OpKind::CmpLe: case OpKind::CmpGt:
      case OpKind::CmpGe:
        return set(op.result(), eval_compare(op, operand(op, 0), operand(op, 1)));
      case OpKind::Neg: case OpKind::Not: case OpKind::Exp: case OpKind::Log: case OpKind::Sqrt: case OpKind::Abs:
        return set(op.result(), eval_unary(op, operand(op, 0)));
      case OpKind::Exp2: case OpKind::Log2: case OpKind::Rsqrt: case OpKind::Sin: case OpKind::Cos:
      case OpKind::Tanh: case OpKind::Sigmoid: case OpKind::Erf: case OpKind::Floor: case OpKind::Ceil:
      case OpKind::Pow: case OpKind::Fma: {
        std::vector<const Tile*> args;
        for (std::size_t i = 0; i < op.operands.size(); ++i) args.push_back(&operand(op, i));
        return set(op.result(), eval_math(op, args));
      }
      case OpKind::Reshape: case OpKind::Trans: case OpKind::Join: case OpKind::Split: case OpKind::Gather: {
        std::vector<const Tile*> args;
        for (std::size_t i = 0; i < op.operands.size(); ++i) args.push_back(&operand(op, i));
        std::vector<Tile> out = eval_reshape_family(op, args);
        for (std::size_t k = 0; k < out.size(); ++k) set(op.result(static_cast<int>(k)), std::move(out[k]));
        return;
      }
      case OpKind::Cast: return set(op.result(), eval_cast(op, operand(op, 0)));
      case OpKind::Bitcast: return set(op.result(), eval_bitcast(op, operand(op, 0)));
      case OpKind::Assume:
        check_assume(op, operand(op, 0), divisibility_groups(op));
        return set(op.result(), operand(op, 0));
      case OpKind::Dot: return exec_dot(op);
      case OpKind::Select: return set(op.result(), eval_select(op, operand(op, 0), operand(op, 1), operand(op, 2)));
      case OpKind::InlineAsm:
        throw ProgramError(fmt::format("inline_asm_elementwise at {}: the interpreter cannot run GPU assembly; launch "
                                       "this kernel on a GPU (Executor::Cuda or Hip)", op.loc.str()));
      case OpKind::AddPtr: return set(op.result(), eval_addptr(op, operand(op, 0), operand(op, 1)));
      case OpKind::Load:
        return set(op.result(), eval_load(op, mem_, operand(op, 0), optional_operand(op, 1), optional_operand(op, 2)));
      case OpKind::Store: return eval_store(op, mem_, operand(op, 0), operand(op, 1), optional_operand(op, 2));
      case OpKind::DebugBarrier: return;  // a program's ops run whole and in order here (ops.def)
      case OpKind::LocalAlloc: views_[op.result()] = shared_.alloc(op); return;
      case OpKind::SmemIndex: views_[op.result()] = shared_.index(op, view(op, 0), scalar_int(op, operand(op, 1))); return;
      case OpKind::SmemTrans: views_[op.result()] = SharedMemory::transpose(view(op, 0)); return;
      case OpKind::LocalStore: return shared_.store(op, view(op, 0), operand(op, 1));
      case OpKind::LocalLoad: return set(op.result(), shared_.load(op, view(op, 0)));
      case OpKind::AsyncCopy: {
        const ir::Type loaded = op.operands[0]->type.as_register_tile();
        return shared_.start_copy(op, view(op, 0), eval_load(op, mem_, loaded, operand(op, 1), optional_operand(op, 2), nullptr));
      }
      case OpKind::AsyncCommit: return shared_.commit();
      case OpKind::AsyncWait: return shared_.wait(op);
      case OpKind::FenceAsyncShared: return;  // ops run in order here (ops.def)
      case OpKind::Assert: return exec_assert(op, point_, operand(op, 0));
      case OpKind::Print: {
        std::vector<const Tile*> args;
        for (std::size_t i = 0; i < op.operands.size(); ++i) args.push_back(&operand(op, i));
        return exec_print(op, point_, args);
      }
      case OpKind::AtomicRmw:
        return set(op.result(), eval_atomic_rmw(op, mem_, operand(op, 0), operand(op, 1), optional_operand(op, 2)));
      case OpKind::AtomicCas:
        return set(op.result(), eval_atomic_cas(op, mem_, operand(op, 0), operand(op, 1), operand(op, 2)));
      case OpKind::For: return exec_for(op);
      case OpKind::If: return exec_if(op);
      case OpKind::DoWhile: return exec_do_while(op);
      case OpKind::Reduce:
      case OpKind::Scan: return exec_reduce(op);
      case OpKind::Yield: case OpKind::Return: internal_error(op, "a terminator in the middle of a block");
    }
    internal_error(op, "an op kind the interpreter does not know");
  }

  // The runs an assume's divisibility speaks of: its contiguity, else the contiguity axis analysis
  // proves of its operand (ops.def `assume`), computed once per launch and only when needed.
  std::vector<std::int64_t> divisibility_groups(const ir::Op& op) {
    if (const auto* c = op.int_list_attr("contiguity")) return *c;
    if (!op.int_list_attr("divisibility")) return {};
    if (!axis_) axis_.emplace(module_);
    return axis_->get(op.operands[0]).contiguity;
  }

  // a and b from registers or, where they are views, read from shared memory.
  void exec_dot(const ir::Op& op) {
    Tile from_shared[2];
    const Tile* ab[2];
    for (int i = 0; i < 2; ++i) {
      const ir::Type& t = op.operands[i]->type;
      if (!t.shared) {
        ab[i] = &operand(op, i);
        continue;
      }
      from_shared[i] = shared_.read(op, view(op, i), t.as_register_tile());
      ab[i] = &from_shared[i];
    }
    set(op.result(), eval_dot(op, *ab[0], *ab[1], operand(op, 2)));
  }

  void exec_for(const ir::Op& op) {
    const ir::Block& body = *op.regions[0]->block;
    const std::size_t carried = op.operands.size() - 3;
    if (body.args.size() != carried + 1 || op.results.size() != carried)
      internal_error(op, "block arguments and results do not match the carried values");
    const std::int64_t lb = scalar_int(op, operand(op, 0)), ub = scalar_int(op, operand(op, 1)),
                       step = scalar_int(op, operand(op, 2));
    std::vector<Tile> values;
    for (std::size_t i = 0; i < carried; ++i) values.push_back(operand(op, 3 + i));
    const ir::Type& iv_type = body.args[0]->type;
    Tile iv(iv_type);
    set_from_int(iv, 0, lb);
    // Whatever the bounds: a step of 0 either never ends or, on the GPU, silently runs nothing.
    if (step == 0)
      throw ProgramError(fmt::format("for loop at {} has step 0: it would never end (or, on a GPU, run no "
                                     "iteration); a loop step must not be 0", op.loc.str()));
    for (std::int64_t i = lb; step > 0 ? i < ub : i > ub;) {
      set(body.args[0].get(), iv);
      for (std::size_t k = 0; k < carried; ++k) set(body.args[k + 1].get(), std::move(values[k]));
      values = exec_block(body);
      if (values.size() != carried) internal_error(op, fmt::format("the body yields {} values, {} expected", values.size(), carried));
      // The next value and the exit test are computed without wrapping (in 64 bits, as the
      // lowering does): a counter that would pass the end of its type has passed `ub`, so the loop
      // ends instead of wrapping around and running forever.
      if (__builtin_add_overflow(i, step, &i)) break;
      set_from_int(iv, 0, i);
    }
    for (std::size_t k = 0; k < carried; ++k) set(op.result(static_cast<int>(k)), std::move(values[k]));
  }

  void exec_do_while(const ir::Op& op) {
    const ir::Block& body = *op.regions[0]->block;
    const std::size_t carried = op.operands.size();
    if (body.args.size() != carried || op.results.size() != carried)
      internal_error(op, "block arguments and results do not match the carried values");
    std::vector<Tile> values;
    for (std::size_t i = 0; i < carried; ++i) values.push_back(operand(op, i));
    for (;;) {
      for (std::size_t k = 0; k < carried; ++k) set(body.args[k].get(), std::move(values[k]));
      std::vector<Tile> out = exec_block(body);
      if (out.size() != carried + 1 || out[0].dtype() != DType::I1 || out[0].numel() != 1)
        internal_error(op, fmt::format("the body yields {} values, a condition and {} expected", out.size(), carried));
      const bool again = out[0].data<std::uint8_t>()[0] != 0;
      values.assign(std::make_move_iterator(out.begin() + 1), std::make_move_iterator(out.end()));
      if (!again) break;
    }
    for (std::size_t k = 0; k < carried; ++k) set(op.result(static_cast<int>(k)), std::move(values[k]));
  }

  void exec_reduce(const ir::Op& op) {
    const ir::Block& body = *op.regions[0]->block;
    std::vector<const Tile*> inputs;
    for (std::size_t i = 0; i < op.operands.size(); ++i) inputs.push_back(&operand(op, i));
    RegionRunner run_region = [&](const std::vector<Tile>& args) {
      for (std::size_t i = 0; i < args.size(); ++i) set(body.args[i].get(), args[i]);
      return exec_block(body);
    };
    std::vector<Tile> out = eval_reduce(op, inputs, run_region);
    for (std::size_t k = 0; k < out.size(); ++k) set(op.result(static_cast<int>(k)), std::move(out[k]));
  }

  void exec_if(const ir::Op& op) {
    const Tile& cond = operand(op, 0);
    if (cond.dtype() != DType::I1 || cond.numel() != 1 || !cond.shape().empty())
      internal_error(op, "the condition is not an i1 scalar");
    const bool taken = cond.data<std::uint8_t>()[0] != 0;
    std::vector<Tile> values = exec_block(*op.regions[taken ? 0 : 1]->block);
    if (values.size() != op.results.size())
      internal_error(op, fmt::format("the {} branch yields {} values, {} expected", taken ? "then" : "else",
                                     values.size(), op.results.size()));
    for (std::size_t k = 0; k < values.size(); ++k) set(op.result(static_cast<int>(k)), std::move(values[k]));
  }

  const ir::Module& module_;
  const MemoryMap& mem_;
  RaceTracker& races_;
  ProgramPoint point_;
  std::optional<analysis::AxisInfoAnalysis> axis_;
  std::unordered_map<const ir::Value*, Tile> env_;  // looked up, never iterated
  std::unordered_map<const ir::Value*, SmemView> views_;  // shared buffers and their stages
  SharedMemory shared_;
};

}  // namespace

void run(const ir::Module& m, Dim3 grid, std::span<const ArgValue> args, std::span<const HostBuffer> extra_buffers) {
  // Tiles are at most ir::kMaxTileElements elements, but a launch's shadow memory and a program's
  // values can still exhaust the host: that is a tessera::Error, never an escaping std::bad_alloc.
  try {
    const std::vector<Tile> arg_tiles = bind_arguments(m, args);
    RaceTracker races(grid);
    const MemoryMap mem(m, args, extra_buffers, &races);
    ProgramRunner runner(m, mem, races);
    ProgramPoint p;
    p.grid = grid;
    for (std::uint32_t z = 0; z < grid[2]; ++z)
      for (std::uint32_t y = 0; y < grid[1]; ++y)
        for (std::uint32_t x = 0; x < grid[0]; ++x) {  // x fastest, as block ids are numbered on the GPU
          p.id = {x, y, z};
          runner.run(p, arg_tiles);
        }
  } catch (const std::bad_alloc&) {
    throw Error(fmt::format("the interpreter ran out of host memory running kernel '{}'", m.name));
  }
}

}  // namespace tessera::interp
