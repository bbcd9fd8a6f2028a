// ember (internal to device/npu): the descriptor structs behind aclTensor & co.
#pragma once

#include <vector>

#include "ember/device/npu/acl.h"
#include "ember/tensor/dtype.h"

namespace ember {
namespace npu {

struct aclTensor {
  std::vector<int64_t> view;     // logical shape
  std::vector<int64_t> strides;  // in elements
  int64_t offset = 0;            // in elements, from data
  aclDataType dtype = ACL_FLOAT;
  aclFormat format = ACL_FORMAT_ND;
  std::vector<int64_t> storage;  // physical shape of the storage
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
