#include "ember/nn/rnn.h"

#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"

namespace ember {
namespace nn {
namespace F = functional;
using CellMode = RNNImplBase::Mode;

namespace {
int64_t gates_of(CellMode m) { return m == CellMode::LSTM ? 4 : m == CellMode::GRU ? 3 : 1; }
const char* name_of(CellMode m) {
  switch (m) {
    case CellMode::RNN_TANH:
    case CellMode::RNN_RELU:
      return "RNN";
    case CellMode::LSTM:
      return "LSTM";
    case CellMode::GRU:
      return "GRU";
  }
  return "RNN";
}

// One time step from the input's gates gi = x W_ih^T + b_ih and the state (h, c); returns (h', c').
std::pair<Tensor, Tensor> step(CellMode mode, const Tensor& gi, const Tensor& h, const Tensor& c, const Tensor& w_hh,
                               const Tensor& b_hh, const Tensor& w_hr) {
  Tensor gh = F::linear(h, w_hh, b_hh);
  switch (mode) {
    case CellMode::RNN_TANH:
      return {(gi + gh).tanh(), Tensor()};
    case CellMode::RNN_RELU:
      return {(gi + gh).relu(), Tensor()};
    case CellMode::LSTM: {
      std::vector<Tensor> g = (gi + gh).chunk(4, -1);
      Tensor c2 = g[1].sigmoid() * c + g[0].sigmoid() * g[2].tanh();
      Tensor h2 = g[3].sigmoid() * c2.tanh();
      return {w_hr.defined() ? F::linear(h2, w_hr) : h2, c2};
    }
    case CellMode::GRU: {
      std::vector<Tensor> a = gi.chunk(3, -1), b = gh.chunk(3, -1);
      Tensor r = (a[0] + b[0]).sigmoid(), z = (a[1] + b[1]).sigmoid();
      Tensor n = (a[2] + r * b[2]).tanh();
      return {n + z * (h - n), Tensor()};
    }
  }
  return {};
}

void init_uniform(std::vector<Tensor> params, int64_t hidden_size) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  for (Tensor& p : params) init::uniform_(p, -bound, bound);
}
}  // namespace

RNNImplBase::RNNImplBase(CellMode mode, int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias,
                         bool batch_first, double dropout, bool bidirectional, int64_t proj_size)
    : mode_(mode),
      input_size_(input_size),
      hidden_size_(hidden_size),
      num_layers_(num_layers),
      bias_(bias),
      batch_first_(batch_first),
      dropout_(dropout),
      bidirectional_(bidirectional),
      proj_size_(proj_size) {
  const char* op = name_of(mode);
  EMBER_CHECK_VALUE(input_size > 0 && hidden_size > 0 && num_layers > 0, op, ": input_size (", input_size,
                    "), hidden_size (", hidden_size, ") and num_layers (", num_layers, ") must be positive");
  EMBER_CHECK_VALUE(dropout >= 0 && dropout <= 1, op, ": dropout must be in [0, 1], got ", dropout);
  EMBER_CHECK_VALUE(proj_size >= 0 && proj_size < hidden_size, op, ": proj_size must be in [0, hidden_size), got ",
                    proj_size);
  const int64_t G = gates_of(mode) * hidden_size, D = bidirectional ? 2 : 1;
  const int64_t h_out = proj_size > 0 ? proj_size : hidden_size;
  for (int64_t l = 0; l < num_layers; ++l) {
    for (int64_t d = 0; d < D; ++d) {
      const std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      const int64_t in = l == 0 ? input_size : h_out * D;
      flat_weights_.push_back(register_parameter("weight_ih" + sfx, empty({G, in})));
      flat_weights_.push_back(register_parameter("weight_hh" + sfx, empty({G, h_out})));
      if (bias) {
        flat_weights_.push_back(register_parameter("bias_ih" + sfx, empty({G})));
        flat_weights_.push_back(register_parameter("bias_hh" + sfx, empty({G})));
      }
      if (proj_size > 0)
        flat_weights_.push_back(register_parameter("weight_hr" + sfx, empty({proj_size, hidden_size})));
    }
  }
  reset_parameters();
}

void RNNImplBase::reset_parameters() { init_uniform(flat_weights_, hidden_size_); }

std::string RNNImplBase::extra_repr() const {
  std::string s = "input_size=" + std::to_string(input_size_) + ", hidden_size=" + std::to_string(hidden_size_) +
                  ", num_layers=" + std::to_string(num_layers_);
  if (mode_ == CellMode::RNN_RELU) s += ", nonlinearity=relu";
  if (!bias_) s += ", bias=false";
  if (batch_first_) s += ", batch_first=true";
  if (dropout_ > 0) s += ", dropout=" + std::to_string(dropout_);
  if (bidirectional_) s += ", bidirectional=true";
  if (proj_size_ > 0) s += ", proj_size=" + std::to_string(proj_size_);
  return s;
}

std::tuple<Tensor, Tensor, Tensor> RNNImplBase::run(const Tensor& input, Tensor hx, Tensor cx) {
  const char* op = name_of(mode_);
  EMBER_CHECK_SHAPE(input.dim() == 2 || input.dim() == 3, op, ": expects a 2-D (unbatched) or 3-D input, got shape ",
                    input.sizes());
  const bool batched = input.dim() == 3;
  Tensor x = batched ? (batch_first_ ? input.transpose(0, 1) : input) : input.unsqueeze(1);
  EMBER_CHECK_SHAPE(x.size(2) == input_size_, op, ": input.size(-1) must be input_size (", input_size_, "), got shape ",
                    input.sizes());
  EMBER_CHECK_SHAPE(x.size(0) > 0, op, ": the input sequence is empty (shape ", input.sizes(), ")");
  const int64_t L = x.size(0), B = x.size(1), D = bidirectional_ ? 2 : 1;
  const int64_t h_out = proj_size_ > 0 ? proj_size_ : hidden_size_;
  auto state = [&](Tensor s, int64_t size, const char* what) {
    if (!s.defined()) return zeros({D * num_layers_, B, size}, x.options());
    if (!batched) {
      EMBER_CHECK_SHAPE(s.dim() == 2, op, ": for an unbatched input ", what, " must be 2-D, got shape ", s.sizes());
      s = s.unsqueeze(1);
    }
    EMBER_CHECK_SHAPE(s.dim() == 3 && s.size(0) == D * num_layers_ && s.size(1) == B && s.size(2) == size, op,
                      ": expected ", what, " of shape [", D * num_layers_, ", ", B, ", ", size, "], got ", s.sizes());
    return s;
  };
  hx = state(hx, h_out, "hidden state");
  if (mode_ == CellMode::LSTM) cx = state(cx, hidden_size_, "cell state");
  const size_t per = 2 + (bias_ ? 2 : 0) + (proj_size_ > 0 ? 1 : 0);
  std::vector<Tensor> hn, cn;
  Tensor layer_in = x;
  for (int64_t l = 0; l < num_layers_; ++l) {
    std::vector<Tensor> dir_out;
    for (int64_t d = 0; d < D; ++d) {
      const size_t k = static_cast<size_t>(l * D + d) * per;
      const Tensor& w_ih = flat_weights_[k];
      const Tensor& w_hh = flat_weights_[k + 1];
      Tensor b_ih = bias_ ? flat_weights_[k + 2] : Tensor(), b_hh = bias_ ? flat_weights_[k + 3] : Tensor();
      Tensor w_hr = proj_size_ > 0 ? flat_weights_[k + per - 1] : Tensor();
      Tensor gi = F::linear(layer_in, w_ih, b_ih);  // every step's input gates in one GEMM
      Tensor h = hx[l * D + d], c = mode_ == CellMode::LSTM ? cx[l * D + d] : Tensor();
      std::vector<Tensor> out(static_cast<size_t>(L));
      for (int64_t i = 0; i < L; ++i) {
        const int64_t t = d ? L - 1 - i : i;
        std::tie(h, c) = step(mode_, gi[t], h, c, w_hh, b_hh, w_hr);
        out[static_cast<size_t>(t)] = h;
      }
      dir_out.push_back(stack(out, 0));
      hn.push_back(h);
      if (mode_ == CellMode::LSTM) cn.push_back(c);
    }
    layer_in = D == 2 ? cat(dir_out, 2) : dir_out[0];
    if (dropout_ > 0 && is_training() && l + 1 < num_layers_) layer_in = F::dropout(layer_in, dropout_, true);
  }
  Tensor h_n = stack(hn, 0), c_n = mode_ == CellMode::LSTM ? stack(cn, 0) : Tensor();
  if (!batched) return {layer_in.squeeze(1), h_n.squeeze(1), c_n.defined() ? c_n.squeeze(1) : c_n};
  return {batch_first_ ? layer_in.transpose(0, 1) : layer_in, h_n, c_n};
}

RNN::RNN(const RNNOptions& o)
    : RNNImplBase(o.nonlinearity() == RNNNonlinearity::kTanh ? CellMode::RNN_TANH : CellMode::RNN_RELU, o.input_size(),
                  o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(), o.dropout(), o.bidirectional(), 0),
      options(o) {}
std::tuple<Tensor, Tensor> RNN::forward(const Tensor& input, Tensor hx) {
  auto r = run(input, hx, Tensor());
  return {std::get<0>(r), std::get<1>(r)};
}
LSTM::LSTM(const LSTMOptions& o)
    : RNNImplBase(CellMode::LSTM, o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(), o.dropout(),
                  o.bidirectional(), o.proj_size()),
      options(o) {}
std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTM::forward(const Tensor& input,
                                                             std::optional<std::tuple<Tensor, Tensor>> hx) {
  auto r = hx ? run(input, std::get<0>(*hx), std::get<1>(*hx)) : run(input, Tensor(), Tensor());
  return {std::get<0>(r), {std::get<1>(r), std::get<2>(r)}};
}
GRU::GRU(const GRUOptions& o)
    : RNNImplBase(CellMode::GRU, o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(), o.dropout(),
                  o.bidirectional(), 0),
      options(o) {}
std::tuple<Tensor, Tensor> GRU::forward(const Tensor& input, Tensor hx) {
  auto r = run(input, hx, Tensor());
  return {std::get<0>(r), std::get<1>(r)};
}

// ---------------------------------------------------------------- cells
RNNCellImplBase::RNNCellImplBase(int64_t input_size, int64_t hidden_size, bool bias, int64_t gates)
    : input_size_(input_size), hidden_size_(hidden_size) {
  EMBER_CHECK_VALUE(input_size > 0 && hidden_size > 0, "RNN cell: input_size (", input_size, ") and hidden_size (",
                    hidden_size, ") must be positive");
  weight_ih = register_parameter("weight_ih", empty({gates * hidden_size, input_size}));
  weight_hh = register_parameter("weight_hh", empty({gates * hidden_size, hidden_size}));
  if (bias) {
    bias_ih = register_parameter("bias_ih", empty({gates * hidden_size}));
    bias_hh = register_parameter("bias_hh", empty({gates * hidden_size}));
  }
  reset_parameters();
}
void RNNCellImplBase::reset_parameters() {
  std::vector<Tensor> ps{weight_ih, weight_hh};
  if (bias_ih.defined()) ps.insert(ps.end(), {bias_ih, bias_hh});
  init_uniform(ps, hidden_size_);
}
std::string RNNCellImplBase::extra_repr() const {
  return std::to_string(input_size_) + ", " + std::to_string(hidden_size_) + (bias_ih.defined() ? "" : ", bias=false");
}

namespace {
// The cell's input as a batch (an unbatched 1-D input gets a batch of one) and its state.
Tensor cell_input(const char* op, const Tensor& input, int64_t input_size) {
  EMBER_CHECK_SHAPE((input.dim() == 1 || input.dim() == 2) && input.size(-1) == input_size, op,
                    ": expects an input of shape [B, ", input_size, "] or [", input_size, "], got ", input.sizes());
  return input.dim() == 1 ? input.unsqueeze(0) : input;
}
Tensor cell_state(const char* op, const Tensor& s, const Tensor& x, int64_t hidden, bool batched) {
  if (!s.defined()) return zeros({x.size(0), hidden}, x.options());
  Tensor b = batched ? s : s.unsqueeze(0);
  EMBER_CHECK_SHAPE(b.dim() == 2 && b.size(0) == x.size(0) && b.size(1) == hidden, op, ": expected a state of shape [",
                    x.size(0), ", ", hidden, "], got ", s.sizes());
  return b;
}
Tensor unbatch(const Tensor& t, bool batched) { return batched ? t : t.squeeze(0); }
}  // namespace

RNNCell::RNNCell(const RNNCellOptions& o) : RNNCellImplBase(o.input_size(), o.hidden_size(), o.bias(), 1), options(o) {}
Tensor RNNCell::forward(const Tensor& input, Tensor hx) {
  Tensor x = cell_input("RNNCell", input, input_size_);
  Tensor h = cell_state("RNNCell", hx, x, hidden_size_, input.dim() == 2);
  CellMode m = options.nonlinearity() == RNNNonlinearity::kTanh ? CellMode::RNN_TANH : CellMode::RNN_RELU;
  return unbatch(step(m, F::linear(x, weight_ih, bias_ih), h, Tensor(), weight_hh, bias_hh, Tensor()).first,
                 input.dim() == 2);
}
LSTMCell::LSTMCell(const LSTMCellOptions& o)
    : RNNCellImplBase(o.input_size(), o.hidden_size(), o.bias(), 4), options(o) {}
std::tuple<Tensor, Tensor> LSTMCell::forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx) {
  Tensor x = cell_input("LSTMCell", input, input_size_);
  const bool batched = input.dim() == 2;
  Tensor h = cell_state("LSTMCell", hx ? std::get<0>(*hx) : Tensor(), x, hidden_size_, batched);
  Tensor c = cell_state("LSTMCell", hx ? std::get<1>(*hx) : Tensor(), x, hidden_size_, batched);
  auto r = step(CellMode::LSTM, F::linear(x, weight_ih, bias_ih), h, c, weight_hh, bias_hh, Tensor());
  return {unbatch(r.first, batched), unbatch(r.second, batched)};
}
GRUCell::GRUCell(const GRUCellOptions& o) : RNNCellImplBase(o.input_size(), o.hidden_size(), o.bias(), 3), options(o) {}
Tensor GRUCell::forward(const Tensor& input, Tensor hx) {
  Tensor x = cell_input("GRUCell", input, input_size_);
  Tensor h = cell_state("GRUCell", hx, x, hidden_size_, input.dim() == 2);
  return unbatch(step(CellMode::GRU, F::linear(x, weight_ih, bias_ih), h, Tensor(), weight_hh, bias_hh, Tensor()).first,
                 input.dim() == 2);
}

}  // namespace nn
}  // namespace ember
