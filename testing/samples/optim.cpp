// Samples and float64 references for the ops of ops/optim.cpp (ember_testing: linked by tests,
// benchmarks and fuzzers only, never part of libember).
#include <algorithm>
#include <cmath>
#include "ember/ops/ops.h"
#include "ember/testing/reference.h"

namespace ember {
// ---------------------------------------------------------------- samples
namespace {
// Samples for both overloads: the .amsgrad one takes max_exp_avg_sq after exp_avg_sq (some
// elements below exp_avg_sq's update, some above, so the max is exercised both ways).
void adamw_info(testing::OpInfo& info, bool amsgrad) {
  info.samples = [amsgrad](DType dt) {
    using testing::make_tensor;
    auto sample = [dt, amsgrad](Shape shape, int64_t step, double lr, double wd, bool maximize, uint64_t seed,
                                const char* desc) {
      Stack args{make_tensor(shape, dt, -1, 1, seed), make_tensor(shape, dt, -0.1, 0.1, seed + 1),
                 make_tensor(shape, dt, 0, 0.01, seed + 2)};
      if (amsgrad) args.push_back(make_tensor(shape, dt, 0, 0.02, seed + 4));
      for (IValue v : {IValue(make_tensor(shape, dt, -1, 1, seed + 3)), IValue(full({1}, step, DType::Int64)), IValue(lr),
                       IValue(0.875), IValue(0.9990234375), IValue(wd), IValue(7.450580596923828e-09), IValue(maximize)})
        args.push_back(v);
      return testing::Sample{args, desc};
    };
    // Hyperparameters exact in float32, the type CANN's aclnnApplyAdamWV2 takes them in (so the
    // float64 samples agree between devices to float64 precision).
    // step is the updates taken before this one (the update is number step + 1).
    return std::vector<testing::Sample>{sample({5, 4}, 0, 0.0078125, 0.0078125, false, 1, "first step"),
                                        sample({7}, 9, 0.0009765625, 0.0, false, 5, "step 10, no decay"),
                                        sample({6, 3}, 1, 0.0078125, 0.0625, true, 13, "maximize"),
                                        sample({3000}, 2, 0.000244140625, 0.125, false, 9, "several blocks")};
  };
  info.reference = [amsgrad](const Stack& a) -> Stack {
    const size_t k = amsgrad ? 1 : 0;  // argument shift after exp_avg_sq
    Tensor p = testing::ref_contiguous(a[0].to_tensor(), kFloat64).clone();
    Tensor m = testing::ref_contiguous(a[1].to_tensor(), kFloat64), v = testing::ref_contiguous(a[2].to_tensor(), kFloat64);
    Tensor mx = amsgrad ? testing::ref_contiguous(a[3].to_tensor(), kFloat64) : Tensor();
    Tensor g = testing::ref_contiguous(a[3 + k].to_tensor(), kFloat64);
    double t = static_cast<double>(a[4 + k].to_tensor().item<int64_t>()) + 1;  // this update's number
    double lr = a[5 + k].to_double(), b1 = a[6 + k].to_double(), b2 = a[7 + k].to_double(), wd = a[8 + k].to_double(),
           eps = a[9 + k].to_double();
    double sign = a[10 + k].to_bool() ? -1.0 : 1.0;
    double* pp = p.data_ptr<double>();
    const double *mp = m.data_ptr<double>(), *vp = v.data_ptr<double>(), *gp = g.data_ptr<double>();
    for (int64_t i = 0; i < p.numel(); ++i) {
      double gi = sign * gp[i];
      double mi = b1 * mp[i] + (1 - b1) * gi, vi = b2 * vp[i] + (1 - b2) * gi * gi;
      double denom_v = amsgrad ? std::max(mx.data_ptr<double>()[i], vi) : vi;
      pp[i] *= 1 - lr * wd;
      pp[i] -= lr / (1 - std::pow(b1, t)) * mi / (std::sqrt(denom_v) / std::sqrt(1 - std::pow(b2, t)) + eps);
    }
    return {p.view(a[0].to_tensor().sizes())};
  };
  info.inplace = true;
  info.tol_scale = 4;
}
}  // namespace

EMBER_OP_INFO("ember::_adamw_step_", info) { adamw_info(info, false); }
EMBER_OP_INFO("ember::_adamw_step_.amsgrad", info) { adamw_info(info, true); }

}  // namespace ember
