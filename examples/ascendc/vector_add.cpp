// z = x + y in float: the vector add of the Ascend C introduction, written for ember's examples.
// blockDim cores, each a contiguous slice of totalLength / blockDim elements, moved in tiles of
// `tile` elements through double-buffered queues (load, compute and store overlap on hardware).
#include "kernel_operator.h"

namespace {
constexpr int32_t kBuffers = 2;
}

class VectorAdd {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tile) {
    length_ = totalLength / AscendC::GetBlockNum();
    tile_ = tile;
    const uint64_t start = static_cast<uint64_t>(length_) * AscendC::GetBlockIdx();
    x_.SetGlobalBuffer((__gm__ float*)x + start, length_);
    y_.SetGlobalBuffer((__gm__ float*)y + start, length_);
    z_.SetGlobalBuffer((__gm__ float*)z + start, length_);
    pipe_.InitBuffer(in_x_, kBuffers, tile * sizeof(float));
    pipe_.InitBuffer(in_y_, kBuffers, tile * sizeof(float));
    pipe_.InitBuffer(out_z_, kBuffers, tile * sizeof(float));
  }
  __aicore__ inline void Process() {
    for (uint32_t at = 0; at < length_; at += tile_) {
      AscendC::LocalTensor<float> x = in_x_.AllocTensor<float>(), y = in_y_.AllocTensor<float>();
      AscendC::DataCopy(x, x_[at], tile_);
      AscendC::DataCopy(y, y_[at], tile_);
      in_x_.EnQue(x);
      in_y_.EnQue(y);
      x = in_x_.DeQue<float>();
      y = in_y_.DeQue<float>();
      AscendC::LocalTensor<float> z = out_z_.AllocTensor<float>();
      AscendC::Add(z, x, y, tile_);
      out_z_.EnQue(z);
      in_x_.FreeTensor(x);
      in_y_.FreeTensor(y);
      z = out_z_.DeQue<float>();
      AscendC::DataCopy(z_[at], z, tile_);
      out_z_.FreeTensor(z);
    }
  }

 private:
  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::QuePosition::VECIN, kBuffers> in_x_, in_y_;
  AscendC::TQue<AscendC::QuePosition::VECOUT, kBuffers> out_z_;
  AscendC::GlobalTensor<float> x_, y_, z_;
  uint32_t length_ = 0, tile_ = 0;
};

extern "C" __global__ __aicore__ void vector_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tile) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  VectorAdd op;
  op.Init(x, y, z, totalLength, tile);
  op.Process();
}
