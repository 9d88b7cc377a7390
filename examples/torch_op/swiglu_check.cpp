// Calls the user-written op myops::swiglu (swiglu_op.cpp, linked in) by name through PyTorch's
// dispatcher, as C++ training code would, and checks its values and gradients against PyTorch's
// silu(a) * b: on CPU tensors (tessera's interpreter) and, where there is a GPU, CUDA tensors.
// Exits non-zero on a mismatch.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/cuda.h>

#include <cstdio>
#include <exception>

namespace {

at::Tensor swiglu(const at::Tensor& a, const at::Tensor& b) {
  static auto h = c10::Dispatcher::singleton()
                      .findSchemaOrThrow("myops::swiglu", "")
                      .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return h.call(a, b);
}

double max_error(const at::Tensor& x, const at::Tensor& y) { return (x - y).abs().max().item<double>(); }

bool check_on(const at::Device& device) {
  at::manual_seed(0);
  const auto opts = at::TensorOptions().device(device);
  const at::Tensor a = at::randn({3, 1000}, opts).set_requires_grad(true);
  const at::Tensor b = at::randn({3, 1000}, opts).set_requires_grad(true);
  const at::Tensor ra = a.detach().clone().set_requires_grad(true), rb = b.detach().clone().set_requires_grad(true);
  const at::Tensor y = swiglu(a, b), ry = at::silu(ra) * rb;
  const at::Tensor dy = at::randn_like(y);
  const auto g = torch::autograd::grad({y}, {a, b}, {dy});
  const auto rg = torch::autograd::grad({ry}, {ra, rb}, {dy});
  const double e = std::max({max_error(y, ry), max_error(g[0], rg[0]), max_error(g[1], rg[1])});
  std::printf("myops::swiglu on %s: max |error| over values and both gradients %.3g\n", device.str().c_str(), e);
  return e < 1e-5;
}

}  // namespace

int main() {
  try {
    bool ok = check_on(at::kCPU);
    if (torch::cuda::is_available()) ok = check_on(at::Device(at::kCUDA, 0)) && ok;
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "swiglu_check: %s\n", e.what());
    return 1;
  }
}
