/* ember's emulated NPU: CANN's aclnn/acl_meta.h, the descriptors aclnn ops take (tensors,
 * scalars, arrays, lists). CANN's names, signatures and C linkage. Valid C (C99) and C++11. */
#ifndef EMBER_CANN_ACLNN_ACL_META_H_
#define EMBER_CANN_ACLNN_ACL_META_H_

#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t aclnnStatus;
typedef struct aclOpExecutor aclOpExecutor;
typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclTensorList aclTensorList;
typedef struct aclFloatArray aclFloatArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclScalarList aclScalarList;

/* A view of device memory: viewDims/stride/offset (in elements) over a storage of storageDims
 * starting at tensorData. stride NULL means contiguous. The emulator refuses (NULL, and a
 * message in aclGetRecentErrMsg) views that reach outside their storage, storage outside live
 * device memory, and host pointers: CANN accepts those and faults, or reads garbage, later. */
ACL_FUNC_VISIBILITY aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                                               const int64_t* stride, int64_t offset, aclFormat format,
                                               const int64_t* storageDims, uint64_t storageDimsNum,
                                               void* tensorData);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensor(const aclTensor* tensor);
/* Copies *value (of dataType) at creation. */
ACL_FUNC_VISIBILITY aclScalar* aclCreateScalar(void* value, aclDataType dataType);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyScalar(const aclScalar* scalar);
ACL_FUNC_VISIBILITY aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyIntArray(const aclIntArray* array);
/* Destroying the list destroys its member tensors, as in CANN. */
ACL_FUNC_VISIBILITY aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensorList(const aclTensorList* array);
ACL_FUNC_VISIBILITY aclFloatArray* aclCreateFloatArray(const float* value, uint64_t size);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyFloatArray(const aclFloatArray* array);
ACL_FUNC_VISIBILITY aclBoolArray* aclCreateBoolArray(const bool* value, uint64_t size);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyBoolArray(const aclBoolArray* array);
/* Destroying the list destroys its member scalars, as in CANN. */
ACL_FUNC_VISIBILITY aclScalarList* aclCreateScalarList(const aclScalar* const* value, uint64_t size);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyScalarList(const aclScalarList* array);

/* What a tensor descriptor holds. The arrays are allocated by the call (C++ new[]) and owned by
 * the caller, as in CANN. */
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewShape(const aclTensor* tensor, int64_t** viewDims, uint64_t* viewDimsNum);
ACL_FUNC_VISIBILITY aclnnStatus aclGetStorageShape(const aclTensor* tensor, int64_t** storageDims,
                                                   uint64_t* storageDimsNum);
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewStrides(const aclTensor* tensor, int64_t** stridesValue,
                                                  uint64_t* stridesNum);
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewOffset(const aclTensor* tensor, int64_t* offset);
ACL_FUNC_VISIBILITY aclnnStatus aclGetFormat(const aclTensor* tensor, aclFormat* format);
ACL_FUNC_VISIBILITY aclnnStatus aclGetDataType(const aclTensor* tensor, aclDataType* dataType);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_CANN_ACLNN_ACL_META_H_ */
