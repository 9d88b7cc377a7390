// Kernel definition and launch:
//
//   auto add = ts::kernel("add", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) { ... });
//   add[{.grid = {ts::cdiv(n, 1024)}, .meta = {{"BLOCK", 1024}}}](x_dev, out_dev, n);
//
// The parameter types of the kernel function are its signature: each is a Tile (ts::Ptr<T> for a
// pointer argument, a scalar ts::Tile<T> such as ts::Int or ts::Float for a value). A launch checks
// at C++ compile time that the arguments match that signature.
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/args.hpp"
#include "tessera/detail/launch_args.hpp"
#include "tessera/launch.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tile.hpp"

namespace tessera {

namespace detail {

template <class P>
inline constexpr bool is_kernel_param = is_tile<P>;

template <class P>
ArgSpec arg_spec() {
  ArgSpec s;
  s.dtype = dtype_of<typename P::element_type>;
  if constexpr (PointerElement<typename P::element_type>) s.pointee = ElementTraits<typename P::element_type>::pointee;
  return s;
}

// The parameter list of a kernel function: a lambda's call operator or a plain function.
template <class F>
struct Signature : Signature<decltype(&F::operator())> {};
template <class R, class... A>
struct Signature<R (*)(A...)> {
  using params = std::tuple<std::remove_cvref_t<A>...>;
};
template <class R, class... A>
struct Signature<R(A...)> : Signature<R (*)(A...)> {};
template <class C, class R, class... A>
struct Signature<R (C::*)(A...) const> : Signature<R (*)(A...)> {};
template <class C, class R, class... A>
struct Signature<R (C::*)(A...)> : Signature<R (*)(A...)> {};

template <class F>
concept NonGenericCallable = requires { &F::operator(); } || std::is_function_v<std::remove_pointer_t<F>>;

// A kernel function holds no state: a captureless lambda (an empty class) or a plain function.
template <class F>
inline constexpr bool stateless_kernel_function = std::is_empty_v<F> || std::is_function_v<F> ||
                                                   (std::is_pointer_v<F> && std::is_function_v<std::remove_pointer_t<F>>);

}  // namespace detail

template <class... Params>
class Kernel {
 public:
  explicit Kernel(std::shared_ptr<detail::KernelDef> def) : def_(std::move(def)) {}

  detail::KernelDef& def() { return *def_; }
  const detail::KernelDef& def() const { return *def_; }
  const std::string& name() const { return def_->name; }

  // Excludes argument `index` from value specialization (divisibility, == 1), as Triton's
  // do_not_specialize: for an argument whose value changes at every call.
  Kernel& do_not_specialize(int index) {
    if (index < 0 || index >= static_cast<int>(sizeof...(Params)))
      throw LaunchError("do_not_specialize: kernel '" + def_->name + "' has no argument " + std::to_string(index));
    def_->args[static_cast<std::size_t>(index)].do_not_specialize = true;
    return *this;
  }

  // The ArgValues of a call with these C++ arguments, checked against the parameters at compile time.
  // ts::tensor_args<R>(t) stands for 1 + 2R arguments (the tensor, its sizes, its strides).
  template <class... Args>
  static std::array<ArgValue, sizeof...(Params)> arg_values(Args&&... args) {
    auto flat = std::tuple_cat(detail::launch_parts(args)...);
    static_assert(std::tuple_size_v<decltype(flat)> == sizeof...(Params),
                  "tessera: kernel launched with the wrong number of arguments (ts::tensor_args<R>(t) counts as "
                  "1 + 2R: the tensor, its sizes and its strides)");
    return convert(std::index_sequence_for<Params...>{}, flat);
  }

  // A launch with these options; call the result with the kernel's arguments.
  class Launch {
   public:
    // Options given as a temporary (`add[{...}](...)`) are moved in; options held by the caller
    // (`add[opts](...)`) are referred to, not copied: a launch of a cached kernel allocates nothing.
    Launch(detail::KernelDef& def, LaunchOptions&& opts) : def_(def), owned_(std::move(opts)), opts_(&*owned_) {}
    Launch(detail::KernelDef& def, const LaunchOptions& opts) : def_(def), opts_(&opts) {}
    Launch(const Launch&) = delete;
    Launch& operator=(const Launch&) = delete;
    template <class... Args>
    void operator()(Args&&... args) const {
      const auto values = arg_values(std::forward<Args>(args)...);
      detail::launch(def_, *opts_, std::span<const ArgValue>(values.data(), values.size()));
    }

   private:
    detail::KernelDef& def_;
    std::optional<LaunchOptions> owned_;
    const LaunchOptions* opts_;
  };
  Launch operator[](LaunchOptions&& opts) const { return Launch(*def_, std::move(opts)); }
  Launch operator[](const LaunchOptions& opts) const { return Launch(*def_, opts); }

  // Compiles what `(*this)[opts](args...)` would launch, without launching it (the arguments
  // only decide the specialization: pointers need not point anywhere yet, only be aligned alike).
  template <class... Args>
  ResourceReport warmup(const LaunchOptions& opts, Args&&... args) const {
    const auto values = arg_values(std::forward<Args>(args)...);
    return detail::warmup(*def_, opts, std::span<const ArgValue>(values.data(), values.size()));
  }
  // The same for a named target, with no GPU needed ("sm_90a", "gfx942"): fills the disk cache.
  template <class... Args>
  detail::Artifact warmup(const std::string& target, const LaunchOptions& opts, Args&&... args) const {
    const auto values = arg_values(std::forward<Args>(args)...);
    return detail::compile_only(*def_, opts, std::span<const ArgValue>(values.data(), values.size()), target);
  }
  // Type-erased launch for generated callers; the runtime checks the count and kinds.
  void launch(const LaunchOptions& opts, const std::vector<ArgValue>& args) const {
    detail::launch(*def_, opts, std::span<const ArgValue>(args.data(), args.size()));
  }

 private:
  template <std::size_t... I, class Flat>
  static std::array<ArgValue, sizeof...(Params)> convert(std::index_sequence<I...>, Flat& flat) {
    return {detail::to_arg_value<I, Params>(std::get<I>(flat))...};
  }
  std::shared_ptr<detail::KernelDef> def_;
};

namespace detail {
template <class F, class Tuple>
struct KernelFor;
template <class F, class... Params>
struct KernelFor<F, std::tuple<Params...>> {
  static_assert((is_kernel_param<Params> && ...),
                "tessera::kernel: every parameter of the kernel function must be a tile type: "
                "ts::Ptr<T> for a pointer argument, or a scalar ts::Tile<T> (ts::Int, ts::Int64, ts::Float, "
                "ts::Mask, ...) for a value argument");
  using type = Kernel<Params...>;

  static type make(std::string name, F f, const std::source_location& where) {
    auto def = std::make_shared<KernelDef>();
    def->name = std::move(name);
    def->where = where;
    def->args = {arg_spec<Params>()...};
    def->body = [f = std::move(f)](TraceState& st) mutable {
      call(f, st, std::index_sequence_for<Params...>{});
    };
    return type(std::move(def));
  }

  template <std::size_t... I>
  static void call(F& f, TraceState& st, std::index_sequence<I...>) {
    const Loc loc = Loc::current();
    f(Params(kernel_arg(st, static_cast<int>(I)), loc)...);
  }
};
}  // namespace detail

// Defines a kernel from a lambda (or function) taking tiles; see the file comment.
template <class F>
auto kernel(std::string name, F f, const std::source_location& where = std::source_location::current()) {
  static_assert(detail::NonGenericCallable<F>,
                "tessera::kernel: the kernel function must have one non-template call operator "
                "(no `auto` parameters): its parameter types are the kernel's signature");
  // Captured state would be read once per specialization, when the body is traced, and never
  // again: a later launch would silently compute with the old value. So a kernel function captures
  // nothing, and everything it depends on reaches it as an argument or a meta-parameter, both of
  // which are part of the specialization (README, "Tracing").
  static_assert(detail::stateless_kernel_function<F>,
                "tessera::kernel: the kernel function must not capture anything (write `[]`, not `[&]`, `[=]` "
                "or `[x]`): its body is traced once per specialization, so a captured variable that changes "
                "later would be silently ignored by later launches; pass the value as a kernel argument "
                "(ts::Int, ts::Float, ...) or as a meta-parameter (ts::meta(\"NAME\") with .meta = "
                "{{\"NAME\", value}} in the launch), which are part of the specialization");
  using Params = typename detail::Signature<std::remove_pointer_t<F>>::params;
  return detail::KernelFor<F, Params>::make(std::move(name), std::move(f), where);
}

}  // namespace tessera
