// ember's modules: Linear, Embedding, RMSNorm, DispersionCorrection, SwiGLU, LlamaMLPBlock, activations,
// losses, Sequential, ModuleList. Parameter names and shapes follow PyTorch (and LLaMA's checkpoints).
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/nn/activation.h"  // IWYU pragma: export
#include "ember/nn/embedding.h"  // IWYU pragma: export
#include "ember/nn/module.h"
#include "ember/nn/rnn.h"  // IWYU pragma: export

namespace ember {
namespace nn {

// y = x weight^T + bias; weight [out, in] and bias [out] from U(-1/sqrt(in), 1/sqrt(in)) (PyTorch's
// kaiming_uniform_ with a = sqrt(5)). libtorch's options: nn::Linear(nn::LinearOptions(4, 5).bias(false)).
class LinearOptions {
 public:
  LinearOptions(int64_t in_features, int64_t out_features) : in_(in_features), out_(out_features) {}
  LinearOptions& in_features(int64_t v) {
    in_ = v;
    return *this;
  }
  LinearOptions& out_features(int64_t v) {
    out_ = v;
    return *this;
  }
  LinearOptions& bias(bool v) {
    bias_ = v;
    return *this;
  }
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  bool bias() const { return bias_; }

 private:
  int64_t in_, out_;
  bool bias_ = true;
};

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  explicit Linear(const LinearOptions& options)
      : Linear(options.in_features(), options.out_features(), options.bias()) {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  void reset_parameters();
  int64_t in_features, out_features;
  Tensor weight, bias;  // bias undefined without one
};

// Rows of weight [num, dim] (N(0, 1), or options._weight) for int64 indices (nn/embedding.h).
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim) : Embedding(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit Embedding(const EmbeddingOptions& options);
  Tensor forward(const Tensor& indices) override;
  std::string extra_repr() const override;
  EmbeddingOptions options;
  int64_t num_embeddings, embedding_dim;
  Tensor weight;
};

// x / sqrt(mean(x^2 over the last dim) + eps) * weight; weight [dim] starts at 1.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  int64_t dim;
  double eps;
  Tensor weight;
};

// Per row of the last dim (size dim): mu = mean(x), c = x - alpha mu;
//   mode 0 (center):    y = weight c
//   mode 1 (normalize): y = weight c / sqrt(mean(c^2) + eps)
// alpha = 0, mode 1 is RMSNorm; alpha = 1, mode 1 is LayerNorm without bias. A custom op built
// through the public extension API only (nn/dispersion_correction.cpp, examples/custom_op.cpp).
// alpha outside [0, 1] or mode outside {0, 1} throws ValueError.
class DispersionCorrection : public Module {
 public:
  explicit DispersionCorrection(int64_t dim, double alpha = 0.8, int64_t mode = 1, double eps = 1e-6);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  int64_t dim;
  double alpha;
  int64_t mode;
  double eps;
  Tensor weight;
};

// The gate of a SwiGLU: silu(gate) * up by default (ember::silu_mul); another function of the same
// math may replace it, e.g. a custom op with its own kernels (examples/ascendc: Ascend C kernels).
using GateFn = std::function<Tensor(const Tensor& gate, const Tensor& up)>;

// LLaMA's MLP: down_proj(gate_fn(gate_proj(x), up_proj(x))), gate_fn = silu(gate) * up; no biases.
class SwiGLU : public Module {
 public:
  SwiGLU(int64_t d_model, int64_t d_ff, GateFn gate_fn = nullptr);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  int64_t d_model, d_ff;
  std::shared_ptr<Linear> gate_proj, up_proj, down_proj;
  GateFn gate_fn;  // null: ember::silu_mul
};

// x + mlp(norm(x)): norm is an RMSNorm unless another norm module is given (e.g. a
// DispersionCorrection); mlp is a SwiGLU, with gate_fn as its gate when given.
class LlamaMLPBlock : public Module {
 public:
  LlamaMLPBlock(int64_t d_model, int64_t d_ff, ModulePtr norm = nullptr, GateFn gate_fn = nullptr);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  ModulePtr norm;
  std::shared_ptr<SwiGLU> mlp;
};

// Activations as modules (for Sequential).
class ReLU : public Module {
 public:
  explicit ReLU(const ReLUOptions& options_ = {}) : options(options_) {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override { return options.inplace() ? "inplace=true" : ""; }
  ReLUOptions options;
};
class SiLU : public Module {
 public:
  Tensor forward(const Tensor& x) override;
};
class GELU : public Module {
 public:
  explicit GELU(const GELUOptions& options_ = {}) : options(options_) {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override { return "approximate=" + options.approximate(); }
  GELUOptions options;
};
class Sigmoid : public Module {
 public:
  Tensor forward(const Tensor& x) override;
};
class Tanh : public Module {
 public:
  Tensor forward(const Tensor& x) override;
};
// libtorch's options builder: nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)).
class LeakyReLUOptions {
 public:
  LeakyReLUOptions& negative_slope(double v) {
    slope_ = v;
    return *this;
  }
  double negative_slope() const { return slope_; }
  LeakyReLUOptions& inplace(bool v) {
    inplace_ = v;
    return *this;
  }
  bool inplace() const { return inplace_; }

 private:
  double slope_ = 0.01;
  bool inplace_ = false;
};
namespace functional {
using LeakyReLUFuncOptions = LeakyReLUOptions;
Tensor leaky_relu(const Tensor& x, const LeakyReLUFuncOptions& options);
}  // namespace functional
class LeakyReLU : public Module {
 public:
  explicit LeakyReLU(const LeakyReLUOptions& options = {})
      : negative_slope(options.negative_slope()), inplace(options.inplace()) {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  double negative_slope;
  bool inplace;
};

// Losses as modules: loss(input, target) = forward(input, target). Each keeps its reduction
// (Reduction::None / Mean / Sum, ops.h) and its loss's options; the options builders follow
// libtorch's (nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))).
class LossOptions {
 public:
  LossOptions(int64_t reduction = 1) : reduction_(reduction) {}  // NOLINT: implicit, as libtorch's
  LossOptions& reduction(int64_t r) {
    reduction_ = r;
    return *this;
  }
  int64_t reduction() const { return reduction_; }

 private:
  int64_t reduction_;
};
class Loss : public Module {
 public:
  explicit Loss(const LossOptions& options) : reduction(options.reduction()) {}
  // (Module's one-argument forward stays visible, as clang's -Woverloaded-virtual asks; a loss
  // called with one tensor throws NotImplementedError.)
  using Module::forward;
  virtual Tensor forward(const Tensor& input, const Tensor& target) = 0;
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  std::string extra_repr() const override;
  int64_t reduction;
};
class MSELoss : public Loss {
 public:
  explicit MSELoss(const LossOptions& options = {}) : Loss(options) {}
  Tensor forward(const Tensor& input, const Tensor& target) override;
};
class L1Loss : public Loss {
 public:
  explicit L1Loss(const LossOptions& options = {}) : Loss(options) {}
  Tensor forward(const Tensor& input, const Tensor& target) override;
};
class SmoothL1LossOptions : public LossOptions {
 public:
  using LossOptions::LossOptions;
  // The reduction setter returns this class, so chains go on with its own setters.
  SmoothL1LossOptions& reduction(int64_t r) {
    LossOptions::reduction(r);
    return *this;
  }
  using LossOptions::reduction;
  SmoothL1LossOptions& beta(double v) {
    beta_ = v;
    return *this;
  }
  double beta() const { return beta_; }

 private:
  double beta_ = 1.0;
};
class SmoothL1Loss : public Loss {
 public:
  explicit SmoothL1Loss(const SmoothL1LossOptions& options = {}) : Loss(options), beta(options.beta()) {}
  Tensor forward(const Tensor& input, const Tensor& target) override;
  double beta;
};
// Class weights (optional) and the ignored class of NLLLoss and CrossEntropyLoss.
class ClassLossOptions : public LossOptions {
 public:
  using LossOptions::LossOptions;
  // The reduction setter returns this class, so chains go on with its own setters.
  ClassLossOptions& reduction(int64_t r) {
    LossOptions::reduction(r);
    return *this;
  }
  using LossOptions::reduction;
  ClassLossOptions& weight(const Tensor& w) {
    weight_ = w;
    return *this;
  }
  ClassLossOptions& ignore_index(int64_t i) {
    ignore_ = i;
    return *this;
  }
  const Tensor& weight() const { return weight_; }
  int64_t ignore_index() const { return ignore_; }

 private:
  Tensor weight_;
  int64_t ignore_ = -100;
};
using NLLLossOptions = ClassLossOptions;
using CrossEntropyLossOptions = ClassLossOptions;
// input: log-probabilities [N, C]; target: int64 classes [N]. weight is registered as a buffer.
class NLLLoss : public Loss {
 public:
  explicit NLLLoss(const NLLLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target) override;
  Tensor weight;
  int64_t ignore_index;
};
// input: logits [N, C] (log-softmax fused in; class weights go through log_softmax + nll_loss).
class CrossEntropyLoss : public Loss {
 public:
  explicit CrossEntropyLoss(const CrossEntropyLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target) override;
  Tensor weight;
  int64_t ignore_index;
};
class BCELossOptions : public LossOptions {
 public:
  using LossOptions::LossOptions;
  // The reduction setter returns this class, so chains go on with its own setters.
  BCELossOptions& reduction(int64_t r) {
    LossOptions::reduction(r);
    return *this;
  }
  using LossOptions::reduction;
  BCELossOptions& weight(const Tensor& w) {
    weight_ = w;
    return *this;
  }
  const Tensor& weight() const { return weight_; }

 private:
  Tensor weight_;
};
// input: probabilities in [0, 1].
class BCELoss : public Loss {
 public:
  explicit BCELoss(const BCELossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target) override;
  Tensor weight;
};
class BCEWithLogitsLossOptions : public BCELossOptions {
 public:
  using BCELossOptions::BCELossOptions;
  // The reduction setter returns this class, so chains go on with its own setters.
  BCEWithLogitsLossOptions& reduction(int64_t r) {
    BCELossOptions::reduction(r);
    return *this;
  }
  using BCELossOptions::reduction;
  BCEWithLogitsLossOptions& weight(const Tensor& w) {
    BCELossOptions::weight(w);
    return *this;
  }
  BCEWithLogitsLossOptions& pos_weight(const Tensor& w) {
    pos_weight_ = w;
    return *this;
  }
  const Tensor& weight() const { return BCELossOptions::weight(); }
  const Tensor& pos_weight() const { return pos_weight_; }

 private:
  Tensor pos_weight_;
};
class BCEWithLogitsLoss : public Loss {
 public:
  explicit BCEWithLogitsLoss(const BCEWithLogitsLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target) override;
  Tensor weight, pos_weight;
};

// A function as a module (libtorch's nn::Functional): Functional(relu), or with the arguments
// after the input bound: Functional(max_pool2d, 3, 2) calls max_pool2d(x, 3, 2).
class Functional : public Module {
 public:
  using Function = std::function<Tensor(Tensor)>;
  explicit Functional(Function fn) : fn_(std::move(fn)) {}
  template <class F, class... Args, std::enable_if_t<(sizeof...(Args) > 0), int> = 0>
  explicit Functional(F fn, Args&&... args)
      : fn_([fn, bound = std::make_tuple(std::forward<Args>(args)...)](Tensor x) {
          return std::apply([&](const auto&... a) { return fn(x, a...); }, bound);
        }) {}
  Tensor forward(const Tensor& x) override { return fn_(x); }

 private:
  Function fn_;
};

// Modules applied in order; children are named "0", "1", ...
class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<ModulePtr> modules);
  // Sequential(a, b, c): modules (or module holders) as separate arguments, as libtorch's.
  template <class First, class... Rest,
            std::enable_if_t<std::is_convertible<First, ModulePtr>::value &&
                                 std::conjunction<std::is_convertible<Rest, ModulePtr>...>::value,
                             int> = 0>
  explicit Sequential(First&& first, Rest&&... rest) {
    push_back(std::forward<First>(first));  // a shared_ptr to a module, its forward adopted, or a holder
    (push_back(std::forward<Rest>(rest)), ...);
  }
  Sequential& push_back(ModulePtr m);
  template <class M, std::enable_if_t<!std::is_same<M, Module>::value, int> = 0>
  Sequential& push_back(const std::shared_ptr<M>& m) {
    return push_back(ModulePtr(adopt_forward(m)));
  }
  Tensor forward(const Tensor& x) override;
  size_t size() const { return modules_.size(); }
  ModulePtr operator[](size_t i) const;

 private:
  std::vector<ModulePtr> modules_;
};

// A list of modules registered as "0", "1", ... (no forward of its own).
class ModuleList : public Module {
 public:
  ModuleList() = default;
  ModuleList(std::initializer_list<ModulePtr> modules);
  ModuleList& push_back(ModulePtr m);
  template <class M, std::enable_if_t<!std::is_same<M, Module>::value, int> = 0>
  ModuleList& push_back(const std::shared_ptr<M>& m) {
    return push_back(ModulePtr(adopt_forward(m)));
  }
  size_t size() const { return modules_.size(); }
  ModulePtr operator[](size_t i) const;
  std::vector<ModulePtr>::const_iterator begin() const { return modules_.begin(); }
  std::vector<ModulePtr>::const_iterator end() const { return modules_.end(); }

 private:
  std::vector<ModulePtr> modules_;
};

}  // namespace nn
}  // namespace ember
