// The name of a tessera kernel instantiated for element type T: the base name and T's short name
// (tessera_torch_softmax_f16), so that dumps, caches and profiles tell the instantiations apart.
#pragma once
#include <tessera/tessera.hpp>

#include <string>
#include <string_view>
#include <type_traits>

namespace tessera::torch_ops {

template <class T>
std::string kernel_name(std::string_view base) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, ::tessera::half> || std::is_same_v<T, ::tessera::bfloat16>,
                "tessera::torch kernels are instantiated for float, half and bfloat16");
  const char* suffix = std::is_same_v<T, float> ? "_f32" : std::is_same_v<T, ::tessera::half> ? "_f16" : "_bf16";
  return "tessera_torch_" + std::string(base) + suffix;
}

}  // namespace tessera::torch_ops
