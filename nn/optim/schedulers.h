// ember::optim learning-rate schedulers with PyTorch's rules (torch.optim.lr_scheduler; libtorch
// has StepLR and ReduceLROnPlateauScheduler): StepLR, MultiStepLR, ExponentialLR and
// ReduceLROnPlateau. CosineSchedule (warmup + cosine) is in optim.h.
//
//   optim::SGD opt(model->parameters(), {0.1});
//   optim::StepLR sched(opt, /*step_size=*/30, /*gamma=*/0.1);
//   for (int epoch = 0; epoch < 90; ++epoch) { train(opt); sched.step(); }  // 0.1, 0.01, 0.001
//
//   optim::ReduceLROnPlateau plateau(opt);      // mode min, factor 0.1, patience 10
//   plateau.step(validation_loss);               // after each evaluation
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ember/nn/optim/optim.h"

namespace ember {
namespace optim {

// An epoch-indexed schedule: lr = lr_at(last_epoch), from the optimizer's lr when the scheduler
// is made (PyTorch's initial_lr). step() after each epoch (or step) advances last_epoch and sets
// the optimizer's lr.
class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;
  void step();
  double get_last_lr() const { return opt_.lr(); }
  int64_t last_epoch() const { return last_epoch_; }
  // Resumes at epoch e (e.g. after loading a checkpoint): sets the lr for it.
  void set_epoch(int64_t e);
  double base_lr() const { return base_lr_; }
  // The lr of epoch e (0: the one before any step()).
  virtual double lr_at(int64_t epoch) const = 0;

 protected:
  void start();  // sets epoch 0's lr; the derived constructor calls it once its fields are set
  Optimizer& opt_;
  double base_lr_;
  int64_t last_epoch_ = 0;
};

// lr = base_lr * gamma ^ floor(epoch / step_size).
class StepLR final : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t epoch) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = base_lr * gamma ^ (the number of milestones <= epoch); milestones increasing.
class MultiStepLR final : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);
  double lr_at(int64_t epoch) const override;

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

// lr = base_lr * gamma ^ epoch.
class ExponentialLR final : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);
  double lr_at(int64_t epoch) const override;

 private:
  double gamma_;
};

struct ReduceLROnPlateauOptions {
  std::string mode = "min";            // "min": lower is better; "max": higher is better
  double factor = 0.1;                 // new lr = lr * factor
  int64_t patience = 10;               // epochs without improvement tolerated
  double threshold = 1e-4;             // what counts as an improvement ...
  std::string threshold_mode = "rel";  // ... relative ("rel") or absolute ("abs")
  int64_t cooldown = 0;                // epochs to wait after a reduction
  double min_lr = 0.0;
  double eps = 1e-8;                   // reductions smaller than this are skipped
};

// Reduces the lr by `factor` once the metric has not improved for more than `patience` epochs.
class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options = {});
  // One epoch's metric (e.g. the validation loss). A NaN metric counts as no improvement.
  void step(double metric);
  double get_last_lr() const { return opt_.lr(); }
  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  int64_t last_epoch() const { return last_epoch_; }

 private:
  bool is_better(double a) const;
  Optimizer& opt_;
  ReduceLROnPlateauOptions o_;
  double best_;
  int64_t num_bad_epochs_ = 0, cooldown_counter_ = 0, last_epoch_ = 0;
};

}  // namespace optim
}  // namespace ember
