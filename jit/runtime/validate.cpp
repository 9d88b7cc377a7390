#include "jit/runtime/validate.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <utility>

#include "jit/ir/types.hpp"
#include "tessera/runtime.hpp"

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
    case DType::U16: return {0, UINT16_MAX};
    case DType::U32: return {0, UINT32_MAX};
    default: return {INT64_MIN, INT64_MAX};
  }
}
const char* place_name(MemoryPlace p) {
  switch (p) {
    case MemoryPlace::Host: return "host memory";
    case MemoryPlace::Cuda: return "CUDA device memory";
    case MemoryPlace::Hip: return "HIP device memory";
    case MemoryPlace::Unknown: break;
  }
  return "memory of unknown place";
}

bool reaches(Executor ex, MemoryPlace p) {
  switch (p) {
    case MemoryPlace::Host: return ex == Executor::Interpreter || ex == Executor::Host || ex == Executor::Host64;
    case MemoryPlace::Cuda: return ex == Executor::Cuda;
    case MemoryPlace::Hip: return ex == Executor::Hip;
    case MemoryPlace::Unknown: break;
  }
  return true;
}

const char* executor_name(Executor ex) {
  switch (ex) {
    case Executor::Auto: return "Auto";
    case Executor::Cuda: return "Executor::Cuda";
    case Executor::Hip: return "Executor::Hip";
    case Executor::Interpreter: return "Executor::Interpreter";
    case Executor::Host: return "Executor::Host";
    case Executor::Host64: return "Executor::Host64";
  }
  return "an unknown executor";
}
}  // namespace

Executor launch_executor(const detail::KernelDef& def, Executor requested, std::span<const ArgValue> args) {
  MemoryPlace place = MemoryPlace::Unknown;
  std::size_t first = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const MemoryPlace p = args[i].kind == ArgValue::Kind::Pointer ? args[i].place : MemoryPlace::Unknown;
    if (p == MemoryPlace::Unknown) continue;
    if (place == MemoryPlace::Unknown) {
      place = p;
      first = i;
    } else if (p != place) {
      throw LaunchError(fmt::format("kernel '{}': argument {} is in {} and argument {} in {}: the tensors of one launch "
                                    "must all be in one place", def.name, first, place_name(place), i, place_name(p)));
    }
  }
  if (requested != Executor::Auto) {
    if (!reaches(requested, place))
      throw LaunchError(fmt::format("kernel '{}': argument {} is in {}, which {} cannot reach; launch with the executor "
                                    "of that memory (or Executor::Auto, which follows the tensors)",
                                    def.name, first, place_name(place), executor_name(requested)));
    return requested;
  }
  const Executor fallback = default_executor().executor;
  switch (place) {
    case MemoryPlace::Unknown: return fallback;
    case MemoryPlace::Host: return reaches(fallback, place) ? fallback : Executor::Interpreter;
    case MemoryPlace::Cuda: return Executor::Cuda;
    case MemoryPlace::Hip: return Executor::Hip;
  }
  return fallback;
}

int argument_device(const detail::KernelDef& def, int requested, std::span<const ArgValue> args) {
  int device = -1;
  std::size_t first = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgValue& a = args[i];
    if (a.kind != ArgValue::Kind::Pointer || a.device < 0) continue;
    if (device < 0) {
      device = a.device;
      first = i;
    } else if (a.device != device) {
      throw LaunchError(fmt::format("kernel '{}': argument {} is on device {} and argument {} on device {}: the tensors "
                                    "of one launch must be on one device", def.name, first, device, i, a.device));
    }
  }
  if (requested >= 0 && device >= 0 && requested != device)
    throw LaunchError(fmt::format("kernel '{}': LaunchOptions::device is {}, but argument {} is on device {}", def.name,
                                  requested, first, device));
  return requested >= 0 ? requested : device;
}

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
