// aclnn attention: FusedInferAttentionScoreV2 and RecurrentGatedDeltaRule (linear attention).
//
// FusedInferAttentionScoreV2: softmax(scale Q K^T + pseShift, masked) V per batch and head,
// with grouped KV heads, in float64, the output rounded once. What the emulator covers of CANN's
// argument list: layouts BSND, BNSD and BSH, one key and one value tensor, pseShift, attenMask,
// sparseMode 0 with preTokens / nextTokens as a band, softmaxLse; the quantised, paged (blockTable),
// padded, shared-prefix and per-batch-length arguments must be null (refused with a message).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ember/device/npu/aclnn_common.h"

namespace ember {
namespace npu {

using namespace ops;

namespace {

// Where element (b, s, n, d) of a [B, S, N, D]-shaped problem lies in a tensor of this layout.
struct Layout {
  bool bnsd = false;  // else BSND / BSH
  int64_t B = 0, S = 0, N = 0, D = 0;
  int64_t at(int64_t b, int64_t s, int64_t n, int64_t d) const {
    return bnsd ? ((b * N + n) * S + s) * D + d : ((b * S + s) * N + n) * D + d;
  }
};

// The layout of t for inputLayout with N heads: its B, S, D (or an error).
aclnnStatus layout_of(const char* op, const char* name, const aclTensor* t, const std::string& layout, int64_t N,
                      Layout* l) {
  IntArrayRef s = shape_of(t);
  l->N = N;
  if (layout == "BSH") {
    if (s.size() != 3 || N <= 0 || s[2] % N)
      return invalid(op, std::string(name) + " " + shape_str(s) + " must be [B, S, H] with H a multiple of " + std::to_string(N));
    l->B = s[0], l->S = s[1], l->D = s[2] / N;
    return ACLNN_SUCCESS;
  }
  if (s.size() != 4) return invalid(op, std::string(name) + " " + shape_str(s) + " must be 4-D for layout " + layout);
  l->bnsd = layout == "BNSD";
  l->B = s[0];
  l->S = l->bnsd ? s[2] : s[1];
  l->D = s[3];
  const int64_t n = l->bnsd ? s[1] : s[2];
  if (n != N)
    return invalid(op, std::string(name) + " " + shape_str(s) + " has " + std::to_string(n) + " heads, expected " +
                           std::to_string(N));
  return ACLNN_SUCCESS;
}

}  // namespace

// CANN header aclnnop/aclnn_fused_infer_attention_score_v2.h: attentionOut = softmax(scaleValue Q K^T + pseShift, with attenMask's true positions and those outside the preTokens / nextTokens band removed) V, per batch and head; numKeyValueHeads heads of K and V each serve numHeads / numKeyValueHeads query heads; softmaxLse (float32, [B, N, S, 1]) the log-sum-exp of each row when softmaxLseFlag
extern "C" aclnnStatus aclnnFusedInferAttentionScoreV2GetWorkspaceSize(
    const aclTensor* query, const aclTensorList* key, const aclTensorList* value, const aclTensor* pseShiftOptional,
    const aclTensor* attenMaskOptional, const aclIntArray* actualSeqLengthsOptional,
    const aclIntArray* actualSeqLengthsKvOptional, const aclTensor* deqScale1Optional,
    const aclTensor* quantScale1Optional, const aclTensor* deqScale2Optional, const aclTensor* quantScale2Optional,
    const aclTensor* quantOffset2Optional, const aclTensor* antiquantScaleOptional,
    const aclTensor* antiquantOffsetOptional, const aclTensor* blockTableOptional,
    const aclTensor* queryPaddingSizeOptional, const aclTensor* kvPaddingSizeOptional,
    const aclTensor* keyAntiquantScaleOptional, const aclTensor* keyAntiquantOffsetOptional,
    const aclTensor* valueAntiquantScaleOptional, const aclTensor* valueAntiquantOffsetOptional,
    const aclTensor* keySharedPrefixOptional, const aclTensor* valueSharedPrefixOptional,
    const aclIntArray* actualSharedPrefixLenOptional, int64_t numHeads, double scaleValue, int64_t preTokens,
    int64_t nextTokens, char* inputLayout, int64_t numKeyValueHeads, int64_t sparseMode, int64_t innerPrecise,
    int64_t blockSize, int64_t antiquantMode, bool softmaxLseFlag, int64_t keyAntiquantMode, int64_t valueAntiquantMode,
    const aclTensor* attentionOut, const aclTensor* softmaxLse, uint64_t* workspaceSize, aclOpExecutor** executor) {
  const char* op = "aclnnFusedInferAttentionScoreV2";
  if (aclnnStatus s = check_not_null(op, {{"query", query}, {"key", key}, {"value", value}, {"attentionOut", attentionOut}}))
    return s;
  if (!inputLayout) return null_arg(op, "inputLayout");
  // What the emulator does not model: named, so a caller knows why it is refused.
  const std::pair<const char*, const void*> unsupported[] = {
      {"actualSeqLengths", actualSeqLengthsOptional}, {"actualSeqLengthsKv", actualSeqLengthsKvOptional},
      {"deqScale1", deqScale1Optional}, {"quantScale1", quantScale1Optional}, {"deqScale2", deqScale2Optional},
      {"quantScale2", quantScale2Optional}, {"quantOffset2", quantOffset2Optional},
      {"antiquantScale", antiquantScaleOptional}, {"antiquantOffset", antiquantOffsetOptional},
      {"blockTable", blockTableOptional}, {"queryPaddingSize", queryPaddingSizeOptional},
      {"kvPaddingSize", kvPaddingSizeOptional}, {"keyAntiquantScale", keyAntiquantScaleOptional},
      {"keyAntiquantOffset", keyAntiquantOffsetOptional}, {"valueAntiquantScale", valueAntiquantScaleOptional},
      {"valueAntiquantOffset", valueAntiquantOffsetOptional}, {"keySharedPrefix", keySharedPrefixOptional},
      {"valueSharedPrefix", valueSharedPrefixOptional}, {"actualSharedPrefixLen", actualSharedPrefixLenOptional}};
  for (const auto& [name, p] : unsupported)
    if (p) return invalid(op, std::string(name) + " is not emulated (per-batch lengths, quantisation, paged KV, padding and shared prefixes are not); pass null");
  if (sparseMode != 0) return invalid(op, "sparseMode " + std::to_string(sparseMode) + " is not emulated; only 0 is");
  if (antiquantMode || keyAntiquantMode || valueAntiquantMode || blockSize)
    return invalid(op, "antiquant modes and blockSize must be 0 (no quantised or paged KV)");
  if (innerPrecise < 0 || innerPrecise > 3) return invalid(op, "innerPrecise must be 0 to 3, got " + std::to_string(innerPrecise));
  const std::string layout(inputLayout);
  if (layout != "BSND" && layout != "BNSD" && layout != "BSH")
    return invalid(op, "inputLayout '" + layout + "' is not emulated; BSND, BNSD and BSH are");
  std::vector<const aclTensor*> ks = tensor_list(key), vs = tensor_list(value);
  if (ks.size() != 1 || vs.size() != 1)
    return invalid(op, "key and value must hold one tensor each (a list per batch is not emulated), got " +
                           std::to_string(ks.size()) + " and " + std::to_string(vs.size()));
  const aclTensor *k = ks[0], *v = vs[0];
  if (aclnnStatus s = check_all(op, {{"query", query}, {"key", k}, {"value", v}, {"attentionOut", attentionOut}})) return s;
  if (aclnnStatus s = check_dtype(op, "query", query, {DType::Float16, DType::BFloat16})) return s;
  if (dtype_of(k) != dtype_of(query) || dtype_of(v) != dtype_of(query) || dtype_of(attentionOut) != dtype_of(query))
    return invalid(op, "key, value and attentionOut must have query's dtype");
  if (numHeads <= 0) return invalid(op, "numHeads must be positive, got " + std::to_string(numHeads));
  const int64_t kvh = numKeyValueHeads == 0 ? numHeads : numKeyValueHeads;
  if (kvh <= 0 || numHeads % kvh)
    return invalid(op, "numKeyValueHeads " + std::to_string(numKeyValueHeads) + " must divide numHeads " + std::to_string(numHeads));
  Layout lq, lk, lv;
  if (aclnnStatus s = layout_of(op, "query", query, layout, numHeads, &lq)) return s;
  if (aclnnStatus s = layout_of(op, "key", k, layout, kvh, &lk)) return s;
  if (aclnnStatus s = layout_of(op, "value", v, layout, kvh, &lv)) return s;
  if (lk.B != lq.B || lv.B != lq.B || lk.S != lv.S || lk.D != lq.D)
    return invalid(op, "query " + shape_str(shape_of(query)) + ", key " + shape_str(shape_of(k)) + " and value " +
                           shape_str(shape_of(v)) + " do not agree on batch, KV length or head size");
  const int64_t B = lq.B, S = lq.S, N = numHeads, D = lq.D, S2 = lk.S, Dv = lv.D;
  if (Dv != D) return invalid(op, "value's head size " + std::to_string(Dv) + " must be query's " + std::to_string(D));
  if (aclnnStatus s = check_shape(op, "attentionOut", attentionOut, shape_of(query))) return s;
  std::vector<int64_t> score_shape{B, N, S, S2};
  if (pseShiftOptional) {
    if (aclnnStatus s = check_tensor(op, "pseShift", pseShiftOptional)) return s;
    if (dtype_of(pseShiftOptional) != dtype_of(query)) return invalid(op, "pseShift must have query's dtype");
    IntArrayRef ps = shape_of(pseShiftOptional);
    if (ps.size() != 4 || (ps[0] != B && ps[0] != 1) || ps[1] != N || ps[2] != S || ps[3] != S2)
      return invalid(op, "pseShift " + shape_str(ps) + " must be [B or 1, N, S, S2] = " + shape_str(IntArrayRef(score_shape)));
  }
  if (attenMaskOptional) {
    if (aclnnStatus s = check_tensor(op, "attenMask", attenMaskOptional)) return s;
    if (aclnnStatus s = check_dtype(op, "attenMask", attenMaskOptional, {DType::Bool, DType::Int8, DType::UInt8})) return s;
    IntArrayRef ms = shape_of(attenMaskOptional);
    std::vector<int64_t> b, one_head{B, 1, S, S2};
    if (!broadcast(ms, IntArrayRef(one_head), &b) || IntArrayRef(b) != IntArrayRef(one_head) || ms.size() < 2)
      return invalid(op, "attenMask " + shape_str(ms) + " must be [S, S2] or [B or 1, 1, S, S2] for scores " +
                             shape_str(IntArrayRef(score_shape)));
  }
  if (softmaxLseFlag) {
    if (aclnnStatus s = check_not_null(op, "softmaxLse", softmaxLse)) return s;
    if (aclnnStatus s = check_tensor(op, "softmaxLse", softmaxLse)) return s;
    if (aclnnStatus s = check_dtype(op, "softmaxLse", softmaxLse, {DType::Float32})) return s;
    if (aclnnStatus s = check_shape(op, "softmaxLse", softmaxLse, {B, N, S, 1})) return s;
  }
  if (aclnnStatus s = check_overlap(op, "attentionOut", attentionOut, {{"query", query}, {"key", k}, {"value", v}}, false))
    return s;
  uint64_t wsb = 0, o_at = 0, l_at = 0, m_at = 0;
  F64Input fq, fk, fv, fp, fm;
  if (aclnnStatus s = stage_f64(op, query, &wsb, &fq)) return s;
  if (aclnnStatus s = stage_f64(op, k, &wsb, &fk)) return s;
  if (aclnnStatus s = stage_f64(op, v, &wsb, &fv)) return s;
  if (aclnnStatus s = stage_f64(op, pseShiftOptional, &wsb, &fp)) return s;
  const int64_t scores = numel_of(IntArrayRef(score_shape));
  if (attenMaskOptional)
    if (aclnnStatus s = stage_f64(op, attenMaskOptional, &wsb, &fm, scores / N)) return s;
  if (aclnnStatus s = reserve_f64(op, numel_of(shape_of(query)), &wsb, &o_at)) return s;
  if (aclnnStatus s = reserve_f64(op, B * N * S, &wsb, &l_at)) return s;
  // Per worker: the row's probabilities, and its head's K and V gathered contiguous ([S2, D]).
  const int64_t heads = B * N, per_block = S2 + 2 * S2 * D + D;
  const uint32_t blocks = static_cast<uint32_t>(std::min<int64_t>(heads, 8));  // (EMBER_NPU_CORES' default)
  if (aclnnStatus s = reserve_f64(op, per_block * blocks, &wsb, &m_at)) return s;
  TensorRef ro = ref(attentionOut), rl = softmaxLse && softmaxLseFlag ? ref(softmaxLse) : TensorRef();
  const bool pse_batched = pseShiftOptional && shape_of(pseShiftOptional)[0] == B && B > 1;
  const bool has_pse = pseShiftOptional, has_mask = attenMaskOptional, lse = softmaxLseFlag;
  const std::vector<int64_t> mask_shape{B, 1, S, S2};
  const int64_t group = N / kvh;
  return make_executor(op, wsb, [=](KernelContext& c) {
    const double *q = fq.load(c), *kk = fk.load(c), *vv = fv.load(c), *pse = fp.load(c);
    const double* mask = has_mask ? fm.load(c, IntArrayRef(mask_shape)) : nullptr;
    double *out = f64_at(c, o_at), *lses = f64_at(c, l_at);
    // The (b, n) heads split over the cores; each writes only its own rows.
    c.launch(blocks, [&](uint32_t blk, uint32_t nblk) {
      double* p = f64_at(c, m_at) + per_block * blk;
      double *Kh = p + S2, *Vh = Kh + S2 * D, *Qr = Vh + S2 * D;
      for (int64_t h = blk; h < heads; h += nblk) {
        const int64_t b = h / N, n = h % N, kn = n / group;
        for (int64_t j = 0; j < S2; ++j)
          for (int64_t d = 0; d < D; ++d) {
            Kh[j * D + d] = kk[lk.at(b, j, kn, d)];
            Vh[j * D + d] = vv[lv.at(b, j, kn, d)];
          }
        for (int64_t i = 0; i < S; ++i) {
          for (int64_t d = 0; d < D; ++d) Qr[d] = q[lq.at(b, i, n, d)];
          double mx = -INFINITY;
          for (int64_t j = 0; j < S2; ++j) {
            const bool banned = (mask && mask[(b * S + i) * S2 + j] != 0) || j - i > nextTokens || i - j > preTokens;
            double sc = -INFINITY;
            if (!banned) {
              double dot = 0;
              const double* kr = Kh + j * D;
              for (int64_t d = 0; d < D; ++d) dot += Qr[d] * kr[d];
              sc = scaleValue * dot;
              if (has_pse) sc += pse[(((pse_batched ? b : 0) * N + n) * S + i) * S2 + j];
            }
            p[j] = sc;
            mx = std::max(mx, sc);
          }
          double sum = 0;
          for (int64_t j = 0; j < S2; ++j) sum += p[j] = mx == -INFINITY ? 0.0 : std::exp(p[j] - mx);
          lses[(b * N + n) * S + i] = mx == -INFINITY ? -INFINITY : mx + std::log(sum);
          for (int64_t d = 0; d < D; ++d) Qr[d] = 0;  // (reused as the output row)
          for (int64_t j = 0; j < S2; ++j) {
            const double* vr = Vh + j * D;
            for (int64_t d = 0; d < D; ++d) Qr[d] += p[j] * vr[d];
          }
          for (int64_t d = 0; d < D; ++d) out[lq.at(b, i, n, d)] = sum > 0 ? Qr[d] / sum : 0.0;  // nothing left: zeros
        }
      }
    });
    store_f64(c, ro, out);
    if (lse) store_f64(c, rl, lses);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnFusedInferAttentionScoreV2)

// CANN header aclnnop/aclnn_recurrent_gated_delta_rule.h: per sequence b (actualSeqLengths[b] tokens of the T, at most 8) and value head h: S = state[ssmStateIndices[first + numAcceptedTokens[b] - 1]], then per token t: S = e^g S, S += beta (v - S k) k^T, out_t = scaleValue S q, state[ssmStateIndices[t]] = S (key/query head h / (Nv / Nk)); all bfloat16 but g (float32, null: 0); gk must be null
extern "C" aclnnStatus aclnnRecurrentGatedDeltaRuleGetWorkspaceSize(
    const aclTensor* query, const aclTensor* key, const aclTensor* value, const aclTensor* beta, aclTensor* stateRef,
    const aclTensor* actualSeqLengths, const aclTensor* ssmStateIndices, const aclTensor* g, const aclTensor* gk,
    const aclTensor* numAcceptedTokens, float scaleValue, aclTensor* out, uint64_t* workspaceSize,
    aclOpExecutor** executor) {
  const char* op = "aclnnRecurrentGatedDeltaRule";
  if (aclnnStatus s = check_not_null(op, {{"query", query}, {"key", key}, {"value", value}, {"beta", beta},
                                          {"stateRef", stateRef}, {"actualSeqLengths", actualSeqLengths},
                                          {"ssmStateIndices", ssmStateIndices}, {"numAcceptedTokens", numAcceptedTokens},
                                          {"out", out}}))
    return s;
  if (gk) return invalid(op, "gk is reserved (not supported by CANN's current version); pass null");
  if (aclnnStatus s = check_all(op, {{"query", query}, {"key", key}, {"value", value}, {"beta", beta},
                                     {"stateRef", stateRef}, {"actualSeqLengths", actualSeqLengths},
                                     {"ssmStateIndices", ssmStateIndices}, {"numAcceptedTokens", numAcceptedTokens},
                                     {"out", out}}))
    return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"query", query}, {"key", key}, {"value", value},
                         {"beta", beta}, {"stateRef", stateRef}, {"out", out}})
    if (aclnnStatus s = check_dtype(op, name, t, {DType::BFloat16})) return s;
  for (auto [name, t] : {std::pair<const char*, const aclTensor*>{"actualSeqLengths", actualSeqLengths},
                         {"ssmStateIndices", ssmStateIndices}, {"numAcceptedTokens", numAcceptedTokens}})
    if (aclnnStatus s = check_dtype(op, name, t, {DType::Int32})) return s;
  IntArrayRef qs = shape_of(query), vs = shape_of(value), ss = shape_of(stateRef);
  if (qs.size() != 3 || vs.size() != 3 || ss.size() != 4)
    return invalid(op, "query/key must be (T, Nk, Dk), value (T, Nv, Dv), stateRef (slots, Nv, Dv, Dk)");
  const int64_t T = qs[0], Nk = qs[1], Dk = qs[2], Nv = vs[1], Dv = vs[2];
  if (shape_of(key) != qs || vs[0] != T || Nk <= 0 || Nv % Nk || ss[1] != Nv || ss[2] != Dv || ss[3] != Dk)
    return invalid(op, "query " + shape_str(qs) + ", key " + shape_str(shape_of(key)) + ", value " + shape_str(vs) +
                           " and stateRef " + shape_str(ss) + " do not agree (Nv a multiple of Nk)");
  if (Nk > 256 || Nv > 256 || Dk > 256 || Dv > 256) return invalid(op, "Nk, Nv, Dk and Dv must be at most 256 (CANN's limits)");
  if (aclnnStatus s = check_shape(op, "beta", beta, {T, Nv})) return s;
  if (aclnnStatus s = check_shape(op, "out", out, vs)) return s;
  if (aclnnStatus s = check_shape(op, "ssmStateIndices", ssmStateIndices, {T})) return s;
  if (shape_of(actualSeqLengths).size() != 1 || shape_of(numAcceptedTokens) != shape_of(actualSeqLengths))
    return invalid(op, "actualSeqLengths and numAcceptedTokens must be (B,)");
  if (g) {
    if (aclnnStatus s = check_tensor(op, "g", g)) return s;
    if (aclnnStatus s = check_dtype(op, "g", g, {DType::Float32})) return s;
    if (aclnnStatus s = check_shape(op, "g", g, {T, Nv})) return s;
  }
  if (aclnnStatus s = check_overlap(op, "out", out, {{"query", query}, {"key", key}, {"value", value}, {"stateRef", stateRef}}, false))
    return s;
  const int64_t B = shape_of(actualSeqLengths)[0], slots = ss[0], SD = Dv * Dk;
  uint64_t wsb = 0, o_at = 0, st_at = 0, s_at = 0;
  F64Input fq, fk, fv, fb, fg;
  for (auto [t, in] : {std::pair<const aclTensor*, F64Input*>{query, &fq}, {key, &fk}, {value, &fv}, {beta, &fb}, {g, &fg}})
    if (aclnnStatus s = stage_f64(op, t, &wsb, in)) return s;
  if (aclnnStatus s = reserve_f64(op, T * Nv * Dv, &wsb, &o_at)) return s;
  if (aclnnStatus s = reserve_f64(op, numel_of(ss), &wsb, &st_at)) return s;
  if (aclnnStatus s = reserve_f64(op, SD, &wsb, &s_at)) return s;
  F64Input fs;
  fs.ref = ref(stateRef);
  fs.offset = st_at;
  fs.present = true;
  TensorRef rl = ref(actualSeqLengths), ri = ref(ssmStateIndices), rn = ref(numAcceptedTokens), ro = ref(out),
            rs = fs.ref;
  return make_executor(op, wsb, [=](KernelContext& k) {
    const double *q = fq.load(k), *kk = fk.load(k), *v = fv.load(k), *be = fb.load(k), *gg = fg.load(k);
    double* state = const_cast<double*>(fs.load(k));
    double *o = f64_at(k, o_at), *S = f64_at(k, s_at);
    cpu::Strided lens = k.view(rl), idx = k.view(ri), acc = k.view(rn);
    auto slot = [&](int64_t t) {
      const int64_t i = index_value(idx, t);
      EMBER_CHECK_INDEX(i >= 0 && i < slots, op, ": ssmStateIndices[", t, "] = ", i, " is not a state slot (", slots, ")");
      return i;
    };
    int64_t first = 0;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t L = index_value(lens, b), n_acc = index_value(acc, b);
      EMBER_CHECK_INDEX(L >= 0 && L <= 8 && first + L <= T, op, ": actualSeqLengths[", b, "] = ", L,
                        " is not a length of at most 8 within the ", T, " tokens");
      EMBER_CHECK_INDEX(L == 0 || (n_acc >= 1 && n_acc <= L), op, ": numAcceptedTokens[", b, "] = ", n_acc,
                        " is not in [1, ", L, "]");
      for (int64_t h = 0; h < Nv && L > 0; ++h) {
        const int64_t kh = h / (Nv / Nk);
        const double* s0 = state + (slot(first + n_acc - 1) * Nv + h) * SD;
        std::copy(s0, s0 + SD, S);
        for (int64_t t = first; t < first + L; ++t) {
          const double alpha = std::exp(gg ? gg[t * Nv + h] : 0.0), bt = be[t * Nv + h];
          const double *kt = kk + (t * Nk + kh) * Dk, *qt = q + (t * Nk + kh) * Dk, *vt = v + (t * Nv + h) * Dv;
          for (int64_t i = 0; i < SD; ++i) S[i] *= alpha;
          for (int64_t r = 0; r < Dv; ++r) {  // row r of S: += beta (v_r - S_r . k) k
            double* Sr = S + r * Dk;
            double sk = 0;
            for (int64_t c = 0; c < Dk; ++c) sk += Sr[c] * kt[c];
            const double u = bt * (vt[r] - sk);
            double oq = 0;
            for (int64_t c = 0; c < Dk; ++c) {
              Sr[c] += u * kt[c];
              oq += Sr[c] * qt[c];
            }
            o[(t * Nv + h) * Dv + r] = scaleValue * oq;
          }
          double* dst = state + (slot(t) * Nv + h) * SD;
          std::copy(S, S + SD, dst);
        }
      }
      first += L;
    }
    store_f64(k, ro, o);
    store_f64(k, rs, state);
  }, workspaceSize, executor);
}
EMBER_ACLNN_PHASE2_IMPL(aclnnRecurrentGatedDeltaRule)

}  // namespace npu
}  // namespace ember
