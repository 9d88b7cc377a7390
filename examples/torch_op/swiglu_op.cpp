// Your own tessera kernel as a PyTorch op, with its autograd formula and a meta kernel: what a
// user writes to call a fused kernel from training code. The op, myops::swiglu(a, b) = silu(a) * b
// (the gate of a SwiGLU MLP), runs forward and backward as one tessera kernel each, on CPU
// tensors (tessera's interpreter) and CUDA tensors (on PyTorch's current stream). Built as a
// shared library: Python loads it with torch.ops.load_library and calls torch.ops.myops.swiglu;
// C++ links it and calls the op through the dispatcher (swiglu_check.cpp).
//
// Four pieces: the kernels, the device and meta kernels that launch them, the autograd Function,
// and the TORCH_LIBRARY registration. tessera's own ops (dsl/torch/) are written the same way.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <tessera/tessera.hpp>
#include <tessera/torch.hpp>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

namespace {
namespace ts = tessera;

constexpr std::int64_t kBlock = 1024;

// 1. The kernels (f32 here; instantiate a template per dtype for more). y = a * sigmoid(a) * b;
// da = dy * b * s * (1 + a * (1 - s)), db = dy * a * s, with s = sigmoid(a).
auto make_swiglu_fwd() {
  return ts::kernel("myops_swiglu_fwd", [](ts::Ptr<float> a, ts::Ptr<float> b, ts::Ptr<float> y, ts::Int n) {
    auto offs = ts::program_id(0) * kBlock + ts::arange(0, kBlock);
    auto mask = offs < n;
    auto av = ts::load(a + offs, mask, 0.0f);
    ts::store(y + offs, av * ts::sigmoid(av) * ts::load(b + offs, mask, 0.0f), mask);
  });
}

auto make_swiglu_bwd() {
  return ts::kernel("myops_swiglu_bwd", [](ts::Ptr<float> a, ts::Ptr<float> b, ts::Ptr<float> dy,
                                           ts::Ptr<float> da, ts::Ptr<float> db, ts::Int n) {
    auto offs = ts::program_id(0) * kBlock + ts::arange(0, kBlock);
    auto mask = offs < n;
    auto av = ts::load(a + offs, mask, 0.0f);
    auto bv = ts::load(b + offs, mask, 0.0f);
    auto g = ts::load(dy + offs, mask, 0.0f);
    auto s = ts::sigmoid(av);
    ts::store(da + offs, g * bv * s * (1.0f + av * (1.0f - s)), mask);
    ts::store(db + offs, g * av * s, mask);
  });
}

// 2. Device kernels (one serves CPU and CUDA: a tessera launch follows its tensors) and meta
// kernels (shapes only, for torch.compile's fake tensors).
void check_inputs(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat, "myops::swiglu takes float32 tensors");
  TORCH_CHECK(a.sizes() == b.sizes(), "myops::swiglu: a and b must have the same shape, got ", a.sizes(), " and ",
              b.sizes());
  TORCH_CHECK(a.device() == b.device(), "myops::swiglu: a and b must be on one device");
  TORCH_CHECK(a.numel() < (std::int64_t{1} << 31) - kBlock, "myops::swiglu: too many elements for 32-bit offsets");
}

ts::LaunchOptions options(const at::Tensor& t) {
  return ts::torch::options_for(t, {.grid = {ts::cdiv(t.numel(), kBlock)}, .num_warps = 4});
}

at::Tensor swiglu_fwd(const at::Tensor& a_in, const at::Tensor& b_in) {
  check_inputs(a_in, b_in);
  const at::Tensor a = a_in.contiguous(), b = b_in.contiguous();
  at::Tensor y = at::empty_like(a, at::MemoryFormat::Contiguous);
  if (a.numel() == 0) return y;
  static auto k = make_swiglu_fwd();
  k[options(a)](a, b, y, static_cast<std::int32_t>(a.numel()));
  return y;
}

std::tuple<at::Tensor, at::Tensor> swiglu_bwd(const at::Tensor& dy_in, const at::Tensor& a_in,
                                              const at::Tensor& b_in) {
  check_inputs(a_in, b_in);
  const at::Tensor a = a_in.contiguous(), b = b_in.contiguous(), dy = dy_in.contiguous();
  at::Tensor da = at::empty_like(a, at::MemoryFormat::Contiguous), db = at::empty_like(b, at::MemoryFormat::Contiguous);
  if (a.numel() == 0) return {da, db};
  static auto k = make_swiglu_bwd();
  k[options(a)](a, b, dy, da, db, static_cast<std::int32_t>(a.numel()));
  return {da, db};
}

at::Tensor swiglu_fwd_meta(const at::Tensor& a, const at::Tensor&) {
  return at::empty_like(a, at::MemoryFormat::Contiguous);
}

std::tuple<at::Tensor, at::Tensor> swiglu_bwd_meta(const at::Tensor&, const at::Tensor& a, const at::Tensor& b) {
  return {at::empty_like(a, at::MemoryFormat::Contiguous), at::empty_like(b, at::MemoryFormat::Contiguous)};
}

// 3. The autograd formula: forward and backward call the registered ops through the dispatcher
// (so that torch.compile records them), below autograd.
template <class Sig>
c10::TypedOperatorHandle<Sig> op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Sig>();
}

struct SwigluFn : torch::autograd::Function<SwigluFn> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b) {
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({a, b});
    static auto fwd = op<at::Tensor(const at::Tensor&, const at::Tensor&)>("myops::swiglu");
    return fwd.call(a, b);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto bwd = op<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&)>(
        "myops::swiglu_backward");
    const auto saved = ctx->get_saved_variables();
    auto [da, db] = bwd.call(grads[0], saved[0], saved[1]);
    return {da, db};
  }
};

at::Tensor swiglu_autograd(const at::Tensor& a, const at::Tensor& b) { return SwigluFn::apply(a, b); }

}  // namespace

// 4. Registration: the schemas, then a kernel per dispatch key.
TORCH_LIBRARY(myops, m) {
  m.def("swiglu(Tensor a, Tensor b) -> Tensor");
  m.def("swiglu_backward(Tensor dy, Tensor a, Tensor b) -> (Tensor, Tensor)");
}
TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("swiglu", &swiglu_fwd);
  m.impl("swiglu_backward", &swiglu_bwd);
}
TORCH_LIBRARY_IMPL(myops, CUDA, m) {
  m.impl("swiglu", &swiglu_fwd);
  m.impl("swiglu_backward", &swiglu_bwd);
}
TORCH_LIBRARY_IMPL(myops, Meta, m) {
  m.impl("swiglu", &swiglu_fwd_meta);
  m.impl("swiglu_backward", &swiglu_bwd_meta);
}
TORCH_LIBRARY_IMPL(myops, Autograd, m) { m.impl("swiglu", &swiglu_autograd); }
