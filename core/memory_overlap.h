// ember: memory overlap between strided layouts, as PyTorch defines it (ATen's MemoryOverlap),
// made exact where PyTorch answers "too hard".
//
// Used by the dispatcher for every op that writes a tensor (dispatch/write_checks.cpp) and by the
// emulated NPU's aclnn layer for aclTensors (device/npu/aclnn_common.h): one geometry for both.
// Note [Memory overlap]:
//  - internal overlap: two indices of the written-to layout address one element (a stride 0 over a
//    size > 1, or an as_strided layout that folds onto itself). PyTorch refuses the first and cannot
//    tell the second; here both are found exactly (up to 2^24 elements, above which a layout that
//    is not nested is taken as overlapping).
//  - between a written-to layout and an input: Full (the same element at every index: the
//    element-wise in-place case, allowed), Partial (PyTorch's rule: both dense, same memory, another
//    layout: refused), Shared (at least one not dense, where PyTorch gives up and computes whatever
//    the loop order gives; here the shared elements are found exactly, and the dispatcher reads such
//    an input from a snapshot, so the result is the no-alias answer), No.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/core/shape.h"

namespace ember {

// A strided layout in one address space: addr is the address of element [0, ..., 0], strides are
// in elements (any sign, 0 for broadcast dims).
struct MemLayout {
  uintptr_t addr = 0;
  size_t itemsize = 1;
  IntArrayRef sizes;
  IntArrayRef strides;
};

enum class MemOverlap : uint8_t { No, Full, Partial, Shared };
const char* to_string(MemOverlap o);

// True when two different indices of t address the same element.
bool has_internal_overlap(const MemLayout& t);
// How a (the written-to layout) and b (an input) share memory; see Note [Memory overlap].
MemOverlap get_overlap(const MemLayout& a, const MemLayout& b);

}  // namespace ember
