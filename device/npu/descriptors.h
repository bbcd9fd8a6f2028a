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
bool descriptor_live(const void* p);
}

}  // namespace npu
}  // namespace ember
