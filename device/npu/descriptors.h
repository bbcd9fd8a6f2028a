// ember (internal to device/npu): the descriptor structs behind aclTensor & co.
#pragma once

#include <vector>

#include "ember/device/npu/acl.h"
#include "ember/core/dtype.h"
#include "ember/core/shape.h"

namespace ember {
namespace npu {

struct aclTensor {
  // Inline up to 6 dims (DimVector): creating a descriptor is one allocation, not four.
  DimVector view;     // logical shape
  DimVector strides;  // in elements
  int64_t offset = 0;            // in elements, from data
  aclDataType dtype = ACL_FLOAT;
  aclFormat format = ACL_FORMAT_ND;
  DimVector storage;  // physical shape of the storage
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

namespace detail {
bool descriptor_live(const void* p);
}

}  // namespace npu
}  // namespace ember
