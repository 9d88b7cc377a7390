// Inline assembly on tiles, as Triton's tl.inline_asm_elementwise:
//
//   auto y = ts::inline_asm_elementwise<float>("mul.f32 $0, $1, $2;", "=f,f,f", std::tuple{a, b});
//   auto [lo, hi] = ts::inline_asm_elementwise<std::tuple<std::int32_t, std::int32_t>>(
//       "mov.b64 {$0, $1}, $2;", "=r,=r,l", std::tuple{x64});
//   // four u8 per instance, packed into one 32-bit register each way:
//   auto s = ts::inline_asm_elementwise<std::uint8_t>("prmt.b32 $0, $1, 0, 0x0123;", "=r,r", std::tuple{bytes},
//                                                     /*is_pure=*/true, /*pack=*/4);
//
// The assembly (PTX on NVIDIA, AMDGCN on AMD; $0.. name the registers, results first, as LLVM's
// inline asm) runs once per `pack` elements of each thread; the arguments broadcast to one shape,
// which every result has. An element narrower than 32 bits travels packed into 32-bit registers
// (pack * bits / 32 of them, or one narrower register when they need less); a 32-bit or wider one
// in a register of its own, `pack` per value. `constraints` names each register in LLVM's syntax
// ("=r" a 32-bit result, "f" an f32 argument, "l" 64 bits, "h" 16 bits). is_pure = false: the
// assembly has effects (it is then never merged, moved or removed). Only code for a GPU runs it:
// the interpreter and the host targets refuse such a kernel with a ProgramError naming the line.
#pragma once
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tessera/tile.hpp"

namespace tessera {

namespace detail {
template <class R>
struct AsmResults {
  static_assert(Numeric<R>, "inline_asm_elementwise: the result type must be a number type (int8_t ... double, "
                            "half, bfloat16, fp8) or a std::tuple of them");
  static std::vector<DType> dtypes() { return {dtype_of<R>}; }
  static Tile<R> wrap(const std::vector<ir::Value*>& v, const Loc& loc) { return Tile<R>(v.at(0), loc); }
};
template <class... Rs>
struct AsmResults<std::tuple<Rs...>> {
  static_assert(sizeof...(Rs) > 0 && (Numeric<Rs> && ...),
                "inline_asm_elementwise: a tuple of result types must hold number types only");
  static std::vector<DType> dtypes() { return {dtype_of<Rs>...}; }
  static std::tuple<Tile<Rs>...> wrap(const std::vector<ir::Value*>& v, const Loc& loc) {
    return wrap_each(v, loc, std::index_sequence_for<Rs...>{});
  }
  template <std::size_t... I>
  static std::tuple<Tile<Rs>...> wrap_each(const std::vector<ir::Value*>& v, const Loc& loc, std::index_sequence<I...>) {
    return std::tuple<Tile<Rs>...>(Tile<Rs>(v.at(I), loc)...);
  }
};
}  // namespace detail

// R: the result's element type, or std::tuple<R1, R2, ...> for several results (then a tuple of
// tiles is returned). args: a std::tuple of tiles.
template <class R, class... Args>
auto inline_asm_elementwise(const std::string& assembly, const std::string& constraints,
                            const std::tuple<Tile<Args>...>& args, bool is_pure = true, int pack = 1,
                            const Loc& loc = Loc::current()) {
  static_assert(sizeof...(Args) > 0, "inline_asm_elementwise needs at least one argument tile");
  std::vector<ir::Value*> values;
  std::apply([&](const auto&... t) { (values.push_back(t.ir_value(loc)), ...); }, args);
  const auto results =
      detail::emit_inline_asm(assembly, constraints, is_pure, pack, std::move(values), detail::AsmResults<R>::dtypes(), loc);
  return detail::AsmResults<R>::wrap(results, loc);
}

// One argument tile.
template <class R, class A>
auto inline_asm_elementwise(const std::string& assembly, const std::string& constraints, const Tile<A>& arg,
                            bool is_pure = true, int pack = 1, const Loc& loc = Loc::current()) {
  return inline_asm_elementwise<R>(assembly, constraints, std::tuple<Tile<A>>(arg), is_pure, pack, loc);
}

}  // namespace tessera
