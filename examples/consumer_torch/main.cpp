// Calls an installed tessera's layer norm op (tessera/torch_ops.hpp) on CPU tensors and checks it
// against PyTorch's own. Exits non-zero on a mismatch.
#include <tessera/torch_ops.hpp>

#include <cstdio>

int main() {
  const at::Tensor x = at::randn({4, 64}), w = at::randn({64}), b = at::randn({64});
  const at::Tensor y = tessera::torch::layer_norm(x, w, b);
  const double error = (y - at::layer_norm(x, {64}, w, b)).abs().max().item<double>();
  std::printf("tessera::torch::layer_norm from an installed tessera: max |error| %.3g\n", error);
  return error < 1e-4 ? 0 : 1;
}
