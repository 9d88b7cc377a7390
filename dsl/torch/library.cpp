// The tessera namespace of PyTorch ops: schemas and the kernel registered for each dispatch key.
// Loading libtessera_torch.so registers them (torch.ops.load_library in Python; linking it in
// C++). Public ops (differentiable): layer_norm, rms_norm, softmax, cross_entropy, bias_gelu,
// dropout, matmul, attention. Internal ops (what their autograd formulas call, each with a meta
// kernel so that torch.compile traces through): *_fwd, *_bwd.
#include <torch/library.h>

#include "dsl/torch/ops.hpp"

namespace tt = tessera::torch_ops;

TORCH_LIBRARY(tessera, m) {
  m.def("layer_norm(Tensor x, Tensor weight, Tensor bias, float eps=1e-05) -> Tensor");
  m.def("rms_norm(Tensor x, Tensor weight, float eps=1e-06) -> Tensor");
  m.def("softmax(Tensor x, int dim=-1) -> Tensor");
  m.def("cross_entropy(Tensor logits, Tensor target, int ignore_index=-100) -> Tensor");
  m.def("bias_gelu(Tensor x, Tensor bias) -> Tensor");
  m.def("dropout(Tensor x, float p, int seed) -> Tensor");
  m.def("matmul(Tensor a, Tensor b) -> Tensor");
  m.def("attention(Tensor q, Tensor k, Tensor v, bool causal=False, float? scale=None) -> Tensor");

  m.def("layer_norm_fwd(Tensor x, Tensor weight, Tensor bias, float eps) -> (Tensor, Tensor, Tensor)");
  m.def("layer_norm_bwd(Tensor dy, Tensor x, Tensor weight, Tensor mean, Tensor rstd) -> (Tensor, Tensor, Tensor)");
  m.def("rms_norm_fwd(Tensor x, Tensor weight, float eps) -> (Tensor, Tensor)");
  m.def("rms_norm_bwd(Tensor dy, Tensor x, Tensor weight, Tensor rstd) -> (Tensor, Tensor)");
  m.def("softmax_fwd(Tensor x, int dim) -> Tensor");
  m.def("softmax_bwd(Tensor dy, Tensor y, int dim) -> Tensor");
  m.def("cross_entropy_fwd(Tensor logits, Tensor target, int ignore_index) -> (Tensor, Tensor)");
  m.def("cross_entropy_mean(Tensor losses, Tensor target, int ignore_index) -> (Tensor, Tensor)");
  m.def("cross_entropy_bwd(Tensor grad_scale, Tensor logits, Tensor target, Tensor lse, int ignore_index) -> Tensor");
  m.def("bias_gelu_fwd(Tensor x, Tensor bias) -> Tensor");
  m.def("bias_gelu_bwd(Tensor dy, Tensor x, Tensor bias) -> (Tensor, Tensor)");
  m.def("matmul_fwd(Tensor a, Tensor b) -> Tensor");
  m.def("attention_fwd(Tensor q, Tensor k, Tensor v, bool causal, float scale) -> (Tensor, Tensor)");
  m.def("attention_bwd(Tensor dout, Tensor q, Tensor k, Tensor v, Tensor out, Tensor lse, bool causal, float scale) -> "
        "(Tensor, Tensor, Tensor)");
}

// A tessera launch follows its tensors (CPU memory: the interpreter; CUDA memory: that GPU, on
// PyTorch's current stream), so one kernel serves both keys.
#define TESSERA_DEVICE_KERNELS(m)                   \
  m.impl("layer_norm_fwd", &tt::layer_norm_fwd);    \
  m.impl("layer_norm_bwd", &tt::layer_norm_bwd);    \
  m.impl("rms_norm_fwd", &tt::rms_norm_fwd);        \
  m.impl("rms_norm_bwd", &tt::rms_norm_bwd);        \
  m.impl("softmax_fwd", &tt::softmax_fwd);          \
  m.impl("softmax_bwd", &tt::softmax_bwd);          \
  m.impl("cross_entropy_fwd", &tt::cross_entropy_fwd); \
  m.impl("cross_entropy_mean", &tt::cross_entropy_mean); \
  m.impl("cross_entropy_bwd", &tt::cross_entropy_bwd); \
  m.impl("bias_gelu_fwd", &tt::bias_gelu_fwd);      \
  m.impl("bias_gelu_bwd", &tt::bias_gelu_bwd);      \
  m.impl("dropout", &tt::dropout);                  \
  m.impl("matmul_fwd", &tt::matmul_fwd);            \
  m.impl("attention_fwd", &tt::attention_fwd);      \
  m.impl("attention_bwd", &tt::attention_bwd)

TORCH_LIBRARY_IMPL(tessera, CPU, m) { TESSERA_DEVICE_KERNELS(m); }
TORCH_LIBRARY_IMPL(tessera, CUDA, m) { TESSERA_DEVICE_KERNELS(m); }

TORCH_LIBRARY_IMPL(tessera, Meta, m) {
  m.impl("layer_norm_fwd", &tt::layer_norm_fwd_meta);
  m.impl("layer_norm_bwd", &tt::layer_norm_bwd_meta);
  m.impl("rms_norm_fwd", &tt::rms_norm_fwd_meta);
  m.impl("rms_norm_bwd", &tt::rms_norm_bwd_meta);
  m.impl("softmax_fwd", &tt::softmax_fwd_meta);
  m.impl("softmax_bwd", &tt::softmax_bwd_meta);
  m.impl("cross_entropy_fwd", &tt::cross_entropy_fwd_meta);
  m.impl("cross_entropy_mean", &tt::cross_entropy_mean_meta);
  m.impl("cross_entropy_bwd", &tt::cross_entropy_bwd_meta);
  m.impl("bias_gelu_fwd", &tt::bias_gelu_fwd_meta);
  m.impl("bias_gelu_bwd", &tt::bias_gelu_bwd_meta);
  m.impl("dropout", &tt::dropout_meta);
  m.impl("matmul_fwd", &tt::matmul_fwd_meta);
  m.impl("attention_fwd", &tt::attention_fwd_meta);
  m.impl("attention_bwd", &tt::attention_bwd_meta);
}

TORCH_LIBRARY_IMPL(tessera, Autograd, m) {
  m.impl("layer_norm", &tt::layer_norm_autograd);
  m.impl("rms_norm", &tt::rms_norm_autograd);
  m.impl("softmax", &tt::softmax_autograd);
  m.impl("cross_entropy", &tt::cross_entropy_autograd);
  m.impl("bias_gelu", &tt::bias_gelu_autograd);
  m.impl("dropout", &tt::dropout_autograd);
  m.impl("matmul", &tt::matmul_autograd);
  m.impl("attention", &tt::attention_autograd);
}

// Below autograd the public ops are their forward ops (for every backend, meta included).
TORCH_LIBRARY_IMPL(tessera, CompositeExplicitAutograd, m) {
  m.impl("layer_norm", &tt::layer_norm_plain);
  m.impl("rms_norm", &tt::rms_norm_plain);
  m.impl("softmax", &tt::softmax_plain);
  m.impl("cross_entropy", &tt::cross_entropy_plain);
  m.impl("bias_gelu", &tt::bias_gelu_plain);
  m.impl("matmul", &tt::matmul_plain);
  m.impl("attention", &tt::attention_plain);
}
