// ember's Ascend C (kernel_operator.h): qualifiers, scalar types, positions and the error that
// every check throws. Note [Ascend C on the emulated NPU] (ember_ascendc/abi.h) has the model.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "ember/core/half.h"
#include "ember_ascendc/abi.h"

// Kernel qualifiers: the host compiler builds kernels as ordinary functions.
#ifndef __global__
#define __global__
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef __vector__
#define __vector__
#endif
#ifndef __cube__
#define __cube__
#endif
#ifndef __mix__
#define __mix__(...)
#endif
#ifndef GM_ADDR
#define GM_ADDR __gm__ uint8_t*
#endif
// The kernel type tag of mixed (cube + vector) builds: one kind of core is emulated.
#define KERNEL_TASK_TYPE_DEFAULT(type) ((void)(type))
#define KERNEL_TASK_TYPE(key, type) ((void)(key), (void)(type))
enum KernelMetaType {
  KERNEL_TYPE_AIV_ONLY,
  KERNEL_TYPE_AIC_ONLY,
  KERNEL_TYPE_MIX_AIV_1_0,
  KERNEL_TYPE_MIX_AIC_1_0,
  KERNEL_TYPE_MIX_AIC_1_1,
  KERNEL_TYPE_MIX_AIC_1_2,
  KERNEL_TYPE_AICORE,
  KERNEL_TYPE_VECTORCORE,
  KERNEL_TYPE_MIX_AICORE,
  KERNEL_TYPE_MIX_VECTOR_CORE,
  KERNEL_TYPE_MAX
};

// half and bfloat16_t: 16-bit storage, arithmetic through float.
using half = ember::Half;
using bfloat16_t = ember::BFloat16;

// The pipes of PipeBarrier (global names, as CANN's compiler has them).
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_V2, PIPE_FIX };

namespace AscendC {

enum class TPosition : uint8_t {
  GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM,
  C2PIPE2GM, C2PIPE2LOCAL, MAX
};
using QuePosition = TPosition;
enum class Hardware : uint8_t { GM, UB, L1, L0A, L0B, L0C, BIAS, FIXBUF, MAX };
enum class HardEvent : uint8_t {
  MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V, MTE3_MTE1, MTE1_MTE3,
  MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S,
  MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX
};
enum class RoundMode : int { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };
enum class KernelMode : int { MIX_MODE = 0, AIC_MODE, AIV_MODE };

// A broken rule of the hardware or the API: the launch faults with this message.
class KernelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

inline ember_ascendc_core& core(const char* call) {
  ember_ascendc_core* c = ember_ascendc_current_core();
  if (!c) throw KernelError(std::string(call) + ": called outside a kernel (no core is running on this thread)");
  return *c;
}

template <class... A>
[[noreturn]] void fail(const char* call, const A&... parts) {
  std::ostringstream os;
  os << call << ": ";
  (os << ... << parts);
  throw KernelError(os.str());
}

// The dtype code and printed name of a kernel element type.
template <class T> struct TypeOf;
#define EMBER_ASC_TYPE(T, code, name)              \
  template <> struct TypeOf<T> {                   \
    static constexpr int kCode = code;             \
    static constexpr const char* kName = name;     \
  };
EMBER_ASC_TYPE(float, EMBER_ASC_F32, "float")
EMBER_ASC_TYPE(half, EMBER_ASC_F16, "half")
EMBER_ASC_TYPE(bfloat16_t, EMBER_ASC_BF16, "bfloat16_t")
EMBER_ASC_TYPE(int32_t, EMBER_ASC_I32, "int32_t")
EMBER_ASC_TYPE(int16_t, EMBER_ASC_I16, "int16_t")
EMBER_ASC_TYPE(int8_t, EMBER_ASC_I8, "int8_t")
EMBER_ASC_TYPE(uint8_t, EMBER_ASC_U8, "uint8_t")
EMBER_ASC_TYPE(uint16_t, EMBER_ASC_U16, "uint16_t")
EMBER_ASC_TYPE(uint32_t, EMBER_ASC_U32, "uint32_t")
EMBER_ASC_TYPE(int64_t, EMBER_ASC_I64, "int64_t")
#undef EMBER_ASC_TYPE

constexpr uint32_t kBlockBytes = 32;    // the unit of DataCopy and of a vector block
constexpr uint32_t kRepeatBytes = 256;  // one vector repeat: 8 blocks

inline const char* position_name(TPosition p) {
  switch (p) {
    case TPosition::GM: return "GM";
    case TPosition::VECIN: return "VECIN";
    case TPosition::VECOUT: return "VECOUT";
    case TPosition::VECCALC: return "VECCALC";
    default: return "a cube position (A1/A2/B1/B2/C1/C2/CO1/CO2/TSCM)";
  }
}

}  // namespace detail

__aicore__ inline int64_t GetBlockIdx() { return detail::core("GetBlockIdx").block_idx; }
__aicore__ inline int64_t GetBlockNum() { return detail::core("GetBlockNum").block_num; }
__aicore__ inline int64_t GetSubBlockIdx() { return 0; }
__aicore__ inline int64_t GetSubBlockNum() { return 1; }
__aicore__ inline int64_t GetTaskRation() { return 1; }
__aicore__ inline void InitSocState() {}

}  // namespace AscendC

// The kernel-side globals of CANN's compiler: block_idx and block_num read the running core.
namespace AscendC {
namespace detail {
struct BlockIdx {
  operator int64_t() const { return GetBlockIdx(); }  // NOLINT: reads like CANN's variable
};
struct BlockNum {
  operator int64_t() const { return GetBlockNum(); }  // NOLINT
};
}  // namespace detail
}  // namespace AscendC
inline constexpr AscendC::detail::BlockIdx block_idx{};
inline constexpr AscendC::detail::BlockNum block_num{};
