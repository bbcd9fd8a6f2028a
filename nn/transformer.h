// libtorch 1.13's attention and Transformer modules: MultiheadAttention (and
// F::multi_head_attention_forward), TransformerEncoderLayer / DecoderLayer (post-norm, sequence
// first: [L, N, E]), TransformerEncoder / Decoder (num_layers copies of a layer, an optional
// final norm) and Transformer, built from ember's Linear, LayerNorm, Dropout, bmm and softmax,
// so they differentiate and run on every device. Names of parameters follow libtorch's
// (self_attn.in_proj_weight, linear1.weight, norm1.weight, encoder.layers.0..., ...).
#pragma once

#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>

#include "ember/nn/layers.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/modules.h"

namespace ember {
namespace nn {

// A module with a one-tensor forward, type-erased (libtorch's AnyModule, for that signature).
class AnyModule {
 public:
  AnyModule() = default;
  template <class Impl>
  explicit AnyModule(std::shared_ptr<Impl> m) : ptr_(m), forward_([m](const Tensor& x) { return m->forward(x); }) {}
  template <class Impl>
  explicit AnyModule(const ModuleHolder<Impl>& holder) : AnyModule(holder.ptr()) {}
  bool is_empty() const noexcept { return ptr_ == nullptr; }
  const ModulePtr& ptr() const { return ptr_; }
  Tensor forward(const Tensor& x) const;

 private:
  ModulePtr ptr_;
  std::function<Tensor(const Tensor&)> forward_;
};

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  EMBER_ARG(int64_t, embed_dim);
  EMBER_ARG(int64_t, num_heads);
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(bool, add_bias_kv) = false;
  EMBER_ARG(bool, add_zero_attn) = false;
  EMBER_ARG(int64_t, kdim);
  EMBER_ARG(int64_t, vdim);
};

namespace functional {
struct MultiheadAttentionForwardFuncOptions {
  MultiheadAttentionForwardFuncOptions(int64_t embed_dim_to_check, int64_t num_heads, Tensor in_proj_weight,
                                       Tensor in_proj_bias, Tensor bias_k, Tensor bias_v, bool add_zero_attn,
                                       double dropout_p, Tensor out_proj_weight, Tensor out_proj_bias)
      : embed_dim_to_check_(embed_dim_to_check),
        num_heads_(num_heads),
        in_proj_weight_(std::move(in_proj_weight)),
        in_proj_bias_(std::move(in_proj_bias)),
        bias_k_(std::move(bias_k)),
        bias_v_(std::move(bias_v)),
        add_zero_attn_(add_zero_attn),
        dropout_p_(dropout_p),
        out_proj_weight_(std::move(out_proj_weight)),
        out_proj_bias_(std::move(out_proj_bias)) {}
  EMBER_ARG(int64_t, embed_dim_to_check);
  EMBER_ARG(int64_t, num_heads);
  EMBER_ARG(Tensor, in_proj_weight);
  EMBER_ARG(Tensor, in_proj_bias);
  EMBER_ARG(Tensor, bias_k);
  EMBER_ARG(Tensor, bias_v);
  EMBER_ARG(bool, add_zero_attn);
  EMBER_ARG(double, dropout_p);
  EMBER_ARG(Tensor, out_proj_weight);
  EMBER_ARG(Tensor, out_proj_bias);
  EMBER_ARG(bool, training) = true;
  EMBER_ARG(Tensor, key_padding_mask) = {};
  EMBER_ARG(bool, need_weights) = true;
  EMBER_ARG(Tensor, attn_mask) = {};
  EMBER_ARG(bool, use_separate_proj_weight) = false;
  EMBER_ARG(Tensor, q_proj_weight) = {};
  EMBER_ARG(Tensor, k_proj_weight) = {};
  EMBER_ARG(Tensor, v_proj_weight) = {};
  EMBER_ARG(Tensor, static_k) = {};
  EMBER_ARG(Tensor, static_v) = {};
  EMBER_ARG(bool, average_attn_weights) = true;
};
// (attn_output [L, N, E], attn_weights [N, L, S] averaged over heads, [N, H, L, S] otherwise,
// undefined unless need_weights). Masks: attn_mask [L, S] or [N H, L, S], bool (true: masked)
// or added; key_padding_mask [N, S], bool (true: ignored). Unbatched [L, E] inputs too.
std::tuple<Tensor, Tensor> multi_head_attention_forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                        const MultiheadAttentionForwardFuncOptions& options);
}  // namespace functional

class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttention(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttention(const MultiheadAttentionOptions& options);
  using Module::forward;
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true);
  std::string extra_repr() const override;
  void _reset_parameters();
  MultiheadAttentionOptions options;
  bool _qkv_same_embed_dim;
  Tensor in_proj_weight, in_proj_bias, bias_k, bias_v;
  std::shared_ptr<Linear> out_proj;
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;
  int64_t head_dim;
};

// The feed-forward block's activation: torch::kReLU, torch::kGELU or a function.
class TransformerActivation {
 public:
  TransformerActivation(RNNNonlinearity r);  // NOLINT: torch::kReLU
  TransformerActivation(Mode m);             // NOLINT: torch::kGELU
  template <class F, std::enable_if_t<std::is_invocable_r<Tensor, F, const Tensor&>::value, int> = 0>
  TransformerActivation(F f) : f_(std::move(f)) {}  // NOLINT
  Tensor operator()(const Tensor& x) const { return f_(x); }

 private:
  std::function<Tensor(const Tensor&)> f_;
};

struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}  // NOLINT
  EMBER_ARG(int64_t, d_model);
  EMBER_ARG(int64_t, nhead);
  EMBER_ARG(int64_t, dim_feedforward) = 2048;
  EMBER_ARG(double, dropout) = 0.1;
  EMBER_ARG(TransformerActivation, activation) = RNNNonlinearity::kReLU;
};
using TransformerDecoderLayerOptions = TransformerEncoderLayerOptions;

class TransformerEncoderLayer : public Module {
 public:
  using Options = TransformerEncoderLayerOptions;
  TransformerEncoderLayer(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayer(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayer(const TransformerEncoderLayerOptions& options);
  using Module::forward;
  Tensor forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask = {});
  Tensor forward(const Tensor& src) override { return forward(src, Tensor(), Tensor()); }
  void reset_parameters();
  TransformerEncoderLayerOptions options;
  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;
  std::shared_ptr<LayerNorm> norm1, norm2;
};
class TransformerDecoderLayer : public Module {
 public:
  using Options = TransformerDecoderLayerOptions;
  TransformerDecoderLayer(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayer(TransformerDecoderLayerOptions(d_model, nhead)) {}
  explicit TransformerDecoderLayer(const TransformerDecoderLayerOptions& options);
  using Module::forward;
  Tensor forward(Tensor tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});
  void reset_parameters();
  TransformerDecoderLayerOptions options;
  std::shared_ptr<MultiheadAttention> self_attn, multihead_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2, dropout3;
  std::shared_ptr<LayerNorm> norm1, norm2, norm3;
};

// num_layers copies of encoder_layer (each starting from its weights, as libtorch's clone), then
// norm if given. The layer may be given as a module, a holder or its options.
template <class Layer>
struct TransformerCoderOptions {
 protected:
  std::shared_ptr<Layer> layer_;

 public:
  template <class L, std::enable_if_t<std::is_convertible<L, std::shared_ptr<Module>>::value, int> = 0>
  TransformerCoderOptions(const L& layer, int64_t num_layers)
      : layer_(std::dynamic_pointer_cast<Layer>(std::shared_ptr<Module>(layer))), num_layers_(num_layers) {}
  TransformerCoderOptions(const typename Layer::Options& layer_options, int64_t num_layers)
      : layer_(std::make_shared<Layer>(layer_options)), num_layers_(num_layers) {}
  EMBER_ARG(int64_t, num_layers);
  EMBER_ARG(AnyModule, norm) = {};
};
struct TransformerEncoderOptions : TransformerCoderOptions<TransformerEncoderLayer> {
  using TransformerCoderOptions::TransformerCoderOptions;
  const std::shared_ptr<TransformerEncoderLayer>& encoder_layer() const { return layer_; }
  TransformerEncoderOptions& encoder_layer(const std::shared_ptr<TransformerEncoderLayer>& l) {
    layer_ = l;
    return *this;
  }
};
struct TransformerDecoderOptions : TransformerCoderOptions<TransformerDecoderLayer> {
  using TransformerCoderOptions::TransformerCoderOptions;
  const std::shared_ptr<TransformerDecoderLayer>& decoder_layer() const { return layer_; }
  TransformerDecoderOptions& decoder_layer(const std::shared_ptr<TransformerDecoderLayer>& l) {
    layer_ = l;
    return *this;
  }
};

class TransformerEncoder : public Module {
 public:
  explicit TransformerEncoder(const TransformerEncoderOptions& options);
  using Module::forward;
  Tensor forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask = {});
  Tensor forward(const Tensor& src) override { return forward(src, Tensor(), Tensor()); }
  TransformerEncoderOptions options;
  std::shared_ptr<ModuleList> layers;
  AnyModule norm;
};
class TransformerDecoder : public Module {
 public:
  explicit TransformerDecoder(const TransformerDecoderOptions& options);
  using Module::forward;
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});
  TransformerDecoderOptions options;
  std::shared_ptr<ModuleList> layers;
  AnyModule norm;
};

struct TransformerOptions {
  TransformerOptions() = default;
  TransformerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers, int64_t num_decoder_layers)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  EMBER_ARG(int64_t, d_model) = 512;
  EMBER_ARG(int64_t, nhead) = 8;
  EMBER_ARG(int64_t, num_encoder_layers) = 6;
  EMBER_ARG(int64_t, num_decoder_layers) = 6;
  EMBER_ARG(int64_t, dim_feedforward) = 2048;
  EMBER_ARG(double, dropout) = 0.1;
  EMBER_ARG(TransformerActivation, activation) = RNNNonlinearity::kReLU;
  EMBER_ARG(AnyModule, custom_encoder) = {};
  EMBER_ARG(AnyModule, custom_decoder) = {};
};
// encoder (final LayerNorm) and decoder (final LayerNorm); parameters of more than one dim
// re-initialised with xavier_uniform_, as libtorch's reset_parameters.
class Transformer : public Module {
 public:
  explicit Transformer(const TransformerOptions& options);
  using Module::forward;
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {}, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& src_key_padding_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});
  void reset_parameters();
  // [sz, sz]: 0 on and below the diagonal, -inf above (float32, CPU).
  static Tensor generate_square_subsequent_mask(int64_t sz);
  TransformerOptions options;
  AnyModule encoder, decoder;
};

}  // namespace nn
}  // namespace ember
