#include "ember/nn/optim/schedulers.h"

#include <algorithm>
#include <cmath>

#include "ember/core/error.h"

namespace ember {
namespace optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : opt_(optimizer), base_lr_(optimizer.lr()) {}

void LRScheduler::start() { opt_.set_lr(lr_at(0)); }

void LRScheduler::step() {
  ++last_epoch_;
  opt_.set_lr(lr_at(last_epoch_));
}

void LRScheduler::set_epoch(int64_t e) {
  EMBER_CHECK_VALUE(e >= 0, "LRScheduler.set_epoch: epoch must be >= 0, got ", e);
  last_epoch_ = e;
  opt_.set_lr(lr_at(e));
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  EMBER_CHECK_VALUE(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
  EMBER_CHECK_VALUE(gamma > 0 && std::isfinite(gamma), "StepLR: gamma must be positive and finite, got ", gamma);
  start();
}

double StepLR::lr_at(int64_t epoch) const {
  return base_lr_ * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  for (size_t i = 0; i < milestones_.size(); ++i)
    EMBER_CHECK_VALUE(milestones_[i] >= 0 && (i == 0 || milestones_[i] > milestones_[i - 1]),
                      "MultiStepLR: milestones must be non-negative and increasing, got ", milestones_[i],
                      i ? " after " + std::to_string(milestones_[i - 1]) : std::string());
  EMBER_CHECK_VALUE(gamma > 0 && std::isfinite(gamma), "MultiStepLR: gamma must be positive and finite, got ", gamma);
  start();
}

double MultiStepLR::lr_at(int64_t epoch) const {
  // PyTorch: gamma ** bisect_right(milestones, epoch)
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  return base_lr_ * std::pow(gamma_, static_cast<double>(passed));
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) {
  EMBER_CHECK_VALUE(gamma > 0 && std::isfinite(gamma), "ExponentialLR: gamma must be positive and finite, got ", gamma);
  start();
}

double ExponentialLR::lr_at(int64_t epoch) const { return base_lr_ * std::pow(gamma_, static_cast<double>(epoch)); }

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options)
    : opt_(optimizer), o_(std::move(options)) {
  EMBER_CHECK_VALUE(o_.mode == "min" || o_.mode == "max", "ReduceLROnPlateau: mode must be \"min\" or \"max\", got \"",
                    o_.mode, "\"");
  EMBER_CHECK_VALUE(o_.threshold_mode == "rel" || o_.threshold_mode == "abs",
                    "ReduceLROnPlateau: threshold_mode must be \"rel\" or \"abs\", got \"", o_.threshold_mode, "\"");
  EMBER_CHECK_VALUE(o_.factor > 0 && o_.factor < 1, "ReduceLROnPlateau: factor must be in (0, 1), got ", o_.factor);
  EMBER_CHECK_VALUE(o_.patience >= 0 && o_.cooldown >= 0,
                    "ReduceLROnPlateau: patience and cooldown must be >= 0, got ", o_.patience, " and ", o_.cooldown);
  EMBER_CHECK_VALUE(o_.min_lr >= 0 && o_.threshold >= 0 && o_.eps >= 0,
                    "ReduceLROnPlateau: min_lr, threshold and eps must be >= 0, got ", o_.min_lr, ", ", o_.threshold,
                    ", ", o_.eps);
  best_ = o_.mode == "min" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

bool ReduceLROnPlateau::is_better(double a) const {
  const bool rel = o_.threshold_mode == "rel";
  if (o_.mode == "min") return rel ? a < best_ * (1 - o_.threshold) : a < best_ - o_.threshold;
  return rel ? a > best_ * (1 + o_.threshold) : a > best_ + o_.threshold;
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {  // (false for NaN)
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // bad epochs in cooldown are ignored
  }
  if (num_bad_epochs_ > o_.patience) {
    const double old_lr = opt_.lr(), new_lr = std::max(old_lr * o_.factor, o_.min_lr);
    if (old_lr - new_lr > o_.eps) opt_.set_lr(new_lr);
    cooldown_counter_ = o_.cooldown;
    num_bad_epochs_ = 0;
  }
}

}  // namespace optim
}  // namespace ember
