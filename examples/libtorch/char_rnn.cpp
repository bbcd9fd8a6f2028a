// A libtorch-style character-level model on ember: an Embedding, a 2-layer torch::nn::LSTM and a
// Linear head learn the next character of the lowercase words of Debian's wamerican list (words
// joined by newlines), with Adam and gradient clipping, written against libtorch's names
// (<ember/torch.h>); then it samples words with torch::multinomial. This code is ember's own.
//
//   libtorch_char_rnn [--steps N] [--device cpu|npu:0] [--max-val-loss X] [--words FILE]
//   exits 1 if --max-val-loss is given and the validation loss (nats/char) ends above it
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include <ember/torch.h>
#include "cli.h"

namespace {

constexpr int64_t kVocab = 27;  // 0: newline (end of word), 1..26: a..z

std::vector<int64_t> read_stream(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read the word list " + path + " (install it: apt-get install wamerican)");
  std::vector<int64_t> codes;
  std::string w;
  while (std::getline(f, w)) {
    if (w.empty() || !std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; })) continue;
    for (char c : w) codes.push_back(c - 'a' + 1);
    codes.push_back(0);
  }
  return codes;
}

struct CharRNNImpl : torch::nn::Module {
  CharRNNImpl(int64_t hidden, int64_t layers)
      : embed(register_module("embed", torch::nn::Embedding(kVocab, 32))),
        lstm(register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(32, hidden).num_layers(layers)
                                                         .batch_first(true).dropout(0.1)))),
        head(register_module("head", torch::nn::Linear(hidden, kVocab))) {}
  // x: int64 [B, T] -> logits [B, T, vocab], and the LSTM's final state.
  std::tuple<torch::Tensor, std::tuple<torch::Tensor, torch::Tensor>> step(
      torch::Tensor x, torch::optional<std::tuple<torch::Tensor, torch::Tensor>> state = {}) {
    auto [out, hc] = lstm->forward(embed(x), state);
    return {head(out), hc};
  }
  torch::nn::Embedding embed{nullptr};
  torch::nn::LSTM lstm{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(CharRNN);

// `batch` windows of length t + 1 starting at random offsets of data.
torch::Tensor windows(const std::vector<int64_t>& data, int64_t batch, int64_t t, const torch::Device& dev) {
  torch::Tensor starts = torch::randint(static_cast<int64_t>(data.size()) - t - 1, {batch});
  std::vector<int64_t> out;
  for (int64_t s : starts.to_vector<int64_t>()) out.insert(out.end(), data.begin() + s, data.begin() + s + t + 1);
  return torch::tensor(out).view({batch, t + 1}).to(dev);
}

double loss_of(CharRNN& model, const torch::Tensor& w) {
  torch::NoGradGuard no_grad;
  auto logits = std::get<0>(model->step(w.slice(1, 0, -1)));
  return torch::nn::functional::cross_entropy(logits.reshape({-1, kVocab}), w.slice(1, 1).reshape({-1})).item<double>();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t steps = 300;
  double max_val_loss = -1;
  std::string device = "cpu", words = "/usr/share/dict/american-english";
  const char* usage =
      "usage: libtorch_char_rnn [--steps N] [--device cpu|npu:0] [--max-val-loss X] [--words FILE]\n"
      "  A character-level LSTM (torch::nn::LSTM, 2 layers) on the lowercase words of a word list.\n\n"
      "options:\n"
      "  --steps N         Adam steps of 32 windows of 48 characters (default 300)\n"
      "  --device D        cpu or npu:0 (default cpu)\n"
      "  --max-val-loss X  exit 1 unless the validation loss ends at or below X nats/char\n"
      "  --words FILE      the word list (default /usr/share/dict/american-english, Debian's wamerican)\n";
  const int rc = cli::parse(argc, argv, usage, [&](const std::string& k, const std::string& v) {
    if (k == "--steps") steps = std::atoll(v.c_str());
    else if (k == "--device") device = v;
    else if (k == "--max-val-loss") max_val_loss = std::atof(v.c_str());
    else if (k == "--words") words = v;
    else return false;
    return true;
  });
  if (rc >= 0) return rc;
  try {
    torch::manual_seed(1);
    torch::Device dev(device);
    std::vector<int64_t> data = read_stream(words);
    const size_t split = data.size() * 9 / 10;
    std::vector<int64_t> train(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(split));
    std::vector<int64_t> val(data.begin() + static_cast<std::ptrdiff_t>(split), data.end());
    // The unigram baseline: the entropy of the training characters' frequencies.
    std::vector<double> freq(kVocab, 0.0);
    for (int64_t c : train) freq[static_cast<size_t>(c)] += 1;
    double unigram = 0;
    for (double n : freq)
      if (n > 0) unigram -= n / static_cast<double>(train.size()) * std::log(n / static_cast<double>(train.size()));
    std::cout << "data: " << data.size() << " characters from " << words << "; unigram baseline " << std::fixed
              << std::setprecision(3) << unigram << " nats/char\n";

    CharRNN model(128, 2);
    model->to(dev);
    torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(3e-3));
    torch::Tensor val_batch = windows(val, 64, 48, dev);
    for (int64_t s = 1; s <= steps; ++s) {
      torch::Tensor w = windows(train, 32, 48, dev);
      auto logits = std::get<0>(model->step(w.slice(1, 0, -1)));
      torch::Tensor loss =
          torch::nn::functional::cross_entropy(logits.reshape({-1, kVocab}), w.slice(1, 1).reshape({-1}));
      opt.zero_grad();
      loss.backward();
      torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      opt.step();
      if (s % 50 == 0 || s == steps) {
        model->eval();
        std::cout << "step " << s << "  train " << loss.item<double>() << "  val " << loss_of(model, val_batch)
                  << " nats/char\n";
        model->train();
      }
    }
    model->eval();
    const double val_loss = loss_of(model, val_batch);
    // Sampling: feed each drawn character back with the LSTM's state.
    std::cout << "samples:";
    for (int k = 0; k < 8; ++k) {
      torch::NoGradGuard no_grad;
      std::string word;
      torch::Tensor x = torch::zeros({1, 1}, torch::TensorOptions(torch::kInt64).device(dev));
      torch::optional<std::tuple<torch::Tensor, torch::Tensor>> state;
      for (int i = 0; i < 20; ++i) {
        auto [logits, hc] = model->step(x, state);
        state = hc;
        torch::Tensor p = torch::softmax(logits.reshape({kVocab}) / 0.8, 0);
        const int64_t c = torch::multinomial(p, 1).item<int64_t>();
        if (c == 0) break;
        word += static_cast<char>('a' + c - 1);
        x = torch::full({1, 1}, c, torch::TensorOptions(torch::kInt64).device(dev));
      }
      std::cout << " " << word;
    }
    std::cout << "\nval " << val_loss << " nats/char after " << steps << " steps (unigram " << unigram << ")\n";
    if (max_val_loss > 0 && !(val_loss <= max_val_loss)) {
      std::cerr << "validation loss " << val_loss << " is above --max-val-loss " << max_val_loss << "\n";
      return 1;
    }
  } catch (const torch::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
