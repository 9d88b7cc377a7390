// at::Tensor as a launch argument (tessera/torch.hpp), on CPU tensors and the interpreter: values
// against PyTorch's own ops, views (storage offset, transposes through ts::tensor_args), the
// extent as the checked bound, and tensors tessera cannot take refused naming the argument.
#include <ATen/ATen.h>
#include <tessera/torch.hpp>

#include "tests/api/launch_test_util.hpp"

using namespace launch_test;
using Catch::Contains;

namespace {

// out[r * cols + c] = x[r * rs + c * cs].
auto make_strided_copy() {
  return ts::kernel("torch_strided_copy", [](ts::Ptr<float> x, ts::Int64 rows, ts::Int64 cols, ts::Int64 rs,
                                             ts::Int64 cs, ts::Ptr<float> out) {
    const int block = ts::meta("BLOCK");
    auto r = ts::program_id(0);
    auto c = ts::arange(0, block);
    auto mask = c < cols;
    ts::store(out + r * cols + c, ts::load(x + r * rs + c * cs, mask), mask);
  });
}

ts::LaunchOptions auto_options(std::int64_t n) {
  auto o = scale_options(static_cast<std::int32_t>(n));
  o.executor = ts::Executor::Auto;  // CPU tensors: the interpreter (or a host target)
  return o;
}

}  // namespace

TEST_CASE("CPU at::Tensors run on the interpreter and match PyTorch", "[torch]") {
  at::manual_seed(7);
  auto k = make_scale("torch_scale");
  const at::Tensor x = at::randn({1000});
  at::Tensor out = at::full({1000}, -1.0f);
  const auto opts = ts::torch::options_for(x, auto_options(1000));
  CHECK(opts.device == -1);
  k[opts](x, out, 1000, 1.5f);
  CHECK(at::equal(out, x * 1.5f));
  // A view that starts at a storage offset: data_ptr() points at its first element.
  const at::Tensor tail = x.narrow(0, 3, 997);
  at::Tensor out2 = at::zeros({997});
  k[auto_options(997)](tail, out2, 997, -2.0f);
  CHECK(at::equal(out2, tail * -2.0f));
  // The view's extent is the bound: reading one element past it is caught.
  CHECK_THAT(error_of<ts::Error>([&] { k[auto_options(998)](tail, out, 998, 1.0f); }),
             Contains("out-of-bounds load") && Contains("(3988 bytes)"));
}

TEST_CASE("ts::tensor_args passes an at::Tensor view's sizes and strides", "[torch]") {
  at::manual_seed(8);
  auto k = make_strided_copy();
  const at::Tensor base = at::randn({23, 37});
  const at::Tensor view = base.t();  // 37 x 23, strides {1, 37}
  at::Tensor out = at::zeros({37, 23});
  k[{.grid = {37}, .meta = {{"BLOCK", 32}}}](ts::tensor_args<2>(view), out);
  CHECK(at::equal(out, view.contiguous()));
}

TEST_CASE("at::Tensors tessera cannot take are refused naming the argument", "[torch][errors]") {
  auto k = make_scale("torch_refused");
  at::Tensor out = at::zeros({64});
  CHECK_THAT(error_of<ts::LaunchError>([&] { k[auto_options(64)](at::zeros({64}, at::kHalf), out, 64, 1.0f); }),
             Contains("argument 0 of kernel 'torch_refused' is ptr<f32>") && Contains("pointer to f16"));
  CHECK_THAT(error_of<ts::LaunchError>([&] { k[auto_options(64)](at::zeros({64}, at::kComplexFloat), out, 64, 1.0f); }),
             Contains("argument 0 is a tensor of dtype ComplexFloat") && Contains("no element type"));
  CHECK_THAT(error_of<ts::LaunchError>([&] { k[auto_options(64)](at::Tensor(), out, 64, 1.0f); }),
             Contains("argument 0 is an undefined at::Tensor"));
  auto to_gpu = auto_options(64);
  to_gpu.executor = ts::Executor::Cuda;
  CHECK_THAT(error_of<ts::LaunchError>([&] { k[to_gpu](at::zeros({64}), out, 64, 1.0f); }),
             Contains("argument 0 is in host memory, which Executor::Cuda cannot reach"));
  CHECK(scale_works(k));
}
