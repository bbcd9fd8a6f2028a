#include "ember/nn/modules.h"

#include <cmath>
#include <sstream>

#include "ember/autograd/grad_mode.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/ops/ops.h"
#include "ember/nn/internal/repr.h"

namespace ember {
namespace nn {
using detail::repr_number;
namespace F = functional;

namespace {
void check_positive(const char* module, const char* what, int64_t v) {
  EMBER_CHECK_VALUE(v > 0, module, ": ", what, " must be positive, got ", v);
}
}  // namespace

Linear::Linear(int64_t in, int64_t out, bool with_bias) : in_features(in), out_features(out) {
  check_positive("Linear", "in_features", in);
  check_positive("Linear", "out_features", out);
  weight = register_parameter("weight", empty({out, in}));
  if (with_bias) bias = register_parameter("bias", empty({out}));
  reset_parameters();
}
void Linear::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
    init::uniform_(bias, -bound, bound);
  }
}
Tensor Linear::forward(const Tensor& x) { return F::linear(x, weight, bias); }
std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(in_features) + ", out_features=" + std::to_string(out_features) +
         ", bias=" + (bias.defined() ? "true" : "false");
}

Embedding::Embedding(const EmbeddingOptions& o)
    : options(o), num_embeddings(o.num_embeddings()), embedding_dim(o.embedding_dim()) {
  check_positive("Embedding", "num_embeddings", num_embeddings);
  check_positive("Embedding", "embedding_dim", embedding_dim);
  EMBER_CHECK_VALUE(!o.sparse(), "Embedding: sparse gradients are not supported (ember has no sparse tensors)");
  if (o.padding_idx()) {
    const int64_t p = *o.padding_idx();
    EMBER_CHECK_INDEX(p >= -num_embeddings && p < num_embeddings, "Embedding: padding_idx ", p,
                      " must be within num_embeddings ", num_embeddings);
    options.padding_idx(p < 0 ? p + num_embeddings : p);
  }
  if (o._weight().defined()) {
    EMBER_CHECK_SHAPE(o._weight().sizes() == IntArrayRef({num_embeddings, embedding_dim}),
                      "Embedding: _weight must be [", num_embeddings, ", ", embedding_dim, "], got shape ",
                      o._weight().sizes());
    weight = register_parameter("weight", o._weight());
  } else {
    weight = register_parameter("weight", empty({num_embeddings, embedding_dim}));
    init::normal_(weight);
    if (options.padding_idx()) {
      NoGradGuard g;
      weight.select(0, *options.padding_idx()).fill_(0);
    }
  }
}
Tensor Embedding::forward(const Tensor& indices) {
  return F::embedding(indices, weight, F::EmbeddingFuncOptions()
                                           .padding_idx(options.padding_idx())
                                           .max_norm(options.max_norm())
                                           .norm_type(options.norm_type())
                                           .scale_grad_by_freq(options.scale_grad_by_freq()));
}
std::string Embedding::extra_repr() const { return std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim); }

RMSNorm::RMSNorm(int64_t d, double e) : dim(d), eps(e) {
  check_positive("RMSNorm", "dim", d);
  EMBER_CHECK_VALUE(e >= 0, "RMSNorm: eps must be non-negative, got ", e);
  weight = register_parameter("weight", ones({d}));
}
Tensor RMSNorm::forward(const Tensor& x) { return F::rms_norm(x, weight, eps); }
std::string RMSNorm::extra_repr() const { return std::to_string(dim) + ", eps=" + repr_number(eps); }

DispersionCorrection::DispersionCorrection(int64_t d, double a, int64_t m, double e) : dim(d), alpha(a), mode(m), eps(e) {
  check_positive("DispersionCorrection", "dim", d);
  EMBER_CHECK_VALUE(a >= 0.0 && a <= 1.0, "DispersionCorrection: alpha must be in [0, 1], got ", a);
  EMBER_CHECK_VALUE(m == 0 || m == 1, "DispersionCorrection: mode must be 0 (center) or 1 (normalize), got ", m);
  EMBER_CHECK_VALUE(e >= 0, "DispersionCorrection: eps must be non-negative, got ", e);
  weight = register_parameter("weight", ones({d}));
}
Tensor DispersionCorrection::forward(const Tensor& x) { return F::dispersion_correction(x, weight, alpha, mode, eps); }
std::string DispersionCorrection::extra_repr() const {
  return std::to_string(dim) + ", alpha=" + repr_number(alpha) + ", mode=" + std::to_string(mode) +
         ", eps=" + repr_number(eps);
}

SwiGLU::SwiGLU(int64_t dm, int64_t ff, GateFn gate) : d_model(dm), d_ff(ff), gate_fn(std::move(gate)) {
  gate_proj = register_module("gate_proj", std::make_shared<Linear>(dm, ff, false));
  up_proj = register_module("up_proj", std::make_shared<Linear>(dm, ff, false));
  down_proj = register_module("down_proj", std::make_shared<Linear>(ff, dm, false));
}
Tensor SwiGLU::forward(const Tensor& x) {
  Tensor g = (*gate_proj)(x), u = (*up_proj)(x);
  return (*down_proj)(gate_fn ? gate_fn(g, u) : silu_mul(g, u));
}
std::string SwiGLU::extra_repr() const { return "d_model=" + std::to_string(d_model) + ", d_ff=" + std::to_string(d_ff); }

LlamaMLPBlock::LlamaMLPBlock(int64_t d_model, int64_t d_ff, ModulePtr n, GateFn gate) {
  norm = register_module("norm", n ? std::move(n) : std::make_shared<RMSNorm>(d_model));
  mlp = register_module("mlp", std::make_shared<SwiGLU>(d_model, d_ff, std::move(gate)));
}
Tensor LlamaMLPBlock::forward(const Tensor& x) { return x + (*mlp)((*norm)(x)); }
std::string LlamaMLPBlock::extra_repr() const {
  return "d_model=" + std::to_string(mlp->d_model) + ", d_ff=" + std::to_string(mlp->d_ff);
}

Tensor ReLU::forward(const Tensor& x) { return F::relu(x, options); }
Tensor SiLU::forward(const Tensor& x) { return x.silu(); }
Tensor GELU::forward(const Tensor& x) { return F::gelu(x, options); }
Tensor Sigmoid::forward(const Tensor& x) { return x.sigmoid(); }
Tensor Tanh::forward(const Tensor& x) { return x.tanh(); }
Tensor LeakyReLU::forward(const Tensor& x) {
  return F::leaky_relu(x, LeakyReLUOptions().negative_slope(negative_slope).inplace(inplace));
}
Tensor functional::leaky_relu(const Tensor& x, const LeakyReLUFuncOptions& o) {
  Tensor r = ember::leaky_relu(x, o.negative_slope());
  if (!o.inplace()) return r;
  Tensor t = x;
  return t.copy_(r);
}
std::string LeakyReLU::extra_repr() const { return "negative_slope=" + repr_number(negative_slope); }

std::string Loss::extra_repr() const {
  static const char* names[] = {"none", "mean", "sum"};
  return std::string("reduction=") + (reduction >= 0 && reduction <= 2 ? names[reduction] : std::to_string(reduction));
}
Tensor MSELoss::forward(const Tensor& input, const Tensor& target) { return ember::mse_loss(input, target, reduction); }
Tensor L1Loss::forward(const Tensor& input, const Tensor& target) { return ember::l1_loss(input, target, reduction); }
Tensor SmoothL1Loss::forward(const Tensor& input, const Tensor& target) {
  return ember::smooth_l1_loss(input, target, reduction, beta);
}
namespace {
std::optional<Tensor> maybe(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }
}  // namespace
NLLLoss::NLLLoss(const NLLLossOptions& o) : Loss(o), ignore_index(o.ignore_index()) {
  if (o.weight().defined()) weight = register_buffer("weight", o.weight());
}
Tensor NLLLoss::forward(const Tensor& input, const Tensor& target) {
  return ember::nll_loss(input, target, maybe(weight), reduction, ignore_index);
}
CrossEntropyLoss::CrossEntropyLoss(const CrossEntropyLossOptions& o) : Loss(o), ignore_index(o.ignore_index()) {
  if (o.weight().defined()) weight = register_buffer("weight", o.weight());
}
Tensor CrossEntropyLoss::forward(const Tensor& input, const Tensor& target) {
  if (!weight.defined() && reduction == Reduction::Mean) return ember::cross_entropy(input, target, ignore_index);
  return ember::nll_loss(input.log_softmax(input.dim() == 1 ? 0 : 1), target, maybe(weight), reduction, ignore_index);
}
BCELoss::BCELoss(const BCELossOptions& o) : Loss(o) {
  if (o.weight().defined()) weight = register_buffer("weight", o.weight());
}
Tensor BCELoss::forward(const Tensor& input, const Tensor& target) {
  return ember::binary_cross_entropy(input, target, maybe(weight), reduction);
}
BCEWithLogitsLoss::BCEWithLogitsLoss(const BCEWithLogitsLossOptions& o) : Loss(o) {
  if (o.weight().defined()) weight = register_buffer("weight", o.weight());
  if (o.pos_weight().defined()) pos_weight = register_buffer("pos_weight", o.pos_weight());
}
Tensor BCEWithLogitsLoss::forward(const Tensor& input, const Tensor& target) {
  return ember::binary_cross_entropy_with_logits(input, target, maybe(weight), maybe(pos_weight), reduction);
}

Sequential::Sequential(std::initializer_list<ModulePtr> modules) {
  for (const ModulePtr& m : modules) push_back(m);
}
Sequential& Sequential::push_back(ModulePtr m) {
  add_child(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
  return *this;
}
Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (const ModulePtr& m : modules_) y = (*m)(y);
  return y;
}
ModulePtr Sequential::operator[](size_t i) const {
  EMBER_CHECK_INDEX(i < modules_.size(), "Sequential: index ", i, " out of range for ", modules_.size(), " modules");
  return modules_[i];
}

ModuleList::ModuleList(std::initializer_list<ModulePtr> modules) {
  for (const ModulePtr& m : modules) push_back(m);
}
ModuleList& ModuleList::push_back(ModulePtr m) {
  add_child(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
  return *this;
}
ModulePtr ModuleList::operator[](size_t i) const {
  EMBER_CHECK_INDEX(i < modules_.size(), "ModuleList: index ", i, " out of range for ", modules_.size(), " modules");
  return modules_[i];
}

}  // namespace nn
}  // namespace ember
