#include "ember/nn/transformer.h"

#include <cmath>
#include <limits>

#include "ember/autograd/grad_mode.h"
#include "ember/nn/functional.h"
#include "ember/nn/functional_forms.h"
#include "ember/nn/init.h"
#include "ember/nn/internal/repr.h"
#include "ember/nn/norm_forms.h"

namespace ember {
namespace nn {

Tensor AnyModule::forward(const Tensor& x) const {
  EMBER_CHECK_VALUE(ptr_ != nullptr, "AnyModule: forward on an empty AnyModule");
  return forward_(x);
}

namespace functional {
namespace {
Tensor masked_or_added(const Tensor& scores, const Tensor& mask) {
  if (mask.dtype() == kBool || mask.dtype() == kUInt8)
    return scores.masked_fill(mask.to(kBool), -std::numeric_limits<double>::infinity());
  return scores + mask.to(scores.dtype());
}
}  // namespace

std::tuple<Tensor, Tensor> multi_head_attention_forward(const Tensor& query_in, const Tensor& key_in,
                                                        const Tensor& value_in,
                                                        const MultiheadAttentionForwardFuncOptions& o) {
  const char* op = "multi_head_attention_forward";
  const bool unbatched = query_in.dim() == 2;
  EMBER_CHECK_SHAPE(
      (query_in.dim() == 3 || unbatched) && key_in.dim() == query_in.dim() && value_in.dim() == query_in.dim(), op,
      ": query, key and value must all be [L, N, E] or all [L, E], got shapes ", query_in.sizes(), ", ", key_in.sizes(),
      " and ", value_in.sizes());
  Tensor query = unbatched ? query_in.unsqueeze(1) : query_in;
  Tensor key = unbatched ? key_in.unsqueeze(1) : key_in;
  Tensor value = unbatched ? value_in.unsqueeze(1) : value_in;
  const int64_t L = query.size(0), N = query.size(1), E = query.size(2), H = o.num_heads();
  EMBER_CHECK_SHAPE(E == o.embed_dim_to_check(), op, ": query's embedding dim ", E, " is not embed_dim ",
                    o.embed_dim_to_check());
  EMBER_CHECK_VALUE(H > 0 && E % H == 0, op, ": embed_dim ", E, " must be divisible by num_heads ", H);
  EMBER_CHECK_SHAPE(key.size(0) == value.size(0) && key.size(1) == N && value.size(1) == N, op,
                    ": key and value must have the same length and query's batch ", N, ", got shapes ", key.sizes(),
                    " and ", value.sizes());
  const int64_t hd = E / H;
  Tensor q, k, v;
  const Tensor& b = o.in_proj_bias();
  auto bias_part = [&](int64_t i) { return b.defined() ? b.narrow(0, i * E, E) : Tensor(); };
  if (!o.use_separate_proj_weight()) {
    const Tensor& w = o.in_proj_weight();
    EMBER_CHECK_SHAPE(w.defined() && w.dim() == 2 && w.size(0) == 3 * E && w.size(1) == E, op,
                      ": in_proj_weight must be [", 3 * E, ", ", E, "]");
    q = nn::functional::linear(query, w.narrow(0, 0, E), bias_part(0));
    k = nn::functional::linear(key, w.narrow(0, E, E), bias_part(1));
    v = nn::functional::linear(value, w.narrow(0, 2 * E, E), bias_part(2));
  } else {
    EMBER_CHECK_VALUE(o.q_proj_weight().defined() && o.k_proj_weight().defined() && o.v_proj_weight().defined(), op,
                      ": use_separate_proj_weight needs q_proj_weight, k_proj_weight and v_proj_weight");
    q = nn::functional::linear(query, o.q_proj_weight(), bias_part(0));
    k = nn::functional::linear(key, o.k_proj_weight(), bias_part(1));
    v = nn::functional::linear(value, o.v_proj_weight(), bias_part(2));
  }
  q = q * (1.0 / std::sqrt(static_cast<double>(hd)));
  Tensor attn_mask = o.attn_mask(), kpm = o.key_padding_mask();
  if (attn_mask.defined()) {
    if (attn_mask.dim() == 2) attn_mask = attn_mask.unsqueeze(0);
    EMBER_CHECK_SHAPE(attn_mask.dim() == 3 && (attn_mask.size(0) == 1 || attn_mask.size(0) == N * H) &&
                          attn_mask.size(1) == L && attn_mask.size(2) == key.size(0),
                      op, ": attn_mask must be [", L, ", ", key.size(0), "] or [", N * H, ", ", L, ", ", key.size(0),
                      "], got shape ", o.attn_mask().sizes());
  }
  if (kpm.defined() && unbatched) kpm = kpm.unsqueeze(0);
  if (o.bias_k().defined() && o.bias_v().defined()) {
    EMBER_CHECK_VALUE(!o.static_k().defined() && !o.static_v().defined(), op,
                      ": bias_k / bias_v cannot be added to static_k / static_v");
    k = cat({k, o.bias_k().reshape({1, 1, E}).expand({1, N, E})}, 0);
    v = cat({v, o.bias_v().reshape({1, 1, E}).expand({1, N, E})}, 0);
    if (attn_mask.defined()) attn_mask = constant_pad_nd(attn_mask, {0, 1});
    if (kpm.defined()) kpm = constant_pad_nd(kpm, {0, 1});
  } else {
    EMBER_CHECK_VALUE(!o.bias_k().defined() && !o.bias_v().defined(), op, ": bias_k and bias_v go together");
  }
  q = q.reshape({L, N * H, hd}).transpose(0, 1);
  k = o.static_k().defined() ? o.static_k() : k.reshape({-1, N * H, hd}).transpose(0, 1);
  v = o.static_v().defined() ? o.static_v() : v.reshape({-1, N * H, hd}).transpose(0, 1);
  if (o.add_zero_attn()) {
    k = cat({k, zeros({N * H, 1, hd}, k.options())}, 1);
    v = cat({v, zeros({N * H, 1, hd}, v.options())}, 1);
    if (attn_mask.defined()) attn_mask = constant_pad_nd(attn_mask, {0, 1});
    if (kpm.defined()) kpm = constant_pad_nd(kpm, {0, 1});
  }
  const int64_t S = k.size(1);
  Tensor scores = bmm(q, k.transpose(1, 2));  // [N H, L, S]
  if (attn_mask.defined()) scores = masked_or_added(scores, attn_mask);
  if (kpm.defined()) {
    EMBER_CHECK_SHAPE(kpm.dim() == 2 && kpm.size(0) == N && kpm.size(1) == S, op, ": key_padding_mask must be [", N,
                      ", ", S, "], got shape ", o.key_padding_mask().sizes());
    scores = masked_or_added(scores.view({N, H, L, S}), kpm.reshape({N, 1, 1, S})).view({N * H, L, S});
  }
  Tensor weights = ember::softmax(scores, -1);
  weights = nn::functional::dropout(weights, o.dropout_p(), o.training());
  Tensor out = bmm(weights, v).transpose(0, 1).reshape({L, N, E});
  out = nn::functional::linear(out, o.out_proj_weight(), o.out_proj_bias());
  if (unbatched) out = out.squeeze(1);
  if (!o.need_weights()) return {out, Tensor()};
  Tensor w = weights.view({N, H, L, S});
  if (o.average_attn_weights()) w = w.sum({1}) / static_cast<double>(H);
  if (unbatched) w = w.squeeze(0);
  return {out, w};
}
}  // namespace functional

namespace F = functional;

MultiheadAttention::MultiheadAttention(const MultiheadAttentionOptions& o) : options(o) {
  const int64_t E = o.embed_dim();
  EMBER_CHECK_VALUE(E > 0 && o.num_heads() > 0 && E % o.num_heads() == 0, "MultiheadAttention: embed_dim ", E,
                    " must be positive and divisible by num_heads ", o.num_heads());
  head_dim = E / o.num_heads();
  _qkv_same_embed_dim = o.kdim() == E && o.vdim() == E;
  if (_qkv_same_embed_dim) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * E, E}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({E, E}));
    k_proj_weight = register_parameter("k_proj_weight", empty({E, o.kdim()}));
    v_proj_weight = register_parameter("v_proj_weight", empty({E, o.vdim()}));
  }
  if (o.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({3 * E}));
  out_proj = register_module("out_proj", std::make_shared<Linear>(LinearOptions(E, E).bias(o.bias())));
  if (o.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, E}));
    bias_v = register_parameter("bias_v", empty({1, 1, E}));
  }
  _reset_parameters();
}
void MultiheadAttention::_reset_parameters() {
  if (_qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  NoGradGuard g;
  if (in_proj_bias.defined()) {
    in_proj_bias.fill_(0);
    out_proj->bias.fill_(0);
  }
  if (bias_k.defined()) init::xavier_normal_(bias_k);
  if (bias_v.defined()) init::xavier_normal_(bias_v);
}
std::tuple<Tensor, Tensor> MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                       const Tensor& key_padding_mask, bool need_weights,
                                                       const Tensor& attn_mask, bool average_attn_weights) {
  return F::multi_head_attention_forward(
      query, key, value,
      F::MultiheadAttentionForwardFuncOptions(options.embed_dim(), options.num_heads(), in_proj_weight, in_proj_bias,
                                              bias_k, bias_v, options.add_zero_attn(), options.dropout(),
                                              out_proj->weight, out_proj->bias)
          .training(is_training())
          .key_padding_mask(key_padding_mask)
          .need_weights(need_weights)
          .attn_mask(attn_mask)
          .use_separate_proj_weight(!_qkv_same_embed_dim)
          .q_proj_weight(q_proj_weight)
          .k_proj_weight(k_proj_weight)
          .v_proj_weight(v_proj_weight)
          .average_attn_weights(average_attn_weights));
}
std::string MultiheadAttention::extra_repr() const {
  return "embed_dim=" + std::to_string(options.embed_dim()) + ", num_heads=" + std::to_string(options.num_heads());
}

TransformerActivation::TransformerActivation(RNNNonlinearity r) {
  EMBER_CHECK_VALUE(r == RNNNonlinearity::kReLU,
                    "Transformer: activation must be torch::kReLU, torch::kGELU or a "
                    "function, got torch::kTanh");
  f_ = [](const Tensor& x) { return ember::relu(x); };
}
TransformerActivation::TransformerActivation(Mode m) {
  EMBER_CHECK_VALUE(m == Mode::kGELU, "Transformer: activation must be torch::kReLU, torch::kGELU or a function, got ",
                    mode_name(m));
  f_ = [](const Tensor& x) { return ember::gelu(x); };
}

namespace {
std::shared_ptr<MultiheadAttention> attention(int64_t d, int64_t h, double p) {
  return std::make_shared<MultiheadAttention>(MultiheadAttentionOptions(d, h).dropout(p));
}
std::shared_ptr<LayerNorm> layer_norm(int64_t d) { return std::make_shared<LayerNorm>(LayerNormOptions({d})); }
std::shared_ptr<Dropout> drop(double p) { return std::make_shared<Dropout>(DropoutOptions(p)); }
// libtorch's reset_parameters of a layer: each submodule's own reset.
void reset_layer(Module& m) {
  for (auto& [name, child] : m.named_children()) {
    if (auto a = std::dynamic_pointer_cast<MultiheadAttention>(child)) a->_reset_parameters();
    if (auto l = std::dynamic_pointer_cast<Linear>(child)) l->reset_parameters();
    if (auto n = std::dynamic_pointer_cast<LayerNorm>(child)) {
      NoGradGuard g;
      n->weight.fill_(1);
      n->bias.fill_(0);
    }
  }
}
}  // namespace

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerEncoderLayerOptions& o) : options(o) {
  self_attn = register_module("self_attn", attention(o.d_model(), o.nhead(), o.dropout()));
  linear1 = register_module("linear1", std::make_shared<Linear>(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", drop(o.dropout()));
  linear2 = register_module("linear2", std::make_shared<Linear>(o.dim_feedforward(), o.d_model()));
  norm1 = register_module("norm1", layer_norm(o.d_model()));
  norm2 = register_module("norm2", layer_norm(o.d_model()));
  dropout1 = register_module("dropout1", drop(o.dropout()));
  dropout2 = register_module("dropout2", drop(o.dropout()));
}
void TransformerEncoderLayer::reset_parameters() { reset_layer(*this); }
Tensor TransformerEncoderLayer::forward(const Tensor& src, const Tensor& src_mask, const Tensor& kpm) {
  Tensor a = std::get<0>(self_attn->forward(src, src, src, kpm, false, src_mask));
  Tensor x = norm1->forward(src + dropout1->forward(a));
  Tensor f = linear2->forward(dropout->forward(options.activation()(linear1->forward(x))));
  return norm2->forward(x + dropout2->forward(f));
}

TransformerDecoderLayer::TransformerDecoderLayer(const TransformerDecoderLayerOptions& o) : options(o) {
  self_attn = register_module("self_attn", attention(o.d_model(), o.nhead(), o.dropout()));
  dropout1 = register_module("dropout1", drop(o.dropout()));
  norm1 = register_module("norm1", layer_norm(o.d_model()));
  multihead_attn = register_module("multihead_attn", attention(o.d_model(), o.nhead(), o.dropout()));
  dropout2 = register_module("dropout2", drop(o.dropout()));
  norm2 = register_module("norm2", layer_norm(o.d_model()));
  linear1 = register_module("linear1", std::make_shared<Linear>(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", drop(o.dropout()));
  linear2 = register_module("linear2", std::make_shared<Linear>(o.dim_feedforward(), o.d_model()));
  dropout3 = register_module("dropout3", drop(o.dropout()));
  norm3 = register_module("norm3", layer_norm(o.d_model()));
}
void TransformerDecoderLayer::reset_parameters() { reset_layer(*this); }
Tensor TransformerDecoderLayer::forward(Tensor tgt, const Tensor& memory, const Tensor& tgt_mask,
                                        const Tensor& memory_mask, const Tensor& tgt_kpm, const Tensor& memory_kpm) {
  Tensor a = std::get<0>(self_attn->forward(tgt, tgt, tgt, tgt_kpm, false, tgt_mask));
  tgt = norm1->forward(tgt + dropout1->forward(a));
  a = std::get<0>(multihead_attn->forward(tgt, memory, memory, memory_kpm, false, memory_mask));
  tgt = norm2->forward(tgt + dropout2->forward(a));
  Tensor f = linear2->forward(dropout->forward(options.activation()(linear1->forward(tgt))));
  return norm3->forward(tgt + dropout3->forward(f));
}

namespace {
// A fresh layer with the prototype's options and a copy of its parameters (libtorch's clone()).
template <class Layer>
std::shared_ptr<Layer> copy_of(const std::shared_ptr<Layer>& proto, const char* who) {
  EMBER_CHECK_VALUE(proto != nullptr, who, ": the layer to copy is empty");
  auto layer = std::make_shared<Layer>(proto->options);
  const Tensor first = proto->parameters().front();
  layer->to(first.device());
  layer->to(first.dtype());
  auto src = proto->named_parameters();
  auto dst = layer->named_parameters();
  NoGradGuard g;
  for (size_t i = 0; i < dst.size(); ++i) dst[i].second.copy_(src[i].second);
  return layer;
}
}  // namespace

TransformerEncoder::TransformerEncoder(const TransformerEncoderOptions& o) : options(o) {
  EMBER_CHECK_VALUE(o.num_layers() > 0, "TransformerEncoder: num_layers must be positive, got ", o.num_layers());
  layers = register_module("layers", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < o.num_layers(); ++i) layers->push_back(copy_of(o.encoder_layer(), "TransformerEncoder"));
  norm = o.norm();
  if (!norm.is_empty()) register_module("norm", norm.ptr());
}
Tensor TransformerEncoder::forward(const Tensor& src, const Tensor& mask, const Tensor& kpm) {
  Tensor x = src;
  for (const auto& m : layers->children())
    x = std::static_pointer_cast<TransformerEncoderLayer>(m)->forward(x, mask, kpm);
  return norm.is_empty() ? x : norm.forward(x);
}
TransformerDecoder::TransformerDecoder(const TransformerDecoderOptions& o) : options(o) {
  EMBER_CHECK_VALUE(o.num_layers() > 0, "TransformerDecoder: num_layers must be positive, got ", o.num_layers());
  layers = register_module("layers", std::make_shared<ModuleList>());
  for (int64_t i = 0; i < o.num_layers(); ++i) layers->push_back(copy_of(o.decoder_layer(), "TransformerDecoder"));
  norm = o.norm();
  if (!norm.is_empty()) register_module("norm", norm.ptr());
}
Tensor TransformerDecoder::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                   const Tensor& memory_mask, const Tensor& tgt_kpm, const Tensor& memory_kpm) {
  Tensor x = tgt;
  for (const auto& m : layers->children())
    x = std::static_pointer_cast<TransformerDecoderLayer>(m)->forward(x, memory, tgt_mask, memory_mask, tgt_kpm,
                                                                      memory_kpm);
  return norm.is_empty() ? x : norm.forward(x);
}

Transformer::Transformer(const TransformerOptions& o) : options(o) {
  EMBER_CHECK_VALUE(o.custom_encoder().is_empty() && o.custom_decoder().is_empty(),
                    "Transformer: custom_encoder / custom_decoder are not supported (their forward takes masks, "
                    "which a one-tensor AnyModule cannot); build TransformerEncoder / Decoder yourself");
  auto layer_opts = TransformerEncoderLayerOptions(o.d_model(), o.nhead())
                        .dim_feedforward(o.dim_feedforward())
                        .dropout(o.dropout())
                        .activation(o.activation());
  TransformerEncoderOptions eo(layer_opts, o.num_encoder_layers());
  eo.norm(AnyModule(layer_norm(o.d_model())));
  TransformerDecoderOptions d_o(layer_opts, o.num_decoder_layers());
  d_o.norm(AnyModule(layer_norm(o.d_model())));
  auto enc = std::make_shared<TransformerEncoder>(eo);
  auto dec = std::make_shared<TransformerDecoder>(d_o);
  encoder = AnyModule(register_module("encoder", enc));
  decoder = AnyModule(register_module("decoder", dec));
  reset_parameters();
}
void Transformer::reset_parameters() {
  for (auto& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}
Tensor Transformer::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask, const Tensor& tgt_mask,
                            const Tensor& memory_mask, const Tensor& src_kpm, const Tensor& tgt_kpm,
                            const Tensor& memory_kpm) {
  EMBER_CHECK_SHAPE(src.dim() == 3 && tgt.dim() == 3 && src.size(1) == tgt.size(1),
                    "Transformer: src and tgt must be "
                    "[S, N, E] and [T, N, E] with the same batch, got shapes ",
                    src.sizes(), " and ", tgt.sizes());
  EMBER_CHECK_SHAPE(src.size(2) == options.d_model() && tgt.size(2) == options.d_model(),
                    "Transformer: the feature dim of src and tgt must be d_model ", options.d_model());
  auto enc = std::static_pointer_cast<TransformerEncoder>(encoder.ptr());
  auto dec = std::static_pointer_cast<TransformerDecoder>(decoder.ptr());
  Tensor memory = enc->forward(src, src_mask, src_kpm);
  return dec->forward(tgt, memory, tgt_mask, memory_mask, tgt_kpm, memory_kpm);
}
Tensor Transformer::generate_square_subsequent_mask(int64_t sz) {
  EMBER_CHECK_VALUE(sz >= 0, "generate_square_subsequent_mask: size must be non-negative, got ", sz);
  return full({sz, sz}, -std::numeric_limits<double>::infinity()).triu(1);
}

}  // namespace nn
}  // namespace ember
