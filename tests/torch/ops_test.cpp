// The tessera::* PyTorch ops (libtessera_torch.so, tessera/torch_ops.hpp) on CPU tensors, which
// run on tessera's interpreter: values and gradients against PyTorch's own ops (computed in f32
// or f64 from the same inputs), the meta kernels' shapes, dropout's mask, and refused arguments.
// The same ops on CUDA tensors, with opcheck and torch.compile: tests/torch/ops_check.py on the GPU.
#include <ATen/ATen.h>
#include <catch2/catch.hpp>
#include <tessera/torch_ops.hpp>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tests/common/numerics_reference.hpp"

namespace tt = tessera::torch;
using Catch::Contains;

namespace {

// The largest |a - b| (a, b of any float dtype, compared in f64).
double max_error(const at::Tensor& a, const at::Tensor& b) {
  REQUIRE(a.sizes() == b.sizes());
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

at::Tensor leaf(const at::Tensor& t) { return t.detach().clone().set_requires_grad(true); }

std::vector<at::Tensor> grads_of(const at::Tensor& out, const at::Tensor& upstream, std::vector<at::Tensor> inputs) {
  return ::torch::autograd::grad({out}, inputs, {upstream});
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("tessera::layer_norm matches at::layer_norm, values and gradients", "[torch_ops]") {
  at::manual_seed(1);
  for (std::int64_t n : {96, 33}) {
    const at::Tensor x = leaf(at::randn({2, 3, n})), w = leaf(at::randn({n})), b = leaf(at::randn({n}));
    const at::Tensor rx = leaf(x), rw = leaf(w), rb = leaf(b);
    const at::Tensor y = tt::layer_norm(x, w, b, 1e-5);
    const at::Tensor ry = at::layer_norm(rx, {n}, rw, rb, 1e-5);
    CHECK(max_error(y, ry) < 1e-4);
    const at::Tensor dy = at::randn_like(y);
    const auto g = grads_of(y, dy, {x, w, b});
    const auto rg = grads_of(ry, dy, {rx, rw, rb});
    for (std::size_t i = 0; i < 3; ++i) CHECK(max_error(g[i], rg[i]) < 1e-3);
  }
}

TEST_CASE("tessera::layer_norm in f16 and bf16 keeps the input's dtype, f32 statistics", "[torch_ops]") {
  at::manual_seed(2);
  for (auto dtype : {at::kHalf, at::kBFloat16}) {
    const at::Tensor x = at::randn({4, 64}).to(dtype), w = at::randn({64}).to(dtype), b = at::randn({64}).to(dtype);
    const at::Tensor y = tt::layer_norm(x, w, b);
    CHECK(y.scalar_type() == dtype);
    const at::Tensor ref = at::layer_norm(x.to(at::kFloat), {64}, w.to(at::kFloat), b.to(at::kFloat), 1e-5);
    CHECK(max_error(y, ref) < (dtype == at::kHalf ? 1e-2 : 5e-2));
  }
}

TEST_CASE("tessera::rms_norm matches its formula, values and gradients", "[torch_ops]") {
  at::manual_seed(3);
  const std::int64_t n = 80;
  const at::Tensor x = leaf(at::randn({5, n})), w = leaf(at::randn({n}));
  const at::Tensor rx = leaf(x.to(at::kDouble)), rw = leaf(w.to(at::kDouble));
  const at::Tensor y = tt::rms_norm(x, w, 1e-6);
  const at::Tensor ry = rx * at::rsqrt(rx.pow(2).mean({-1}, true) + 1e-6) * rw;
  CHECK(max_error(y, ry) < 1e-4);
  const at::Tensor dy = at::randn_like(y);
  const auto g = grads_of(y, dy, {x, w});
  const auto rg = grads_of(ry, dy.to(at::kDouble), {rx, rw});
  CHECK(max_error(g[0], rg[0]) < 1e-3);
  CHECK(max_error(g[1], rg[1]) < 1e-3);
}

TEST_CASE("tessera::softmax matches at::softmax over the last dimension, values and gradients", "[torch_ops]") {
  at::manual_seed(4);
  const at::Tensor x = leaf(at::randn({2, 3, 50}) * 4), rx = leaf(x);
  const at::Tensor y = tt::softmax(x, -1), ry = at::softmax(rx, -1);
  CHECK(max_error(y, ry) < 1e-6);
  CHECK(max_error(tt::softmax(x, 2), ry) < 1e-6);
  const at::Tensor dy = at::randn_like(y);
  CHECK(max_error(grads_of(y, dy, {x})[0], grads_of(ry, dy, {rx})[0]) < 1e-5);
  CHECK_THAT(error_of([&] { tt::softmax(x, 0); }), Contains("only the last dimension"));
}

TEST_CASE("tessera::cross_entropy matches at::cross_entropy_loss with ignored rows, values and gradients",
          "[torch_ops]") {
  at::manual_seed(5);
  // 5000 classes: the fused loop takes several column blocks of 4096.
  for (std::int64_t v : {37, 5000}) {
    const at::Tensor logits = leaf(at::randn({6, v}) * 3), rl = leaf(logits);
    const at::Tensor target = at::randint(0, v, {6}, at::kLong);
    target[2] = -100;
    target[4] = -100;
    const at::Tensor loss = tt::cross_entropy(logits, target);
    const at::Tensor ref = at::cross_entropy_loss(rl, target, {}, at::Reduction::Mean, -100);
    CHECK(loss.scalar_type() == at::kFloat);
    CHECK(loss.dim() == 0);
    CHECK(max_error(loss, ref) < 1e-5);
    const at::Tensor up = at::full({}, 1.7f);
    const at::Tensor g = grads_of(loss, up, {logits})[0], rg = grads_of(ref, up, {rl})[0];
    CHECK(max_error(g, rg) < 1e-6);
    CHECK(at::equal(g[2], at::zeros({v})));  // an ignored row gets no gradient
  }
}

TEST_CASE("tessera::bias_gelu matches at::gelu(x + bias), values and gradients of both", "[torch_ops]") {
  at::manual_seed(6);
  const at::Tensor x = leaf(at::randn({3, 4, 40}) * 2), b = leaf(at::randn({40})), rx = leaf(x), rb = leaf(b);
  const at::Tensor y = tt::bias_gelu(x, b), ry = at::gelu(rx + rb);
  CHECK(max_error(y, ry) < 1e-5);
  const at::Tensor dy = at::randn_like(y);
  const auto g = grads_of(y, dy, {x, b});
  const auto rg = grads_of(ry, dy, {rx, rb});
  CHECK(max_error(g[0], rg[0]) < 1e-5);
  CHECK(max_error(g[1], rg[1]) < 1e-4);
}

TEST_CASE("tessera::matmul matches at::matmul, values and gradients, with a transposed operand", "[torch_ops]") {
  at::manual_seed(8);
  const at::Tensor a = leaf(at::randn({33, 40})), b_t = at::randn({65, 40});
  const at::Tensor b = leaf(b_t.t()), ra = leaf(a), rb = leaf(b_t.t());  // b: a column-major view
  const at::Tensor c = tt::matmul(a, b), rc = at::matmul(ra, rb);
  CHECK(c.sizes() == rc.sizes());
  CHECK(max_error(c, rc) < 1e-5);
  const at::Tensor dc = at::randn_like(c);
  const auto g = grads_of(c, dc, {a, b});
  const auto rg = grads_of(rc, dc, {ra, rb});
  CHECK(max_error(g[0], rg[0]) < 1e-5);
  CHECK(max_error(g[1], rg[1]) < 1e-5);
}

TEST_CASE("tessera::attention matches softmax(q·kᵀ·scale)·v in f32, causal, values and gradients", "[torch_ops]") {
  at::manual_seed(9);
  const at::Tensor q = leaf(at::randn({2, 3, 40, 16}).to(at::kHalf)), k = leaf(at::randn({2, 3, 40, 16}).to(at::kHalf)),
                   v = leaf(at::randn({2, 3, 40, 16}).to(at::kHalf));
  const at::Tensor rq = leaf(q.to(at::kFloat)), rk = leaf(k.to(at::kFloat)), rv = leaf(v.to(at::kFloat));
  const at::Tensor o = tt::attention(q, k, v, /*causal=*/true);
  const at::Tensor future = at::ones({40, 40}, at::kBool).triu(1);
  const at::Tensor ro =
      at::softmax(at::matmul(rq, rk.transpose(-1, -2)).mul(0.25).masked_fill(future, -INFINITY), -1).matmul(rv);
  CHECK(o.scalar_type() == at::kHalf);
  CHECK(max_error(o, ro) < 2e-3);  // |o| <= max |v| ~ 4: a few f16 roundings
  const at::Tensor d_o = at::randn_like(ro);
  const auto g = grads_of(o, d_o.to(at::kHalf), {q, k, v});
  const auto rg = grads_of(ro, d_o, {rq, rk, rv});
  for (int i = 0; i < 3; ++i) {
    INFO("gradient " << i);
    CHECK(max_error(g[i], rg[i]) < 1e-2 * rg[i].abs().max().item<double>());
  }
}

TEST_CASE("tessera::dropout: a mask of (seed, index), kept values scaled, the same mask in the backward pass",
          "[torch_ops]") {
  at::manual_seed(7);
  const at::Tensor x = leaf(at::rand({64, 64}) + 1.0);  // no zeros: a zero output means dropped
  const double p = 0.25;
  const at::Tensor y = tt::dropout(x, p, 1234);
  const at::Tensor kept = y.ne(0);
  const double fraction = kept.to(at::kDouble).mean().item<double>();
  // 4096 Bernoulli(0.75) draws: the standard deviation of the fraction is 0.0068.
  CHECK(fraction > 0.75 - 0.03);
  CHECK(fraction < 0.75 + 0.03);
  CHECK(max_error(y.masked_select(kept), x.masked_select(kept) / (1 - p)) < 1e-6);
  CHECK(at::equal(tt::dropout(x, p, 1234), y));
  CHECK_FALSE(at::equal(tt::dropout(x, p, 1235), y));
  const at::Tensor dy = at::randn_like(y);
  const at::Tensor dx = grads_of(y, dy, {x})[0];
  CHECK(max_error(dx, dy * kept.to(at::kFloat) / (1 - p)) < 1e-6);
  CHECK(at::equal(tt::dropout(x, 0.0, 1), x));
  CHECK(at::equal(tt::dropout(x, 1.0, 1), at::zeros_like(x)));
  CHECK_THAT(error_of([&] { tt::dropout(x, 1.5, 1); }), Contains("p must be in [0, 1]"));
}

// The mask bit for bit: element e of dropout(x, p, seed) is kept where Triton's uniform draw of
// word k of Philox(seed, counter) is > p (in f32), with program = e / 4096, k = (e % 4096) / 1024
// and counter = program * 1024 + e % 1024 (pointwise_kernels.hpp). The kernel tests an integer
// bound instead of the draw; p's near the draws' rounding steps and the ends check that bound.
TEST_CASE("tessera::dropout keeps exactly the elements whose Philox draw is above p", "[torch_ops]") {
  const std::int64_t seed = 0x1234'5678'9abcLL, numel = 3 * 4096 + 1000;  // a partial last program
  const at::Tensor x = at::ones({numel});
  const auto key_lo = static_cast<std::uint32_t>(seed), key_hi = static_cast<std::uint32_t>(seed >> 32);
  for (const double p : {0.1, 1.0 / 3, 0.5, 0.9, 1e-9, 1.0 - 1e-7, 0.5 + 0x1p-24, 0.5 - 0x1p-25}) {
    INFO("p = " << p);
    const at::Tensor y = tt::dropout(x, p, seed);
    const float* out = y.data_ptr<float>();
    std::int64_t mismatches = 0;
    for (std::int64_t e = 0; e < numel; ++e) {
      const auto counter = static_cast<std::uint32_t>(e / 4096 * 1024 + e % 1024);
      const auto words = numerics_reference::philox({counter, 0, 0, 0}, key_lo, key_hi);
      const bool kept = numerics_reference::uniform(words[(e % 4096) / 1024]) > static_cast<float>(p);
      mismatches += kept != (out[e] != 0.0f);
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("the ops' meta kernels give shapes and dtypes without running a kernel", "[torch_ops]") {
  const auto meta = at::TensorOptions().device(at::kMeta);
  const at::Tensor x = at::empty({7, 3, 4096}, meta.dtype(at::kHalf)), w = at::empty({4096}, meta.dtype(at::kHalf));
  CHECK(tt::layer_norm(x, w, w).sizes() == x.sizes());
  CHECK(tt::rms_norm(x, w).scalar_type() == at::kHalf);
  CHECK(tt::softmax(x).sizes() == x.sizes());
  CHECK(tt::bias_gelu(x, w).sizes() == x.sizes());
  CHECK(tt::dropout(x, 0.5, 3).sizes() == x.sizes());
  const at::Tensor logits = at::empty({8, 50257}, meta.dtype(at::kBFloat16));
  const at::Tensor loss = tt::cross_entropy(logits, at::empty({8}, meta.dtype(at::kLong)));
  CHECK(loss.dim() == 0);
  CHECK(loss.scalar_type() == at::kFloat);
}

TEST_CASE("the ops refuse arguments they cannot take, naming the op and the argument", "[torch_ops]") {
  const at::Tensor x = at::randn({4, 16});
  CHECK_THAT(error_of([&] { tt::layer_norm(x, at::ones({15}), at::zeros({16})); }),
             Contains("tessera::layer_norm: weight must have shape [16]"));
  CHECK_THAT(error_of([&] { tt::rms_norm(x.to(at::kDouble), at::ones({16}, at::kDouble)); }),
             Contains("must be float32, float16 or bfloat16"));
  CHECK_THAT(error_of([&] { tt::layer_norm(x, at::ones({16}, at::kHalf), at::zeros({16})); }),
             Contains("weight has dtype Half"));
  CHECK_THAT(error_of([&] { tt::cross_entropy(x, at::zeros({4}, at::kInt)); }),
             Contains("target must be int64"));
  CHECK_THAT(error_of([&] { tt::cross_entropy(x, at::full({4}, 16, at::kLong)); }),
             Contains("a target is outside [0, 16)"));
  CHECK_THAT(error_of([&] { tt::softmax(at::randn({2, 40000})); }), Contains("longer than the 32768"));
}
