#include "ember/nn/amp/grad_scaler.h"

#include <cmath>
#include <limits>

#include "ember/autograd/grad_mode.h"
#include "ember/ops/ops.h"

namespace ember {
namespace amp {

GradScaler::GradScaler(GradScalerOptions o) : opt_(o), scale_(o.init_scale) {
  EMBER_CHECK_VALUE(o.init_scale > 0 && std::isfinite(o.init_scale), "GradScaler: init_scale must be positive, got ",
                    o.init_scale);
  EMBER_CHECK_VALUE(o.growth_factor > 1.0, "GradScaler: growth_factor must be > 1, got ", o.growth_factor);
  EMBER_CHECK_VALUE(o.backoff_factor > 0 && o.backoff_factor < 1.0, "GradScaler: backoff_factor must be in (0, 1), got ",
                    o.backoff_factor);
  EMBER_CHECK_VALUE(o.growth_interval > 0, "GradScaler: growth_interval must be positive, got ", o.growth_interval);
}

Tensor GradScaler::scale(const Tensor& loss) const {
  if (!opt_.enabled) return loss;
  EMBER_CHECK_DTYPE(loss.is_floating_point(), "GradScaler.scale: expects a floating loss, got ", loss.dtype());
  return loss * scale_;
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!opt_.enabled) return;
  PerOptimizer& st = per_opt_[&optimizer];
  EMBER_CHECK_VALUE(st.stage != Stage::Unscaled, "GradScaler.unscale_() has already been called on this optimizer since the last update()");
  EMBER_CHECK_VALUE(st.stage != Stage::Stepped, "GradScaler.unscale_() is being called after step(); call it before step()");
  NoGradGuard ng;
  double inv = 1.0 / scale_;
  // inf * 0 and NaN * 0 are NaN, finite * 0 is 0: one sum per gradient, one sync per optimizer.
  Tensor acc;
  for (const Tensor& p : optimizer.params()) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    g.mul_(inv);
    Tensor probe = (g * 0).sum().to(kFloat32);
    if (acc.defined() && probe.device() != acc.device()) probe = probe.to(acc.device());
    acc = acc.defined() ? acc + probe : probe;
  }
  st.found_inf = acc.defined() && !std::isfinite(acc.item<double>());
  st.stage = Stage::Unscaled;
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  if (!opt_.enabled) {
    optimizer.step();
    return true;
  }
  PerOptimizer& st = per_opt_[&optimizer];
  EMBER_CHECK_VALUE(st.stage != Stage::Stepped, "GradScaler.step() has already been called since the last update()");
  if (st.stage == Stage::Ready) unscale_(optimizer);
  bool run = !st.found_inf;
  if (run) optimizer.step();
  st.stage = Stage::Stepped;
  return run;
}

void GradScaler::update() {
  if (!opt_.enabled) return;
  EMBER_CHECK_VALUE(!per_opt_.empty(), "GradScaler.update(): no inf checks were recorded since the last update() "
                                       "(call unscale_() or step() first)");
  bool inf = false;
  for (const auto& kv : per_opt_) inf |= kv.second.found_inf;
  // PyTorch's _amp_update_scale_: the scale is a float32 and grows only to a finite float32 (a
  // long clean stretch never makes it inf, which would skip every later step). Backoff stops at
  // the smallest normal float32, whose inverse unscale_ multiplies by is still finite (PyTorch's
  // would reach 0 after ~150 overflowing steps in a row, and a zero scale never recovers).
  if (inf) {
    const double backed_off = scale_ * opt_.backoff_factor;
    if (backed_off >= std::numeric_limits<float>::min()) scale_ = backed_off;
    growth_tracker_ = 0;
  } else if (++growth_tracker_ == opt_.growth_interval) {
    const double grown = scale_ * opt_.growth_factor;
    if (std::isfinite(static_cast<float>(grown))) scale_ = grown;
    growth_tracker_ = 0;
  }
  per_opt_.clear();
}

bool GradScaler::found_inf(const optim::Optimizer& optimizer) const {
  auto it = per_opt_.find(&optimizer);
  return it != per_opt_.end() && it->second.found_inf;
}

}  // namespace amp
}  // namespace ember
