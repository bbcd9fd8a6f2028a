// ember (internal to device/npu): the descriptor structs behind aclTensor & co.
#pragma once

#include <vector>

#include "acl/acl.h"
#include "ember/device/npu/aclnn_ops.h"
#include "ember/core/dtype.h"
#include "ember/core/shape.h"

// The descriptor types are CANN's, declared in aclnn/acl_meta.h at global scope.
struct aclTensor {
  // Inline up to 6 dims (DimVector): creating a descriptor is one allocation, not four.
  ember::DimVector view;     // logical shape
  ember::DimVector strides;  // in elements
  int64_t offset = 0;            // in elements, from data
  aclDataType dtype = ACL_FLOAT;
  aclFormat format = ACL_FORMAT_ND;
  ember::DimVector storage;  // physical shape of the storage
  void* data = nullptr;          // device address of the storage base
};

struct aclScalar {
  aclDataType dtype = ACL_FLOAT;
  double d = 0;
  int64_t i = 0;
};

struct aclIntArray {
  std::vector<int64_t> values;
};

struct aclTensorList {
  std::vector<aclTensor*> tensors;
};

struct aclFloatArray {
  std::vector<float> values;
};

struct aclBoolArray {
  std::vector<bool> values;
};

struct aclScalarList {
  std::vector<aclScalar*> scalars;
};

namespace ember {
namespace npu {
namespace detail {
// Note [Descriptor handles]
// A descriptor (aclTensor, aclScalar, the arrays and lists) lives at an address no earlier
// descriptor ever had: they are carved from reserved address space by a bump pointer, in 2 MiB
// chunks (one huge page each), never reused; an emptied chunk's pages move to the next fresh chunk
// with mremap (no zeroing) and its addresses stay reserved. So a stale handle is never another
// descriptor's: it is refused by name ("not a live aclTensor (destroyed twice, or never created)"),
// and a second destroy cannot free someone else's. A 16-byte header before each descriptor holds
// its address and type while it lives: an aclScalar passed as an aclTensor is refused too.
enum class DescKind : uint8_t { Tensor, Scalar, IntArray, FloatArray, BoolArray, TensorList, ScalarList };
bool descriptor_live(const void* p, DescKind kind);
inline bool descriptor_live(const aclTensor* p) { return descriptor_live(p, DescKind::Tensor); }
inline bool descriptor_live(const aclScalar* p) { return descriptor_live(p, DescKind::Scalar); }
inline bool descriptor_live(const aclIntArray* p) { return descriptor_live(p, DescKind::IntArray); }
inline bool descriptor_live(const aclFloatArray* p) { return descriptor_live(p, DescKind::FloatArray); }
inline bool descriptor_live(const aclBoolArray* p) { return descriptor_live(p, DescKind::BoolArray); }
inline bool descriptor_live(const aclTensorList* p) { return descriptor_live(p, DescKind::TensorList); }
inline bool descriptor_live(const aclScalarList* p) { return descriptor_live(p, DescKind::ScalarList); }
}

// Phase 1 failed: what ref() noted for the executor it did not make is dropped (executor.cpp;
// the error helpers of aclnn_checks.cpp call it).
void drop_notes();

}  // namespace npu
}  // namespace ember
