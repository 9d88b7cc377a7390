// gpt_train: a small GPT trained on a synthetic sequence-reversal task, in C++ with libtorch, with
// tessera's PyTorch ops (tessera/torch_ops.hpp) or with PyTorch's own. gpt.py is its Python twin.
//
// Model: token + learned position embedding; --layers blocks of
//   x = x + Wo(attention(rms_norm(x)))     causal, multi-head
//   x = x + dropout(W2(bias_gelu(W1 rms_norm(x), b1)) + b2)
// then rms_norm and an LM head without bias; the loss is the mean cross-entropy over the counted
// positions. --impl tessera runs every op tessera has on tessera::torch::*: the RMSNorms, the
// linear layers (matmul), attention (16-bit, head_dim a power of two from 16 to 128; elsewhere
// scores, mask, tessera's softmax and P·V, those two batched products torch's), bias+GELU,
// dropout and the loss. --impl torch runs PyTorch's ops with the same formulas (normalization in
// f32, the loss on f32 logits, attention as scores, mask, softmax and P·V). The embedding and
// AdamW are PyTorch's in both.
//
// Task: each sequence is n random tokens a_1..a_n from [1, vocab), a separator 0, then a_n..a_1;
// the model reads seq = 2n tokens and predicts each next one, and the loss counts only the reversed
// half (the other targets are ignore_index = -100, which the loss must skip). It is learnable
// (attend to position 2n - i), so the loss falls from about ln(vocab - 1) when training works.
//
// Both impls start from the same weights (drawn on the CPU from --seed) and see the same batches
// (a generator of their own, from --seed), so their loss curves differ only by the ops' rounding.
// --compare trains both in this process and fails (exit 1) when the largest
// |loss_tessera - loss_torch| / loss_torch over all steps exceeds --tol (default 2e-3 in float32,
// 3e-2 in bfloat16, where torch's formulas round to bf16 between steps and tessera's ops do not),
// or, with 20 steps or more, when an impl's final loss (mean of the last 5 steps: one batch is
// noisy) is not below 0.9 x its first. It needs --dropout 0: torch's dropout masks are not
// tessera's (tessera's mask is a function of the seed step * 1000 + layer and the element index).
//
// Flags (defaults): --impl tessera|torch (tessera), --compare, --steps (200), --batch (16), --seq (32),
// --dim (128), --layers (2), --heads (4), --vocab (32), --lr (1e-3, AdamW, weight decay 0.01),
// --dropout (0), --device cpu|cuda (cuda where there is one), --dtype float32|bfloat16 (float32;
// bfloat16 makes the parameters and activations bf16), --seed (0), --tol, --log-every (10),
// --csv PATH (step,loss per line; step,tessera,torch with --compare). It prints the loss every
// --log-every steps and each run's steps/s, timed after 3 warm-up steps.
//
// CPU tensors run tessera's ops on its interpreter (slow: keep it tiny); CI runs
//   gpt_train --compare --device cpu --steps 6 --batch 2 --seq 8 --dim 32 --layers 1 --heads 2 --vocab 16
// On a GPU: gpt_train --compare --device cuda --steps 300, or --impl tessera|torch alone for steps/s.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <tessera/torch_ops.hpp>
#include <torch/cuda.h>
#include <torch/nn/module.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t kIgnoreIndex = -100;
constexpr std::int64_t kSeparator = 0;
constexpr double kRmsEps = 1e-6;
constexpr std::int64_t kWarmupSteps = 3;  // not timed: the first steps compile tessera's kernels

enum class Impl { tessera, torch };

const char* name_of(Impl impl) { return impl == Impl::tessera ? "tessera" : "torch"; }

struct Config {
  std::int64_t steps = 200, batch = 16, seq = 32, dim = 128, layers = 2, heads = 4, vocab = 32;
  double lr = 1e-3, dropout = 0.0, tol = -1;  // tol < 0: the dtype's default
  std::string device = torch::cuda::is_available() ? "cuda" : "cpu";
  std::string dtype = "float32";
  std::int64_t seed = 0, log_every = 10;
  Impl impl = Impl::tessera;
  bool compare = false;
  std::string csv;

  at::ScalarType scalar_type() const { return dtype == "bfloat16" ? at::kBFloat16 : at::kFloat; }
  at::Device torch_device() const { return at::Device(device); }
};

// ---- the ops that differ between impls

at::Tensor rms_norm(Impl impl, const at::Tensor& x, const at::Tensor& w) {
  if (impl == Impl::tessera) return tessera::torch::rms_norm(x, w, kRmsEps);
  const at::Tensor xf = x.to(at::kFloat);
  return (xf * at::rsqrt(xf.pow(2).mean({-1}, /*keepdim=*/true) + kRmsEps) * w.to(at::kFloat)).to(x.scalar_type());
}

at::Tensor softmax(Impl impl, const at::Tensor& x) {
  return impl == Impl::tessera ? tessera::torch::softmax(x, -1) : at::softmax(x, -1);
}

at::Tensor bias_gelu(Impl impl, const at::Tensor& x, const at::Tensor& bias) {
  return impl == Impl::tessera ? tessera::torch::bias_gelu(x, bias) : at::gelu(x + bias);
}

// torch's dropout draws from its own generator: `seed` is tessera's alone.
at::Tensor dropout(Impl impl, const at::Tensor& x, double p, std::int64_t seed) {
  return impl == Impl::tessera ? tessera::torch::dropout(x, p, seed) : at::dropout(x, p, /*train=*/true);
}

// x [..., in] · wᵀ (+ bias). tessera::torch::matmul takes 2-D operands of any strides: the rows of
// x, and wᵀ as a view.
at::Tensor linear(Impl impl, const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias = {}) {
  if (impl == Impl::torch) return at::linear(x, w, bias);
  std::vector<std::int64_t> sizes = x.sizes().vec();
  sizes.back() = w.size(0);
  const at::Tensor y = tessera::torch::matmul(x.reshape({-1, x.size(-1)}), w.t()).view(sizes);
  return bias.defined() ? y + bias : y;
}

// tessera's attention op takes 16-bit q, k, v with a head_dim that is a power of two from 16 to 128.
bool tessera_attention_takes(const at::Tensor& q) {
  const std::int64_t hd = q.size(-1);
  return (q.scalar_type() == at::kHalf || q.scalar_type() == at::kBFloat16) && hd >= 16 && hd <= 128 && (hd & (hd - 1)) == 0;
}

// Causal attention of q, k, v [batch, heads, t, hd]: tessera::torch::attention where it takes
// them, else scores, the causal mask, softmax (tessera's for --impl tessera) and P·V.
at::Tensor attention(Impl impl, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask) {
  if (impl == Impl::tessera && tessera_attention_takes(q)) return tessera::torch::attention(q, k, v, /*causal=*/true);
  const at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  return at::matmul(softmax(impl, scores.masked_fill(mask, -std::numeric_limits<double>::infinity())), v);
}

// Mean over the rows whose target is not kIgnoreIndex, in f32 (tessera's loss is f32 for any dtype).
at::Tensor cross_entropy(Impl impl, const at::Tensor& logits, const at::Tensor& target) {
  if (impl == Impl::tessera) return tessera::torch::cross_entropy(logits, target, kIgnoreIndex);
  return at::cross_entropy_loss(logits.to(at::kFloat), target, {}, at::Reduction::Mean, kIgnoreIndex);
}

// ---- model

struct Block {
  at::Tensor norm1, w_qkv, w_out, norm2, w_fc, b_fc, w_proj, b_proj;
};

class Gpt : public torch::nn::Module {
 public:
  // Weights are drawn on the CPU in f32 from the seed, in a fixed order, then moved: the same seed
  // gives the same initial model on any device and for either impl.
  Gpt(const Config& c, Impl impl) : impl_(impl), heads_(c.heads), dropout_(c.dropout) {
    at::manual_seed(static_cast<std::uint64_t>(c.seed));
    const auto opts = at::TensorOptions().device(c.torch_device()).dtype(c.scalar_type());
    const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.layers));  // GPT-2's scaling
    std::int64_t count = 0;
    auto param = [&](const at::Tensor& t) { return register_parameter("p" + std::to_string(count++), t.to(opts)); };
    auto normal = [&](at::IntArrayRef shape, double stddev = 0.02) { return param(at::randn(shape) * stddev); };
    const std::int64_t d = c.dim;
    tok_emb_ = normal({c.vocab, d});
    pos_emb_ = normal({c.seq, d});
    for (std::int64_t l = 0; l < c.layers; ++l) {
      Block b;
      b.norm1 = param(at::ones({d}));
      b.w_qkv = normal({3 * d, d});
      b.w_out = normal({d, d}, residual_std);
      b.norm2 = param(at::ones({d}));
      b.w_fc = normal({4 * d, d});  // bias-free: its bias is b_fc, fused into bias_gelu
      b.b_fc = param(at::zeros({4 * d}));
      b.w_proj = normal({d, 4 * d}, residual_std);
      b.b_proj = param(at::zeros({d}));
      blocks_.push_back(b);
    }
    norm_f_ = param(at::ones({d}));
    lm_head_ = normal({c.vocab, d});
    causal_ = at::ones({c.seq, c.seq}, at::TensorOptions().dtype(at::kBool).device(c.torch_device())).triu(1);
  }

  at::Tensor loss(const at::Tensor& tokens, const at::Tensor& targets, std::int64_t step) const {
    const std::int64_t bsz = tokens.size(0), t = tokens.size(1), d = tok_emb_.size(1), hd = d / heads_;
    const at::Tensor mask = causal_.slice(0, 0, t).slice(1, 0, t);
    at::Tensor x = at::embedding(tok_emb_, tokens) + pos_emb_.slice(0, 0, t);
    for (std::size_t layer = 0; layer < blocks_.size(); ++layer) {
      const Block& b = blocks_[layer];
      const at::Tensor qkv = linear(impl_, rms_norm(impl_, x, b.norm1), b.w_qkv)
                                 .view({bsz, t, 3, heads_, hd})
                                 .permute({2, 0, 3, 1, 4});  // [3, batch, heads, t, hd]
      const at::Tensor att = attention(impl_, qkv[0], qkv[1], qkv[2], mask);
      x = x + linear(impl_, att.transpose(1, 2).reshape({bsz, t, d}), b.w_out);

      at::Tensor h = bias_gelu(impl_, linear(impl_, rms_norm(impl_, x, b.norm2), b.w_fc), b.b_fc);
      h = linear(impl_, h, b.w_proj, b.b_proj);
      // p = 0 is the identity: no op at all, as torch does.
      if (dropout_ > 0) h = dropout(impl_, h, dropout_, step * 1000 + static_cast<std::int64_t>(layer));
      x = x + h;
    }
    const at::Tensor logits = linear(impl_, rms_norm(impl_, x, norm_f_), lm_head_);
    return cross_entropy(impl_, logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}));
  }

 private:
  Impl impl_;
  std::int64_t heads_;
  double dropout_;
  at::Tensor tok_emb_, pos_emb_, norm_f_, lm_head_, causal_;
  std::vector<Block> blocks_;
};

// ---- data

struct Batch {
  at::Tensor tokens, targets;
};

// Every step's batch, made up front (so that training has no host work to time) from a generator
// of their own, identical for every impl.
std::vector<Batch> make_batches(const Config& c) {
  at::Generator gen = at::detail::createCPUGenerator(static_cast<std::uint64_t>(c.seed + 1));
  const std::int64_t n = c.seq / 2;
  std::vector<Batch> batches;
  for (std::int64_t s = 0; s < c.steps; ++s) {
    const at::Tensor a = at::randint(1, c.vocab, {c.batch, n}, gen, at::kLong);
    const at::Tensor sep = at::full({c.batch, 1}, kSeparator, at::kLong);
    const at::Tensor seq = at::cat({a, sep, a.flip({1})}, 1);  // [batch, 2n + 1]
    at::Tensor tokens = seq.slice(1, 0, 2 * n).clone(), targets = seq.slice(1, 1, 2 * n + 1).clone();
    targets.slice(1, 0, n).fill_(kIgnoreIndex);  // count only the predictions of the reversed half
    batches.push_back({tokens.to(c.torch_device()), targets.to(c.torch_device())});
  }
  return batches;
}

// ---- training

struct Run {
  Impl impl;
  std::vector<double> losses;
  double steps_per_s;
};

void sync(const Config& c) {
  if (c.device == "cuda") torch::cuda::synchronize();  // CPU work is done when the call returns
}

Run train(const Config& c, Impl impl, const std::vector<Batch>& batches) {
  Gpt model(c, impl);
  torch::optim::AdamW opt(model.parameters(), torch::optim::AdamWOptions(c.lr).weight_decay(0.01));
  std::vector<at::Tensor> losses;
  const std::int64_t timed_from = std::min(kWarmupSteps, c.steps - 1);
  std::chrono::steady_clock::time_point start;
  for (std::int64_t step = 0; step < c.steps; ++step) {
    if (step == timed_from) {
      sync(c);
      start = std::chrono::steady_clock::now();
    }
    opt.zero_grad();
    const at::Tensor loss = model.loss(batches[step].tokens, batches[step].targets, step);
    loss.backward();
    opt.step();
    losses.push_back(loss.detach());  // read back at the end: no sync per step
    if (c.log_every > 0 && (step % c.log_every == 0 || step == c.steps - 1))
      std::printf("  [%s] step %5lld  loss %.5f\n", name_of(impl), static_cast<long long>(step), loss.item<double>());
  }
  sync(c);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const at::Tensor all = at::stack(losses).to(at::kCPU, at::kDouble);
  const double* p = all.data_ptr<double>();
  Run run{impl, std::vector<double>(p, p + all.numel()), static_cast<double>(c.steps - timed_from) / seconds};
  std::printf("%s: %.2f steps/s (after %lld warm-up steps), final loss %.5f\n", name_of(impl), run.steps_per_s,
              static_cast<long long>(timed_from), run.losses.back());
  return run;
}

// ---- checks

bool check(bool ok, const std::string& what) {
  std::printf("%s  %s\n", ok ? "PASS" : "FAIL", what.c_str());
  return ok;
}

// With 20 steps or more, training must have made progress: the mean of the last 5 losses below 0.9 x the first.
bool check_progress(const Run& r) {
  if (r.losses.size() < 20) return true;
  const double first = r.losses.front();
  double last = 0;
  for (std::size_t i = r.losses.size() - 5; i < r.losses.size(); ++i) last += r.losses[i] / 5;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: loss %.4f -> %.4f (must end below 0.9 x the first)", name_of(r.impl), first,
                last);
  return check(last < 0.9 * first, buf);
}

bool check_curves(const Run& a, const Run& b, double tol) {
  double worst = 0;
  std::size_t at_step = 0;
  for (std::size_t i = 0; i < a.losses.size(); ++i) {
    const double d = std::abs(a.losses[i] - b.losses[i]) / std::max(std::abs(b.losses[i]), 1e-12);
    if (std::isnan(d) || d > worst) {
      worst = d;
      at_step = i;
      if (std::isnan(d)) break;  // a NaN loss fails the check: report where it appeared
    }
  }
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "tessera vs torch: max |loss difference| / loss over %zu steps = %.3e at step %zu (tol %.1e)",
                a.losses.size(), worst, at_step, tol);
  return check(worst <= tol, buf);
}

void write_csv(const std::string& path, const std::vector<Run>& runs) {
  std::ofstream f(path);
  f << "step";
  for (const Run& r : runs) f << "," << (runs.size() == 1 ? "loss" : name_of(r.impl));
  f << "\n";
  for (std::size_t s = 0; s < runs[0].losses.size(); ++s) {
    f << s;
    for (const Run& r : runs) f << "," << r.losses[s];
    f << "\n";
  }
  if (!f) throw std::runtime_error("cannot write " + path);
}

// ---- flags

Config parse(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--compare") {
      c.compare = true;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value (or is unknown)");
    const std::string v = argv[++i];
    // std::stoll / std::stod accept a number's prefix and throw messages that name no flag.
    auto number = [&](auto parse) {
      std::size_t used = 0;
      try {
        const auto x = parse(v, &used);
        if (used == v.size()) return x;
      } catch (const std::exception&) {
      }
      throw std::invalid_argument(flag + " takes a number, got '" + v + "'");
    };
    auto integer = [&] {
      return static_cast<std::int64_t>(number([](const std::string& s, std::size_t* n) { return std::stoll(s, n); }));
    };
    auto real = [&] { return number([](const std::string& s, std::size_t* n) { return std::stod(s, n); }); };
    if (flag == "--steps") c.steps = integer();
    else if (flag == "--batch") c.batch = integer();
    else if (flag == "--seq") c.seq = integer();
    else if (flag == "--dim") c.dim = integer();
    else if (flag == "--layers") c.layers = integer();
    else if (flag == "--heads") c.heads = integer();
    else if (flag == "--vocab") c.vocab = integer();
    else if (flag == "--seed") c.seed = integer();
    else if (flag == "--log-every") c.log_every = integer();
    else if (flag == "--lr") c.lr = real();
    else if (flag == "--dropout") c.dropout = real();
    else if (flag == "--tol") c.tol = real();
    else if (flag == "--device") c.device = v;
    else if (flag == "--dtype") c.dtype = v;
    else if (flag == "--csv") c.csv = v;
    else if (flag == "--impl" && v == "tessera") c.impl = Impl::tessera;
    else if (flag == "--impl" && v == "torch") c.impl = Impl::torch;
    else throw std::invalid_argument("unknown flag or value: " + flag + " " + v);
  }
  if (c.device != "cpu" && c.device != "cuda") throw std::invalid_argument("--device must be cpu or cuda");
  if (c.dtype != "float32" && c.dtype != "bfloat16") throw std::invalid_argument("--dtype must be float32 or bfloat16");
  if (c.seq < 2 || c.seq % 2 != 0 || c.heads < 1 || c.dim % c.heads != 0 || c.vocab < 3 || c.steps < 1 || c.batch < 1 ||
      c.layers < 1)
    throw std::invalid_argument(
        "need an even --seq >= 2, --dim a multiple of --heads, --vocab >= 3, and --steps, --batch, --layers >= 1");
  if (c.compare && c.dropout != 0)
    throw std::invalid_argument("--compare needs --dropout 0: torch's dropout masks differ from tessera's");
  if (c.tol < 0) c.tol = c.dtype == "float32" ? 2e-3 : 3e-2;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Config c = parse(argc, argv);
    std::printf("%s, %s: batch %lld, seq %lld, dim %lld, layers %lld, heads %lld, vocab %lld, %lld steps, lr %g, "
                "dropout %g, seed %lld\n",
                c.device.c_str(), c.dtype.c_str(), static_cast<long long>(c.batch), static_cast<long long>(c.seq),
                static_cast<long long>(c.dim), static_cast<long long>(c.layers), static_cast<long long>(c.heads),
                static_cast<long long>(c.vocab), static_cast<long long>(c.steps), c.lr, c.dropout,
                static_cast<long long>(c.seed));
    const std::vector<Batch> batches = make_batches(c);
    std::vector<Run> runs;
    bool ok = true;
    if (c.compare) {
      runs = {train(c, Impl::tessera, batches), train(c, Impl::torch, batches)};
      ok = check_curves(runs[0], runs[1], c.tol);
      std::printf("tessera / torch speed: %.2fx\n", runs[0].steps_per_s / runs[1].steps_per_s);
      for (const Run& r : runs) ok = check_progress(r) && ok;
    } else {
      runs = {train(c, c.impl, batches)};
    }
    if (!c.csv.empty()) write_csv(c.csv, runs);
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpt_train: %s\n", e.what());
    return 1;
  }
}
