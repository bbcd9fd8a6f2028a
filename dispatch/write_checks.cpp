// ember: the memory-overlap checks of every call that writes a tensor (Note [Write checks] in
// dispatcher.h), for CPU and NPU alike. The geometry is core/memory_overlap.h's.
#include "ember/core/memory_overlap.h"
#include "ember/dispatch/dispatcher.h"

namespace ember {
namespace detail {
namespace {

MemLayout layout_of(const Tensor& t) {
  const TensorImpl* i = t.impl();
  return {reinterpret_cast<uintptr_t>(i->data()), i->itemsize(), i->sizes(), i->strides()};
}

std::string describe(const Tensor& t) {
  return str_cat(t.dtype(), t.sizes_ref(), " with strides ", t.strides_ref(), " at storage offset ",
                 t.storage_offset(), " on ", t.device());
}

// Storages whose bytes are apart (the common case: nothing to look at further).
bool apart(const StorageImpl* a, const StorageImpl* b) {
  if (a == b) return false;
  const uintptr_t a0 = reinterpret_cast<uintptr_t>(a->data()), b0 = reinterpret_cast<uintptr_t>(b->data());
  return a->device() != b->device() || a0 + a->nbytes() <= b0 || b0 + b->nbytes() <= a0;
}

MemOverlap overlap(const Tensor& out, const Tensor& in) {
  if (!out.defined() || !in.defined()) return MemOverlap::No;
  if (out.is_same(in)) return MemOverlap::Full;
  // (two storages share bytes only through from_blob)
  if (apart(out.impl()->storage().get(), in.impl()->storage().get())) return MemOverlap::No;
  return get_overlap(layout_of(out), layout_of(in));
}

const char* arg_name(const OperatorEntry& e, size_t i) { return e.schema().arguments[i].name.c_str(); }

// Calls f(i, tensor) for every defined tensor of argument i (a list yields each element).
template <class F>
void each_tensor(const WriteArg& a, F f) {
  if (a.tensor && a.tensor->defined()) f(*a.tensor, false);
  if (a.list)
    for (const Tensor& t : *a.list)
      if (t.defined()) f(t, true);
}

// Each written tensor contiguous and every other tensor argument in storage apart from it: no
// check has anything to find (optimizer steps, gradient accumulation, x.add_(y)).
bool trivially_apart(const OperatorEntry& e, const WriteArg* args, size_t n) {
  for (size_t w : e.written_args()) {
    if (w >= n || args[w].list) return false;
    const Tensor* out = args[w].tensor;
    if (!out || !out->defined()) continue;
    if (!out->is_contiguous()) return false;
    const StorageImpl* so = out->impl()->storage().get();
    for (size_t i = 0; i < n; ++i) {
      if (i == w) continue;
      if (args[i].list) return false;
      const Tensor* in = args[i].tensor;
      if (in && in->defined() && !apart(so, in->impl()->storage().get())) return false;
    }
  }
  return true;
}

}  // namespace

bool check_writes(const OperatorEntry& e, const WriteArg* args, size_t n, Tensor* snapshots) {
  if (trivially_apart(e, args, n)) return false;
  const auto& schema_args = e.schema().arguments;
  bool snapped = false;
  for (size_t w : e.written_args()) {
    if (w >= n) continue;
    each_tensor(args[w], [&](const Tensor& out, bool /*in_list*/) {
      // A written-to tensor whose indices meet: PyTorch's assert_no_internal_overlap (made exact).
      if (!e.schema().writes_idempotent && !out.is_contiguous()) {
        EMBER_CHECK_T(MemoryOverlapError, !has_internal_overlap(layout_of(out)), e.name(),
                      ": unsupported operation: more than one element of the written-to tensor '", arg_name(e, w),
                      "' (", describe(out),
                      ") refers to a single memory location. Please clone() the tensor before performing the "
                      "operation.");
      }
      for (size_t i = 0; i < n && i < schema_args.size(); ++i) {
        if (i == w) continue;
        const bool also_written = schema_args[i].is_mutable;
        if (also_written && i < w) continue;  // each pair of written-to tensors once
        each_tensor(args[i], [&](const Tensor& in, bool in_list) {
          const MemOverlap o = overlap(out, in);
          if (o == MemOverlap::No) return;
          EMBER_CHECK_T(MemoryOverlapError, !also_written, e.name(), ": unsupported operation: the written-to tensors '",
                        arg_name(e, w), "' (", describe(out), ") and '", arg_name(e, i), "' (", describe(in),
                        ") share memory (", to_string(o), "). Please clone() one of them.");
          if (o == MemOverlap::Full) return;  // the element-wise in-place case
          EMBER_CHECK_T(MemoryOverlapError, o == MemOverlap::Shared && !in_list && args[i].replaceable, e.name(),
                        ": unsupported operation: some elements of the input tensor '", arg_name(e, i), "' (",
                        describe(in), ") and the written-to tensor '", arg_name(e, w), "' (", describe(out),
                        ") refer to a single memory location. Please clone() the tensor before performing the "
                        "operation.");
          // Shared elements between layouts that are not both dense (PyTorch cannot tell and
          // computes what the loop order gives): the input is read from a snapshot instead.
          if (!snapshots[i].defined()) snapshots[i] = in.clone();
          snapped = true;
        });
      }
    });
  }
  return snapped;
}

bool check_writes_boxed(const OperatorEntry& e, Stack* stack) {
  const size_t n = stack->size();
  std::vector<WriteArg> args(n);
  for (size_t i = 0; i < n; ++i) {
    const IValue& v = (*stack)[i];
    if (v.is_tensor()) args[i] = {&v.to_tensor(), nullptr, true};
    if (v.is_tensor_list()) args[i].list = &v.to_tensor_list();
  }
  std::vector<Tensor> snapshots(n);
  if (!check_writes(e, args.data(), n, snapshots.data())) return false;
  for (size_t i = 0; i < n; ++i)
    if (snapshots[i].defined()) (*stack)[i] = IValue(snapshots[i]);
  return true;
}

}  // namespace detail
}  // namespace ember
