// ember's modules: Linear, Embedding, RMSNorm, DispersionCorrection, SwiGLU, LlamaMLPBlock,
// Sequential, ModuleList. Parameter names and shapes follow PyTorch (and LLaMA's checkpoints).
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "ember/nn/module.h"

namespace ember {
namespace nn {

// y = x weight^T + bias; weight [out, in] and bias [out] drawn from U(-1/sqrt(in), 1/sqrt(in))
// (PyTorch's default: kaiming_uniform_ with a = sqrt(5)).
// libtorch's options builder: nn::Linear(nn::LinearOptions(4, 5).bias(false)).
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

// Rows of weight [num, dim] (drawn from N(0, 1)) for int64 indices.
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim);
  Tensor forward(const Tensor& indices) override;
  std::string extra_repr() const override;
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

// LLaMA's MLP: down_proj(silu(gate_proj(x)) * up_proj(x)); no biases.
class SwiGLU : public Module {
 public:
  SwiGLU(int64_t d_model, int64_t d_ff);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  int64_t d_model, d_ff;
  std::shared_ptr<Linear> gate_proj, up_proj, down_proj;
};

// x + mlp(norm(x)): norm is an RMSNorm unless another norm module is given (e.g. a
// DispersionCorrection); mlp is a SwiGLU.
class LlamaMLPBlock : public Module {
 public:
  LlamaMLPBlock(int64_t d_model, int64_t d_ff, ModulePtr norm = nullptr);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  ModulePtr norm;
  std::shared_ptr<SwiGLU> mlp;
};

// Activations as modules (for Sequential).
class ReLU : public Module {
 public:
  Tensor forward(const Tensor& x) override;
};
class SiLU : public Module {
 public:
  Tensor forward(const Tensor& x) override;
};
class GELU : public Module {
 public:
  Tensor forward(const Tensor& x) override;
};

// Modules applied in order; children are named "0", "1", ...
class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<ModulePtr> modules);
  Sequential& push_back(ModulePtr m);
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
  size_t size() const { return modules_.size(); }
  ModulePtr operator[](size_t i) const;
  std::vector<ModulePtr>::const_iterator begin() const { return modules_.begin(); }
  std::vector<ModulePtr>::const_iterator end() const { return modules_.end(); }

 private:
  std::vector<ModulePtr> modules_;
};

}  // namespace nn
}  // namespace ember
