// llama_mlp_lm: a character-level language model whose body is a stack of LLaMA MLP blocks
// (x + SwiGLU(RMSNorm(x))), trained on the lowercase words of Debian's wamerican word list on
// the emulated NPU with bf16 autocast, AdamW and a cosine schedule. The input is the previous 8
// characters (embedded and concatenated); the output is the next character or end of word.
//
// It reports the validation loss in nats/char next to count-based n-gram baselines computed here,
// samples 20 words, and writes the weights (safetensors) and the loss curve (CSV and SVG).
//
// Under mpirun it trains data-parallel: each rank on its own emulated NPU with --batch characters
// of its own (the step's batch is ranks x --batch, PyTorch's convention), the gradients averaged by
// DistributedDataParallel over HCCL; rank 0 prints and writes.
//
// Run: scripts/demo.sh   or   build/examples/llama_mlp_lm --help
//      mpirun -np 2 build/examples/llama_mlp_lm      (as root: --allow-run-as-root)
#include <ember/ember.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <random>
#include <unordered_map>

#include "common.h"

using namespace ember;
namespace F = ember::nn::functional;
namespace dist = ember::distributed;

namespace {

constexpr int64_t kVocab = 27;  // 0: word boundary, 1..26: a..z

// ---------------------------------------------------------------- data
struct Split {
  std::vector<int64_t> ctx;  // [n, context]
  std::vector<int64_t> next;  // [n]
  int64_t size() const { return static_cast<int64_t>(next.size()); }
};

std::vector<std::string> read_words(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read the word list " + path + " (install it: apt-get install wamerican)");
  std::vector<std::string> words;
  std::string w;
  while (std::getline(f, w)) {
    if (!w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; })) words.push_back(w);
  }
  return words;
}

// Every position of every word: the previous `context` characters (boundary-padded) and the next
// character (boundary after the last letter).
Split examples(const std::vector<std::string>& words, int64_t context) {
  Split s;
  for (const std::string& w : words) {
    std::vector<int64_t> codes(static_cast<size_t>(context), 0);
    for (char c : w) codes.push_back(c - 'a' + 1);
    codes.push_back(0);
    for (size_t i = static_cast<size_t>(context); i < codes.size(); ++i) {
      s.ctx.insert(s.ctx.end(), codes.begin() + static_cast<std::ptrdiff_t>(i) - context,
                   codes.begin() + static_cast<std::ptrdiff_t>(i));
      s.next.push_back(codes[i]);
    }
  }
  return s;
}

// Add-k smoothed n-gram model (n - 1 characters of context) from counts: nats/char on `test`.
double ngram_nats(const Split& train, const Split& test, int64_t context, int n, double k) {
  std::unordered_map<uint64_t, std::array<double, kVocab>> counts;
  auto key = [&](const Split& s, int64_t i) {
    uint64_t h = 0;
    for (int j = 0; j < n - 1; ++j) h = h * kVocab + static_cast<uint64_t>(s.ctx[static_cast<size_t>(i * context + context - 1 - j)]);
    return h;
  };
  for (int64_t i = 0; i < train.size(); ++i) {
    auto& c = counts.try_emplace(key(train, i)).first->second;
    c[static_cast<size_t>(train.next[static_cast<size_t>(i)])] += 1;
  }
  double nll = 0;
  for (int64_t i = 0; i < test.size(); ++i) {
    auto it = counts.find(key(test, i));
    double total = k * kVocab, hit = k;
    if (it != counts.end()) {
      for (double v : it->second) total += v;
      hit += it->second[static_cast<size_t>(test.next[static_cast<size_t>(i)])];
    }
    nll -= std::log(hit / total);
  }
  return nll / static_cast<double>(test.size());
}

// ---------------------------------------------------------------- the model
struct CharLM : nn::Module {
  int64_t context, emb_dim;
  std::shared_ptr<nn::Embedding> embed;
  std::shared_ptr<nn::ModuleList> blocks;
  std::shared_ptr<nn::RMSNorm> norm;
  std::shared_ptr<nn::Linear> head;

  CharLM(int64_t ctx, int64_t emb, int64_t d_ff, int64_t n_blocks) : context(ctx), emb_dim(emb) {
    int64_t d_model = ctx * emb;
    embed = register_module("embed", std::make_shared<nn::Embedding>(kVocab, emb));
    blocks = register_module("blocks", std::make_shared<nn::ModuleList>());
    for (int64_t b = 0; b < n_blocks; ++b) blocks->push_back(std::make_shared<nn::LlamaMLPBlock>(d_model, d_ff));
    norm = register_module("norm", std::make_shared<nn::RMSNorm>(d_model));
    head = register_module("head", std::make_shared<nn::Linear>(d_model, kVocab));
  }
  // ctx: int64 [B, context] -> logits [B, vocab]
  Tensor forward(const Tensor& ctx) override {
    Tensor x = (*embed)(ctx).reshape({ctx.size(0), context * emb_dim});
    for (const nn::ModulePtr& b : *blocks) x = (*b)(x);
    return (*head)((*norm)(x));
  }
};

// A batch of rows of a split, as device tensors.
std::pair<Tensor, Tensor> batch_of(const Split& s, const std::vector<int64_t>& rows, int64_t context, Device dev) {
  std::vector<int64_t> x(rows.size() * static_cast<size_t>(context)), y(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    std::copy_n(s.ctx.begin() + rows[r] * context, context, x.begin() + static_cast<std::ptrdiff_t>(r) * context);
    y[r] = s.next[static_cast<size_t>(rows[r])];
  }
  return {tensor(x, {static_cast<int64_t>(rows.size()), context}).to(dev), tensor(y).to(dev)};
}

// Mean loss over the split. With a process group, each rank evaluates its contiguous share of the
// rows and the sums are all-reduced (a collective: every rank calls it).
double evaluate(CharLM& model, const Split& s, Device dev, bool autocast, int64_t batch) {
  NoGradGuard ng;
  model.eval();
  const int64_t ranks = dist::is_initialized() ? dist::get_world_size() : 1, rank = dist::is_initialized() ? dist::get_rank() : 0;
  const int64_t lo = s.size() * rank / ranks, hi = s.size() * (rank + 1) / ranks;
  Tensor total = zeros({1}, dev);
  for (int64_t start = lo; start < hi; start += batch) {
    std::vector<int64_t> rows;
    for (int64_t i = start; i < std::min(hi, start + batch); ++i) rows.push_back(i);
    auto [x, y] = batch_of(s, rows, model.context, dev);
    amp::AutocastGuard g(dev.type(), kBFloat16, autocast);
    total = total + F::cross_entropy(model(x), y).to(kFloat32) * static_cast<double>(rows.size());
  }
  if (ranks > 1) dist::all_reduce(total, dist::ReduceOp::SUM);
  model.train();
  return total.item<double>() / static_cast<double>(s.size());
}

std::vector<std::string> sample_words(CharLM& model, Device dev, int n, double temperature, uint64_t seed) {
  NoGradGuard ng;
  model.eval();
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int64_t>> ctx(static_cast<size_t>(n), std::vector<int64_t>(static_cast<size_t>(model.context), 0));
  std::vector<std::string> words(static_cast<size_t>(n));
  std::vector<bool> done(static_cast<size_t>(n), false);
  for (int step = 0; step < 24; ++step) {
    std::vector<int64_t> flat;
    for (const auto& c : ctx) flat.insert(flat.end(), c.begin(), c.end());
    Tensor logits = model(tensor(flat, {n, model.context}).to(dev)).to(kFloat64) / temperature;
    std::vector<double> p = logits.softmax(1).cpu().to_vector<double>();
    for (int i = 0; i < n; ++i) {
      if (done[static_cast<size_t>(i)]) continue;
      std::discrete_distribution<int> pick(p.begin() + i * kVocab, p.begin() + (i + 1) * kVocab);
      int c = pick(rng);
      if (c == 0) {
        done[static_cast<size_t>(i)] = true;
        continue;
      }
      words[static_cast<size_t>(i)] += static_cast<char>('a' + c - 1);
      auto& cx = ctx[static_cast<size_t>(i)];
      cx.erase(cx.begin());
      cx.push_back(c);
    }
  }
  model.train();
  return words;
}

}  // namespace

int main(int argc, char** argv) {
  const double wall0 = demo::now_seconds();  // the summary's wall time: set-up, training, validation, outputs
  try {
    demo::Args args(argc, argv,
                    "usage: llama_mlp_lm [options]\n"
                    "  Trains a character-level language model made of LLaMA MLP blocks on the lowercase words of\n"
                    "  /usr/share/dict/american-english (90/10 split, fixed seed), on the emulated NPU in bf16, and\n"
                    "  reports validation nats/char beside n-gram baselines. Under mpirun, data-parallel: each rank\n"
                    "  on its own NPU with --batch characters of every step; rank 0 prints and writes.");
    std::string words_path = args.get("words", std::string("/usr/share/dict/american-english"), "word list, one word per line");
    std::string device = args.get("device", std::string("npu"), "cpu, npu:N, or npu: npu:0 (under mpirun, npu:<local rank>)");
    std::string dtype = args.get("dtype", std::string("bf16"), "autocast dtype: bf16, fp16 or fp32 (no autocast)");
    double budget = args.get("time", 170.0, "training time budget in seconds (the schedule is fitted to it)");
    int64_t fixed_steps = args.get("steps", int64_t(0), "train exactly this many steps instead (0: use --time)");
    int64_t batch = args.get("batch", int64_t(512), "characters per step and rank (under mpirun the step's batch is ranks x this, as with PyTorch's DDP)");
    int64_t context = args.get("context", int64_t(8), "characters of context");
    int64_t emb = args.get("emb", int64_t(32), "embedding size per character (d_model = context * emb)");
    int64_t d_ff = args.get("d-ff", int64_t(1024), "hidden size of each SwiGLU");
    int64_t n_blocks = args.get("blocks", int64_t(2), "LLaMA MLP blocks");
    double lr = args.get("lr", 3e-3, "peak learning rate (AdamW)");
    double wd = args.get("weight-decay", 0.1, "AdamW weight decay");
    int64_t warmup = args.get("warmup", int64_t(200), "warmup steps");
    uint64_t seed = static_cast<uint64_t>(args.get("seed", int64_t(1234), "seed for the split, init and batches"));
    std::string out = args.get("out", std::string("llama_mlp_lm_out"), "output directory");
    double max_val = args.get("max-val-loss", 0.0, "fail (exit status 3) if the final validation loss is above this (0: no check)");
    bool profile = args.flag("profile", "profile steps 22..25 (between the loss reports, which synchronize): a Chrome trace, its key_averages table and an SVG timeline in the output directory");
    if (!args.finish()) return 0;
    if (dtype != "bf16" && dtype != "fp16" && dtype != "fp32") throw std::invalid_argument("--dtype: bf16, fp16 or fp32");

    // ---- processes: under mpirun, one rank per NPU, gradients averaged over HCCL (cpu: MPI)
    const bool distributed = dist::launched_by_mpirun();
    Device dev(device);
    if (device == "npu") dev = Device(DeviceType::NPU, distributed ? dist::local_rank() % npu::device_count() : 0);
    std::optional<npu::DeviceGuard> on_device;
    if (dev.type() == DeviceType::NPU) on_device.emplace(dev.index());
    std::streambuf* const cout_buf = std::cout.rdbuf();
    int64_t rank = 0, ranks = 1;
    if (distributed) {
      dist::init_process_group(dev.type() == DeviceType::NPU ? "hccl" : "mpi");
      rank = dist::get_rank(), ranks = dist::get_world_size();
      if (rank != 0) std::cout.rdbuf(nullptr);  // rank 0 reports for all
    }
    const int64_t global_batch = batch * ranks;
    bool autocast = dtype != "fp32";
    DType low = dtype == "fp16" ? kFloat16 : kBFloat16;

    // ---- data
    std::vector<std::string> words = read_words(words_path);
    std::mt19937_64 rng(seed);
    std::shuffle(words.begin(), words.end(), rng);
    size_t n_train = words.size() * 9 / 10;
    Split train = examples({words.begin(), words.begin() + static_cast<std::ptrdiff_t>(n_train)}, context);
    Split val = examples({words.begin() + static_cast<std::ptrdiff_t>(n_train), words.end()}, context);
    std::cout << "data: " << words.size() << " lowercase words from " << words_path << "; " << train.size()
              << " training and " << val.size() << " validation characters (90/10 split of the words)\n";
    double bigram = NAN, trigram = NAN;  // rank 0's to print
    if (rank == 0) bigram = ngram_nats(train, val, context, 2, 0.1), trigram = ngram_nats(train, val, context, 3, 0.1);
    std::cout << std::fixed << std::setprecision(3) << "baselines on validation (add-0.1 counts): bigram " << bigram
              << " nats/char, trigram " << trigram << " nats/char\n";

    // ---- model
    manual_seed(seed);
    auto model = std::make_shared<CharLM>(context, emb, d_ff, n_blocks);
    model->to(dev);
    std::cout << "model on " << dev << (autocast ? " with " + dtype + " autocast" : " in fp32") << ":\n" << *model << "\n";
    // The module trained: the model itself, or under mpirun the model wrapped by DDP (which
    // broadcasts rank 0's weights and averages the gradients over the ranks in backward).
    nn::ModulePtr trained = model;
    if (distributed) {
      trained = std::make_shared<nn::parallel::DistributedDataParallel>(model);
      std::cout << "data-parallel over " << ranks << " ranks (" << (dev.type() == DeviceType::NPU ? "hccl" : "mpi")
                << "), each on its own " << dev.type() << " with " << batch << " of the " << global_batch << " characters of a step\n";
    }
    optim::AdamW opt(trained->parameters(), {lr, {0.9, 0.99}, 1e-8, wd});
    int64_t total = fixed_steps > 0 ? fixed_steps : std::max<int64_t>(warmup + 1, 1000000);
    optim::CosineSchedule sched(opt, std::min(warmup, total), total, lr * 0.05);

    // ---- train
    mkdir(out.c_str(), 0755);
    if (profile && rank == 0) profiler::profile_steps(out + "/llama_mlp_lm_trace.json", 22, 25);
    demo::ProgressBar bar(fixed_steps > 0 ? total : 0, "tok");
    std::uniform_int_distribution<int64_t> pick(0, train.size() - 1);
    rng.seed(seed + 7919 * static_cast<uint64_t>(rank + 1));  // each rank draws its own rows
    std::vector<std::vector<double>> curve;  // step, seconds, lr, train loss, val loss
    Tensor loss_acc;
    int64_t acc_n = 0, step = 0;
    double shown = NAN, t0 = demo::now_seconds(), calib_t = 0;
    int64_t calib_step = 0, next_eval = 500;
    const int64_t kCalib = 40, kReport = 20;
    while (step < total) {
      std::vector<int64_t> rows(static_cast<size_t>(batch));
      for (auto& r : rows) r = pick(rng);
      auto [x, y] = batch_of(train, rows, context, dev);
      Tensor loss;
      {
        amp::AutocastGuard g(dev.type(), low, autocast);
        loss = F::cross_entropy((*trained)(x), y);
      }
      opt.zero_grad();
      loss.backward();
      opt.step();
      sched.step();
      profiler::step();  // EMBER_PROFILE=trace.json profiles steps 10..20 of any run
      ++step;
      loss_acc = loss_acc.defined() ? loss_acc + loss.detach() : loss.detach();
      ++acc_n;
      if (step % kReport == 0 || step == total) {
        if (distributed) dist::all_reduce(loss_acc, dist::ReduceOp::AVG);  // the loss over the whole batch
        shown = loss_acc.item<double>() / static_cast<double>(acc_n);  // one sync every kReport steps
        // Validation about every tenth of the run (not timed as training).
        double v = NAN;
        if (step >= next_eval && step < total && step > kCalib) {
          double e0 = demo::now_seconds();
          v = evaluate(*model, val, dev, autocast, 4096);
          t0 += demo::now_seconds() - e0;
          calib_t += demo::now_seconds() - e0;
          next_eval = step + std::max<int64_t>(kReport, total / 10);
        }
        curve.push_back({static_cast<double>(step), demo::now_seconds() - t0, opt.lr(), shown, v});
        loss_acc = Tensor();
        acc_n = 0;
      }
      // --time is a budget for training: one process stops as soon as it is spent; ranks stop at
      // the step count rank 0 fitted at the last refit point (they must run the same steps).
      if (fixed_steps == 0 && !distributed && demo::now_seconds() - t0 >= budget) total = step;
      if (fixed_steps == 0 && step == 10) calib_t = demo::now_seconds(), calib_step = step;
      const bool refit_point = fixed_steps == 0 && (step == kCalib || (step > kCalib && step % 500 == 0));
      if (refit_point && (step == kCalib || 2 * (demo::now_seconds() - t0) < budget)) {
        // Fit the schedule to the time budget from the measured step time (refined as it goes:
        // the first steps are slower while kernels and the allocator warm up).
        double per_step = (demo::now_seconds() - calib_t) / static_cast<double>(step - calib_step);
        double left = budget - (demo::now_seconds() - t0);
        total = std::max<int64_t>(step + 1, step + static_cast<int64_t>(left / per_step));
        calib_t = demo::now_seconds(), calib_step = step;
      }
      if (refit_point && distributed) {  // every rank must run the same steps: rank 0's count wins
        Tensor t = tensor(std::vector<int64_t>{total}).to(dev);
        dist::broadcast(t, 0);
        total = t.item<int64_t>();
      }
      if (refit_point) {
        sched.set_total_steps(std::max(total, warmup));  // a budget shorter than the warmup ends inside it
        bar.set_total(total);
      }
      bar.update(step, shown, global_batch);
    }
    bar.finish();
    double train_s = demo::now_seconds() - t0;  // (t0 moved past each validation: training alone)
    const double chars_per_s = train_s > 0 ? static_cast<double>(step * global_batch) / train_s : 0.0;
    double val_loss = evaluate(*model, val, dev, autocast, 4096);
    if (!curve.empty()) curve.back()[4] = val_loss;
    // The step against this machine's bound (ember/device/roofline.h): the blocks' and the head's
    // GEMM FLOPs at the measured peak of the fastest unit for them, plus the blocks' element-wise
    // passes and AdamW's bytes at the measured bandwidth (none where no unit can be measured).
    // One process only: under mpirun the ranks share the machine and the step includes the
    // all-reduce.
    double of_bound = NAN, bound_ms = NAN;
    const DType gemm_dtype = autocast ? low : kFloat32;
    if (ranks == 1 && step > 0 && rank == 0 && roofline::has_unit(roofline::gemm_unit(gemm_dtype))) {
      roofline::Cost cost;
      for (int64_t b = 0; b < n_blocks; ++b)
        cost += roofline::llama_mlp_block(batch, context * emb, d_ff, gemm_dtype);
      cost += roofline::linear_layer(batch, context * emb, kVocab);
      int64_t params = 0;
      for (const Tensor& p : model->parameters()) params += p.numel();
      cost += roofline::adamw(params);
      bound_ms = 1e3 * roofline::bound_seconds(cost, gemm_dtype);
      of_bound = bound_ms / (1e3 * train_s / static_cast<double>(step));
    }

    // ---- outputs (rank 0's)
    if (rank != 0) {  // (every rank has the same validation loss: rank 0 checks it)
      dist::destroy_process_group();
      std::cout.rdbuf(cout_buf);
      return 0;
    }
    std::string weights = out + "/llama_mlp_lm.safetensors", csv = out + "/llama_mlp_lm_loss.csv",
                svg = out + "/llama_mlp_lm_loss.svg";
    nn::save(*model, weights);
    demo::write_csv(csv, "step,seconds,lr,train_loss,val_loss", curve);
    demo::Series tr{"train (nats/char)", "#1f77b4", {}}, bg{"bigram", "#999999", {}}, tg{"trigram", "#555555", {}},
        vl{"validation", "#d62728", {}};
    for (const auto& r : curve) {
      if (r[0] >= 100) tr.points.emplace_back(r[0], r[3]);  // skip the first steps' large losses
      if (!std::isnan(r[4])) vl.points.emplace_back(r[0], r[4]);
    }
    double last = curve.empty() ? 0 : curve.back()[0];
    bg.points = {{0, bigram}, {last, bigram}};
    tg.points = {{0, trigram}, {last, trigram}};
    demo::write_svg(svg, "llama_mlp_lm: loss per character", "step", "nats/char", {tr, bg, tg, vl});

    std::cout << "\n20 sampled words:";
    for (const std::string& w : sample_words(*model, dev, 20, 0.8, seed)) std::cout << " " << w;
    std::cout << "\n\n== summary ==\n"
              << "validation loss: " << std::setprecision(3) << val_loss << " nats/char   (bigram " << bigram
              << ", trigram " << trigram << ")\n"
              << "trained " << step << " steps in " << std::setprecision(1) << train_s << " s on " << dev
              << (ranks > 1 ? " and " + std::to_string(ranks - 1) + " more rank(s)" : std::string()) << " (" << dtype
              << "), " << std::setprecision(1) << chars_per_s / 1000
              << "k characters/s (training only: the periodic validation is not counted)\n";
    if (!std::isnan(of_bound))
      std::cout << "step " << std::setprecision(2) << 1e3 * train_s / static_cast<double>(step) << " ms, of_bound "
                << of_bound << " (this machine's bound for the step: " << bound_ms << " ms, README \"Benchmarks\")\n";
    std::cout << "wrote " << weights << ", " << csv << ", " << svg << "\n"
              << "wall time " << std::setprecision(1) << demo::now_seconds() - wall0
              << " s (data, training, validation, sampling and writing)\n";
    if (distributed) dist::destroy_process_group();
    if (max_val > 0 && !(val_loss <= max_val)) {
      std::cerr << "llama_mlp_lm: validation loss " << val_loss << " is above --max-val-loss " << max_val << "\n";
      return 3;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "\nllama_mlp_lm: " << e.what() << "\n";
    return 1;
  }
}
