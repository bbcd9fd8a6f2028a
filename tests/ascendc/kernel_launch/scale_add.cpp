// z = x * 2 + y in half, 8 cores, double-buffered TQue pipeline (CANN's kernel-launch style).
#include "kernel_operator.h"
using namespace AscendC;

constexpr int32_t TOTAL_LENGTH = 8 * 4096;
constexpr int32_t USE_CORE_NUM = 8;
constexpr int32_t BLOCK_LENGTH = TOTAL_LENGTH / USE_CORE_NUM;
constexpr int32_t TILE_NUM = 8;
constexpr int32_t BUFFER_NUM = 2;
constexpr int32_t TILE_LENGTH = BLOCK_LENGTH / TILE_NUM / BUFFER_NUM;

class KernelScaleAdd {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
    xGm.SetGlobalBuffer((__gm__ half*)x + BLOCK_LENGTH * GetBlockIdx(), BLOCK_LENGTH);
    yGm.SetGlobalBuffer((__gm__ half*)y + BLOCK_LENGTH * GetBlockIdx(), BLOCK_LENGTH);
    zGm.SetGlobalBuffer((__gm__ half*)z + BLOCK_LENGTH * GetBlockIdx(), BLOCK_LENGTH);
    pipe.InitBuffer(inX, BUFFER_NUM, TILE_LENGTH * sizeof(half));
    pipe.InitBuffer(inY, BUFFER_NUM, TILE_LENGTH * sizeof(half));
    pipe.InitBuffer(outZ, BUFFER_NUM, TILE_LENGTH * sizeof(half));
  }
  __aicore__ inline void Process() {
    for (int32_t i = 0; i < TILE_NUM * BUFFER_NUM; i++) {
      LocalTensor<half> x = inX.AllocTensor<half>(), y = inY.AllocTensor<half>();
      DataCopy(x, xGm[i * TILE_LENGTH], TILE_LENGTH);
      DataCopy(y, yGm[i * TILE_LENGTH], TILE_LENGTH);
      inX.EnQue(x);
      inY.EnQue(y);
      LocalTensor<half> xl = inX.DeQue<half>(), yl = inY.DeQue<half>();
      LocalTensor<half> z = outZ.AllocTensor<half>();
#ifdef HAVE_SCALE
      Muls(xl, xl, (half)2.0f, TILE_LENGTH);
#endif
      Add(z, xl, yl, TILE_LENGTH);
      outZ.EnQue<half>(z);
      inX.FreeTensor(xl);
      inY.FreeTensor(yl);
      LocalTensor<half> zl = outZ.DeQue<half>();
      DataCopy(zGm[i * TILE_LENGTH], zl, TILE_LENGTH);
      outZ.FreeTensor(zl);
    }
  }

 private:
  TPipe pipe;
  TQue<QuePosition::VECIN, BUFFER_NUM> inX, inY;
  TQue<QuePosition::VECOUT, BUFFER_NUM> outZ;
  GlobalTensor<half> xGm, yGm, zGm;
};

extern "C" __global__ __aicore__ void scale_add(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
  KernelScaleAdd op;
  op.Init(x, y, z);
  op.Process();
}

#ifndef __CCE_KT_TEST__
void scale_add_do(uint32_t blockDim, void* l2ctrl, void* stream, uint8_t* x, uint8_t* y, uint8_t* z) {
  scale_add<<<blockDim, l2ctrl, stream>>>(x, y, z);
}
#endif
