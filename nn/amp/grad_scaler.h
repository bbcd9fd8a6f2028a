// ember::amp::GradScaler: loss scaling for float16 training (torch.cuda.amp.GradScaler's rules;
// libtorch has no C++ one).
//
//   amp::GradScaler scaler;
//   scaler.scale(loss).backward();
//   scaler.unscale_(opt);              // optional: to clip the true gradients
//   nn::clip_grad_norm_(params, 1.0);
//   scaler.step(opt);                  // skipped when a gradient is inf or NaN
//   scaler.update();                   // backoff after an overflow, growth after growth_interval clean steps
#pragma once

#include <cstdint>
#include <map>

#include "ember/nn/optim/optim.h"

namespace ember {
namespace amp {

struct GradScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  bool enabled = true;
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});
  // loss * scale (a no-op when disabled).
  Tensor scale(const Tensor& loss) const;
  // Divides the optimizer's gradients by the scale and records whether any is inf/NaN.
  // Throws if called twice for the optimizer before update(), or after step().
  void unscale_(optim::Optimizer& optimizer);
  // Unscales if needed, then runs optimizer.step() unless a gradient was inf/NaN. Returns
  // whether the step ran. Throws if called twice before update().
  bool step(optim::Optimizer& optimizer);
  // Adjusts the scale: backoff_factor after an inf/NaN, growth_factor after growth_interval
  // clean steps in a row. Throws if no optimizer was unscaled or stepped since the last update.
  void update();
  double get_scale() const { return scale_; }
  int64_t growth_tracker() const { return growth_tracker_; }
  bool is_enabled() const { return opt_.enabled; }
  // Whether the last unscale_ of the optimizer found an inf or NaN.
  bool found_inf(const optim::Optimizer& optimizer) const;

 private:
  enum class Stage { Ready, Unscaled, Stepped };
  struct PerOptimizer {
    Stage stage = Stage::Ready;
    bool found_inf = false;
  };
  GradScalerOptions opt_;
  double scale_;
  int64_t growth_tracker_ = 0;
  std::map<const optim::Optimizer*, PerOptimizer> per_opt_;
};

}  // namespace amp
}  // namespace ember
