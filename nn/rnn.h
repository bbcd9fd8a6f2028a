// libtorch's recurrent modules: RNN, LSTM and GRU (multi-layer, bidirectional, batch_first,
// dropout between layers, LSTM's proj_size, unbatched inputs) and their cells, with PyTorch's
// parameter names, shapes, initialisation and gate order (LSTM: i, f, g, o; GRU: r, z, n).
// Each step is made of ember's ops (linear, sigmoid, tanh, ...), so they differentiate and run
// on the CPU and the NPU; the input projection of all time steps is one GEMM per layer.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember {
namespace nn {

enum class RNNNonlinearity { kTanh, kReLU };

struct RNNOptions {
  RNNOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(int64_t, num_layers) = 1;
  EMBER_ARG(RNNNonlinearity, nonlinearity) = RNNNonlinearity::kTanh;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(bool, batch_first) = false;
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bidirectional) = false;
};
struct LSTMOptions {
  LSTMOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(int64_t, num_layers) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(bool, batch_first) = false;
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bidirectional) = false;
  EMBER_ARG(int64_t, proj_size) = 0;
};
struct GRUOptions {
  GRUOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(int64_t, num_layers) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(bool, batch_first) = false;
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bidirectional) = false;
};
struct RNNCellOptions {
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(RNNNonlinearity, nonlinearity) = RNNNonlinearity::kTanh;
};
struct LSTMCellOptions {
  LSTMCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(bool, bias) = true;
};
using GRUCellOptions = LSTMCellOptions;

// What RNN, LSTM and GRU share: the parameters of every layer and direction
// (weight_ih_l{k}[_reverse], weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, LSTM's weight_hr_l{k}),
// drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), and the loop over them.
class RNNImplBase : public Module {
 public:
  enum class Mode { RNN_TANH, RNN_RELU, LSTM, GRU };
  void reset_parameters();
  void flatten_parameters() {}  // (cuDNN's layout; nothing to do here)
  std::vector<Tensor> all_weights() const { return flat_weights_; }
  const std::vector<Tensor>& flat_weights() const { return flat_weights_; }
  std::string extra_repr() const override;

 protected:
  RNNImplBase(Mode mode, int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias, bool batch_first,
              double dropout, bool bidirectional, int64_t proj_size);
  // output [L, B, D * H_out] (batch_first: [B, L, ...]; unbatched: [L, ...]), h_n, c_n (LSTM).
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, Tensor hx, Tensor cx);
  Mode mode_;
  int64_t input_size_, hidden_size_, num_layers_;
  bool bias_, batch_first_;
  double dropout_;
  bool bidirectional_;
  int64_t proj_size_;
  std::vector<Tensor> flat_weights_;  // per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr]
};

// Their forward returns more than a Tensor, so it hides Module's virtual forward on purpose
// (the module holder calls it directly).
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Woverloaded-virtual"
#elif defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverloaded-virtual"
#endif
class RNN : public RNNImplBase {
 public:
  RNN(int64_t input_size, int64_t hidden_size) : RNN(RNNOptions(input_size, hidden_size)) {}
  explicit RNN(const RNNOptions& options_);
  // (output, h_n); hx: [D * num_layers, B, H] (zeros when undefined).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  RNNOptions options;
};
class LSTM : public RNNImplBase {
 public:
  LSTM(int64_t input_size, int64_t hidden_size) : LSTM(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTM(const LSTMOptions& options_);
  // (output, (h_n, c_n)); hx: (h_0, c_0), zeros when not given.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = std::nullopt);
  LSTMOptions options;
};
class GRU : public RNNImplBase {
 public:
  GRU(int64_t input_size, int64_t hidden_size) : GRU(GRUOptions(input_size, hidden_size)) {}
  explicit GRU(const GRUOptions& options_);
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  GRUOptions options;
};

// One step: input [B, input_size] (or unbatched [input_size]), state [B, hidden_size].
class RNNCellImplBase : public Module {
 public:
  void reset_parameters();
  std::string extra_repr() const override;
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  RNNCellImplBase(int64_t input_size, int64_t hidden_size, bool bias, int64_t gates);
  int64_t input_size_, hidden_size_;
};
class RNNCell : public RNNCellImplBase {
 public:
  RNNCell(int64_t input_size, int64_t hidden_size) : RNNCell(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCell(const RNNCellOptions& options_);
  Tensor forward(const Tensor& input, Tensor hx = {});
  RNNCellOptions options;
};
class LSTMCell : public RNNCellImplBase {
 public:
  LSTMCell(int64_t input_size, int64_t hidden_size) : LSTMCell(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCell(const LSTMCellOptions& options_);
  std::tuple<Tensor, Tensor> forward(const Tensor& input,
                                     std::optional<std::tuple<Tensor, Tensor>> hx_opt = std::nullopt);
  LSTMCellOptions options;
};
class GRUCell : public RNNCellImplBase {
 public:
  GRUCell(int64_t input_size, int64_t hidden_size) : GRUCell(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCell(const GRUCellOptions& options_);
  Tensor forward(const Tensor& input, Tensor hx = {});
  GRUCellOptions options;
};
#if defined(__clang__)
#pragma clang diagnostic pop
#elif defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

}  // namespace nn
}  // namespace ember
