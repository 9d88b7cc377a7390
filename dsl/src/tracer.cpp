// Running a kernel body under a TraceState: the thread-local current trace, argument values,
// meta-parameters, and the errors that name the user's source line.
#include "dsl/src/tracer.hpp"

#include <fmt/format.h>

#include <atomic>

#include "dsl/src/trace_state.hpp"
#include "tessera/error.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace detail {
namespace {

thread_local TraceState* t_current = nullptr;
std::atomic<std::uint64_t> g_next_trace_id{1};

// Makes `st` the current trace for its lifetime; restores the previous one however the body ends.
class CurrentTrace {
 public:
  explicit CurrentTrace(TraceState* st) : previous_(t_current) { t_current = st; }
  ~CurrentTrace() { t_current = previous_; }
  CurrentTrace(const CurrentTrace&) = delete;
  CurrentTrace& operator=(const CurrentTrace&) = delete;

 private:
  TraceState* previous_;
};

ir::Type arg_type(const ArgSpec& spec) {
  return spec.dtype == DType::Ptr ? ir::Type::pointer(spec.pointee) : ir::Type::scalar(spec.dtype);
}

}  // namespace

ir::SourceLoc to_ir_loc(const Loc& loc) {
  return ir::SourceLoc{loc.file_name(), static_cast<int>(loc.line()), static_cast<int>(loc.column())};
}

void program_error(const ir::SourceLoc& loc, const std::string& what) {
  throw ProgramError(fmt::format("{} at {}", what, loc.str()));
}
void program_error(const Loc& loc, const std::string& what) { program_error(to_ir_loc(loc), what); }
void user_error(const Loc& loc, const std::string& what) { program_error(loc, what); }

TraceState& current_state(const Loc& loc) {
  if (t_current == nullptr)
    program_error(loc, "tessera ops can only be used inside a kernel being traced (a ts::kernel body)");
  return *t_current;
}

ir::Builder& builder_at(const Loc& loc) {
  TraceState& st = current_state(loc);
  st.builder.set_loc(to_ir_loc(loc));
  return st.builder;
}

ir::Value* kernel_arg(TraceState& st, int index) {
  auto& args = st.module->entry().args;
  if (index < 0 || index >= static_cast<int>(args.size()))
    throw InternalError(fmt::format("kernel '{}': no argument {}", st.module->name, index));
  ir::Value* arg = args[static_cast<std::size_t>(index)].get();
  // An integer this launch passes as 1 (a unit stride, as Triton specializes them) is traced as the
  // constant 1, so that `offs * stride` folds to `offs` and axis info sees contiguous addresses
  // (vector loads); the specialization key holds the fact, so another value compiles anew.
  const auto& facts = st.module->arg_facts;
  if (static_cast<std::size_t>(index) < facts.size() && facts[static_cast<std::size_t>(index)].equal_to_one &&
      !arg->type.is_tile() && ir::is_int(arg->type.dtype))
    return st.builder.int_constant(arg->type.dtype, 1);
  return arg;
}

}  // namespace detail

std::int64_t meta(std::string_view name, const Loc& loc) {
  const detail::TraceState& st = detail::current_state(loc);
  std::string given;
  for (const auto& [key, value] : st.meta) {
    if (key == name) return value;
    given += (given.empty() ? "" : ", ") + key;
  }
  detail::program_error(loc, fmt::format("unknown meta-parameter '{}' (the launch gives: {})", name,
                                         given.empty() ? "none" : given));
}

namespace detail {
namespace {

// A meta-parameter given twice ({{"BLOCK", 1}, {"BLOCK", 2}}) has no one value: ts::meta would
// silently read the first. It is the launch's mistake, so a LaunchError; it names the kernel's
// definition, since the launch options do not record where they were written.
void check_meta_names(const KernelDef& def, const MetaValues& meta) {
  for (std::size_t i = 0; i < meta.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (meta[i].first == meta[j].first)
        throw LaunchError(fmt::format("launch of kernel '{}' (defined at {}): the meta-parameter '{}' is given twice "
                                      "({} and {}); give each name once", def.name, to_ir_loc(def.where).str(),
                                      meta[i].first, meta[j].second, meta[i].second));
}

}  // namespace
}  // namespace detail

std::unique_ptr<ir::Module> trace_kernel(const detail::KernelDef& def, const MetaValues& meta,
                                         const std::vector<ir::ArgFacts>& facts, int num_warps) {
  if (!def.body) throw InternalError(fmt::format("kernel '{}' has no body to trace", def.name));
  detail::check_meta_names(def, meta);
  auto module = std::make_unique<ir::Module>();
  module->name = def.name;
  module->num_warps = num_warps;
  module->arg_facts = facts;
  module->arg_facts.resize(def.args.size());  // absent facts: nothing known
  for (std::size_t i = 0; i < def.args.size(); ++i)
    module->entry().add_arg(detail::arg_type(def.args[i]), fmt::format("arg{}", i));

  detail::TraceState st;
  st.id = detail::g_next_trace_id.fetch_add(1);
  st.module = module.get();
  st.builder.set_block(&module->entry());
  st.meta = meta;
  const ir::SourceLoc where = detail::to_ir_loc(def.where);
  detail::open_scope(st, detail::Scope::Kind::Kernel, &module->entry(), where);

  detail::CurrentTrace current(&st);
  def.body(st);
  st.builder.set_block(&module->entry());
  st.builder.set_loc(where);
  st.builder.create(ir::OpKind::Return, {}, {});
  return module;
}

}  // namespace tessera
