// aclnn GroupedMatmulV3: y_g = x_g @ weight_g (+ bias_g) for each group g (the experts of a
// mixture-of-experts layer), as torch_npu's npu_grouped_matmul: groupType -1, each x and weight of
// the lists a group; groupType 0, the rows of x split into groups by groupList (cumulative row
// counts). splitItem 0 / 1: y is a list, one tensor per group; 2 / 3: one tensor, the groups'
// rows one after the other. Float16, bfloat16 and float32, computed in float64 and rounded once;
// the quantised forms (scale, offset, antiquant) and groupType 2 (split along K) are refused.
#include <algorithm>

#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

// CANN header aclnnop/aclnn_grouped_matmul_v3.h: y_g = x_g @ weight_g + bias_g per group: groupType -1 (each list entry a group) or 0 (x's rows split by groupList, int64 cumulative counts); splitItem 0 / 1: y one tensor per group, 2 / 3: one tensor of all groups' rows
extern "C" aclnnStatus aclnnGroupedMatmulV3GetWorkspaceSize(
    const aclTensorList* x, const aclTensorList* weight, const aclTensorList* biasOptional,
    const aclTensorList* scaleOptional, const aclTensorList* offsetOptional,
    const aclTensorList* antiquantScaleOptional, const aclTensorList* antiquantOffsetOptional,
    const aclTensor* groupListOptional, int64_t splitItem, int64_t groupType, const aclTensorList* y,
    uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnGroupedMatmulV3";
  if (!x) return null_arg(op, "x");
  if (!weight) return null_arg(op, "weight");
  if (!y) return null_arg(op, "y");
  if (scaleOptional || offsetOptional || antiquantScaleOptional || antiquantOffsetOptional)
    return invalid(op, "scale, offset and antiquant lists (the quantised forms) are not emulated; pass null");
  if (groupType != -1 && groupType != 0)
    return invalid(op, "groupType " + std::to_string(groupType) + " is not emulated; -1 (no split) and 0 (split along M) are");
  if (splitItem < 0 || splitItem > 3) return invalid(op, "splitItem must be 0 to 3, got " + std::to_string(splitItem));
  std::vector<const aclTensor*> xs = tensor_list(x), ws = tensor_list(weight), ys = tensor_list(y),
                                bs = tensor_list(biasOptional);
  if (xs.empty() || ws.empty() || ys.empty()) return invalid(op, "x, weight and y must not be empty lists");
  auto name = [](const char* list, size_t i) { return std::string(list) + "[" + std::to_string(i) + "]"; };
  for (auto [list, v] : {std::pair<const char*, const std::vector<const aclTensor*>*>{"x", &xs}, {"weight", &ws},
                         {"y", &ys}, {"bias", &bs}})
    for (size_t i = 0; i < v->size(); ++i) {
      const std::string n = name(list, i);
      if (aclnnStatus s = check_tensor(op, n.c_str(), (*v)[i])) return s;
    }
  const DType dt = dtype_of(xs[0]);
  if (dt != DType::Float16 && dt != DType::BFloat16 && dt != DType::Float32)
    return invalid(op, "x must be float16, bfloat16 or float32");
  for (auto v : {&xs, &ws, &ys})
    for (const aclTensor* t : *v)
      if (dtype_of(t) != dt) return invalid(op, "x, weight and y must all have x[0]'s dtype");
  const bool split_m = groupType == 0, one_y = splitItem >= 2;
  size_t G = xs.size();
  if (split_m) {
    if (!groupListOptional) return null_arg(op, "groupList");
    if (aclnnStatus s = check_tensor(op, "groupList", groupListOptional)) return s;
    if (aclnnStatus s = check_dtype(op, "groupList", groupListOptional, {DType::Int64})) return s;
    if (shape_of(groupListOptional).size() != 1) return invalid(op, "groupList must be 1-D");
    if (xs.size() != 1) return invalid(op, "groupType 0 takes one x, [M, K]");
    G = static_cast<size_t>(shape_of(groupListOptional)[0]);
  } else if (groupListOptional) {
    return invalid(op, "groupList must be null for groupType -1");
  }
  if (G == 0) return invalid(op, "there are no groups");
  for (const aclTensor* t : xs)
    if (shape_of(t).size() != 2) return invalid(op, "each x must be 2-D [M, K], got " + shape_str(shape_of(t)));
  const int64_t K = shape_of(xs[0])[1];
  // The weights: one [K, N] per group, or (groupType 0) one [G, K, N].
  const bool w3 = split_m && ws.size() == 1 && shape_of(ws[0]).size() == 3;
  if (!w3 && ws.size() != G) return invalid(op, "weight must hold one [K, N] per group (" + std::to_string(G) + ")" + (split_m ? " or one [G, K, N]" : ""));
  std::vector<int64_t> Ns(G);
  for (size_t g = 0; g < G; ++g) {
    IntArrayRef wsh = shape_of(ws[w3 ? 0 : g]);
    const bool ok = w3 ? wsh == IntArrayRef({static_cast<int64_t>(G), K, wsh[2]}) : wsh.size() == 2 && wsh[0] == shape_of(xs[split_m ? 0 : g])[1];
    if (!ok) return invalid(op, name("weight", g) + " " + shape_str(wsh) + " does not take x's K = " + std::to_string(K));
    Ns[g] = wsh.back();
    if ((one_y || split_m) && Ns[g] != Ns[0]) return invalid(op, "every group's N must agree when y or x is one tensor");
  }
  if (!bs.empty()) {
    if (bs.size() != G) return invalid(op, "bias must hold one [N] per group, or be null");
    for (size_t g = 0; g < G; ++g)
      if (shape_of(bs[g]) != IntArrayRef({Ns[g]})) return invalid(op, name("bias", g) + " must be [N]");
  }
  if (one_y ? ys.size() != 1 : ys.size() != G)
    return invalid(op, "splitItem " + std::to_string(splitItem) + " needs " + (one_y ? std::string("one y") : std::to_string(G) + " y tensors"));
  // Rows per group where phase 1 knows them (-1: from groupList when the kernel runs).
  std::vector<int64_t> rows(G, -1);
  int64_t total = 0;
  for (size_t g = 0; g < G; ++g) {
    if (!split_m) rows[g] = shape_of(xs[g])[0];
    if (!one_y) {
      IntArrayRef ysh = shape_of(ys[g]);
      if (ysh.size() != 2 || ysh[1] != Ns[g] || (rows[g] >= 0 && ysh[0] != rows[g]))
        return invalid(op, name("y", g) + " " + shape_str(ysh) + " must be [rows of group " + std::to_string(g) + ", " + std::to_string(Ns[g]) + "]");
      rows[g] = ysh[0];
    }
    total += rows[g] < 0 ? 0 : rows[g];
  }
  const int64_t M = split_m ? shape_of(xs[0])[0] : total;
  if (one_y && shape_of(ys[0]) != IntArrayRef({M, Ns[0]}))
    return invalid(op, "y " + shape_str(shape_of(ys[0])) + " must be [" + std::to_string(M) + ", " + std::to_string(Ns[0]) + "]");
  uint64_t wsb = 0;
  std::vector<F64Input> fx(xs.size()), fw(ws.size()), fb(bs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    if (aclnnStatus s = stage_f64(op, xs[i], &wsb, &fx[i])) return s;
  for (size_t i = 0; i < ws.size(); ++i)
    if (aclnnStatus s = stage_f64(op, ws[i], &wsb, &fw[i])) return s;
  for (size_t i = 0; i < bs.size(); ++i)
    if (aclnnStatus s = stage_f64(op, bs[i], &wsb, &fb[i])) return s;
  std::vector<uint64_t> outs(ys.size());
  std::vector<TensorRef> ry;
  for (size_t i = 0; i < ys.size(); ++i) {
    const std::string n = name("y", i);
    for (size_t q = 0; q < xs.size(); ++q)
      if (aclnnStatus s = check_overlap(op, n.c_str(), ys[i], {{"x", xs[q]}}, false)) return s;
    for (size_t q = 0; q < ws.size(); ++q)
      if (aclnnStatus s = check_overlap(op, n.c_str(), ys[i], {{"weight", ws[q]}}, false)) return s;
    if (aclnnStatus s = reserve_f64(op, numel_of(shape_of(ys[i])), &wsb, &outs[i])) return s;
    ry.push_back(ref(ys[i]));
  }
  TensorRef rgl = split_m ? ref(groupListOptional) : TensorRef();
  return make_executor(op, wsb, [=](KernelContext& k) {
    std::vector<int64_t> r = rows, x0(G, 0);  // each group's rows and its first row of x
    if (split_m) {  // groupList: cumulative counts, non-decreasing, within x's M
      cpu::Strided gl = k.view(rgl);
      int64_t prev = 0;
      for (size_t g = 0; g < G; ++g) {
        const int64_t end = index_value(gl, static_cast<int64_t>(g));
        EMBER_CHECK_INDEX(end >= prev && end <= M, op, ": groupList[", g, "] = ", end,
                          " is not a cumulative row count in [", prev, ", ", M, "]");
        EMBER_CHECK_INDEX(one_y || end - prev == rows[g], op, ": groupList gives group ", g, " ", end - prev,
                          " rows, but y[", g, "] has ", rows[g]);
        x0[g] = prev;
        r[g] = end - prev;
        prev = end;
      }
    }
    int64_t y_row = 0;
    for (size_t g = 0; g < G; ++g) {
      const double* a = fx[split_m ? 0 : g].load(k) + x0[g] * K;
      const double* w = fw[w3 ? 0 : g].load(k) + (w3 ? static_cast<int64_t>(g) * K * Ns[g] : 0);
      const double* b = bs.empty() ? nullptr : fb[g].load(k);
      double* o = f64_at(k, outs[one_y ? 0 : g]) + (one_y ? y_row * Ns[g] : 0);
      const int64_t N = Ns[g];
      for (int64_t m = 0; m < r[g]; ++m)
        for (int64_t n = 0; n < N; ++n) {
          double acc = b ? b[n] : 0.0;
          for (int64_t q = 0; q < K; ++q) acc += a[m * K + q] * w[q * N + n];
          o[m * N + n] = acc;
        }
      y_row += r[g];
    }
    if (one_y && y_row < M) std::fill(f64_at(k, outs[0]) + y_row * Ns[0], f64_at(k, outs[0]) + M * Ns[0], 0.0);
    for (size_t i = 0; i < ry.size(); ++i) store_f64(k, ry[i], f64_at(k, outs[i]));
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnGroupedMatmulV3)

}  // namespace npu
}  // namespace ember
