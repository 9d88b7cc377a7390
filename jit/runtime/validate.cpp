#include "jit/runtime/validate.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <utility>

#include "jit/ir/types.hpp"

namespace tessera::runtime {
namespace {
std::string spec_name(const detail::ArgSpec& s) {
  if (s.dtype == DType::Ptr) return fmt::format("ptr<{}>", ir::dtype_name(s.pointee));
  return std::string(ir::dtype_name(s.dtype));
}
// What the launch passed, with its value: a wrong-kind error is easier to trace back to the call
// site when it shows the number (or address) that arrived.
std::string describe_value(const ArgValue& a) {
  switch (a.kind) {
    case ArgValue::Kind::Pointer: return fmt::format("a pointer ({})", a.p);
    case ArgValue::Kind::Int: return fmt::format("an integer ({})", a.i);
    case ArgValue::Kind::Float: return fmt::format("a floating-point value ({})", a.f);
  }
  return "an unknown kind of value";
}

// The range of an integer parameter type. The typed launch path checks this at conversion
// (std::in_range); the type-erased path must check it here, else the value would be silently
// truncated to the parameter's width by the interpreter and the driver parameter buffer.
std::pair<std::int64_t, std::int64_t> int_range(DType d) {
  switch (d) {
    case DType::I1: return {0, 1};
    case DType::I8: return {INT8_MIN, INT8_MAX};
    case DType::I16: return {INT16_MIN, INT16_MAX};
    case DType::I32: return {INT32_MIN, INT32_MAX};
    case DType::U8: return {0, UINT8_MAX};
    case DType::U32: return {0, UINT32_MAX};
    default: return {INT64_MIN, INT64_MAX};
  }
}
}  // namespace

void validate_arguments(const detail::KernelDef& def, std::span<const ArgValue> args) {
  if (args.size() != def.args.size())
    throw LaunchError(fmt::format("kernel '{}' takes {} arguments, but the launch passed {}", def.name,
                                  def.args.size(), args.size()));
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& spec = def.args[i];
    const auto& a = args[i];
    ArgValue::Kind want = spec.dtype == DType::Ptr ? ArgValue::Kind::Pointer
                          : ir::is_float(spec.dtype) ? ArgValue::Kind::Float : ArgValue::Kind::Int;
    // An integer may feed a float parameter (it converts exactly as C++ would); nothing else mixes.
    bool ok = a.kind == want || (want == ArgValue::Kind::Float && a.kind == ArgValue::Kind::Int);
    if (!ok)
      throw LaunchError(fmt::format("argument {} of kernel '{}' is {}, but the launch passed {}", i, def.name,
                                    spec_name(spec), describe_value(a)));
    if (want == ArgValue::Kind::Int) {
      const auto [lo, hi] = int_range(spec.dtype);
      if (a.i < lo || a.i > hi)
        throw LaunchError(fmt::format("argument {} of kernel '{}' is {}, but the launch passed {}, which does not fit "
                                      "in it", i, def.name, spec_name(spec), a.i));
    }
    if (want != ArgValue::Kind::Pointer) continue;
    // DType::Ptr marks an untyped pointer (void*): the caller vouches for its element type.
    if (a.dtype != DType::Ptr && a.dtype != spec.pointee)
      throw LaunchError(fmt::format("argument {} of kernel '{}' is {}, but the launch passed a pointer to {}", i,
                                    def.name, spec_name(spec), ir::dtype_name(a.dtype)));
    if (a.p == nullptr)
      throw LaunchError(fmt::format("argument {} of kernel '{}' ({}) is a null pointer", i, def.name, spec_name(spec)));
    auto addr = reinterpret_cast<std::uintptr_t>(a.p);
    if (addr % static_cast<std::uintptr_t>(ir::dtype_bytes(spec.pointee)) != 0)
      throw LaunchError(fmt::format("argument {} of kernel '{}' ({}) is misaligned: address {:#x} is not a multiple of "
                                    "the element size {}", i, def.name, spec_name(spec), addr, ir::dtype_bytes(spec.pointee)));
  }
}

void validate_num_warps(const detail::KernelDef& def, int num_warps) {
  if (num_warps < 1 || num_warps > 32 || (num_warps & (num_warps - 1)) != 0)
    throw LaunchError(fmt::format("num_warps of kernel '{}' must be a power of two from 1 to 32, got {}", def.name, num_warps));
}

std::array<std::int64_t, 3> resolve_grid(const detail::KernelDef& def, const LaunchOptions& opts,
                                         const std::array<std::int64_t, 3>& limits) {
  auto g = opts.grid.resolve(opts.meta);
  static const char* axis[] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d) {
    if (g[d] < 1)
      throw LaunchError(fmt::format("grid of kernel '{}' has {} programs along {}: each dimension must be at least 1",
                                    def.name, g[d], axis[d]));
    if (g[d] > limits[d])
      throw LaunchError(fmt::format("grid of kernel '{}' has {} programs along {}, beyond the device's limit of {}",
                                    def.name, g[d], axis[d], limits[d]));
  }
  return g;
}

}  // namespace tessera::runtime
