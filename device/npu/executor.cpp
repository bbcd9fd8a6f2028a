// Executors (single-use handles for planned kernels), phase 2 with the workspace guard, and the
// phase-1 helpers of kernel.h.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <unordered_map>

#include "ember/core/memory_overlap.h"
#include "ember/device/env.h"
#include "ember/device/npu/descriptors.h"
#include "ember/device/npu/kernel.h"
#include "ember/device/npu/runtime.h"
#include "ember/device/parallel.h"
#include "ember/core/error.h"

namespace ember {
namespace npu {

using detail::fail;

namespace {

constexpr unsigned char kPoison = 0xFF;  // workspace contents before a kernel: NaN for floats
constexpr unsigned char kCanary = 0xA5;  // bytes after the workspace
constexpr size_t kCanaryMax = 4096;

struct Executor {
  const char* op = nullptr;  // interned
  uint64_t workspace_size = 0;
  Kernel kernel;
  int device = 0;
  bool repeatable = false;  // aclSetAclOpExecutorRepeatable: phase 2 does not consume it
  detail::AllocList uses;  // the allocations its kernel reads or writes (Note [In-flight uses])
};
// make_shared<Executor> (with its 16-byte count) stays within glibc's fast bins (requests up to 120
// bytes on 64-bit): the host thread allocates executors and the stream worker frees them, and a
// larger block takes malloc's slow path on every launch (+5% host instructions per launch).
static_assert(sizeof(Executor) + 16 <= 120, "Executor outgrew malloc's fast bins");

std::mutex g_exec_mu;
std::unordered_map<uintptr_t, std::shared_ptr<Executor>>& executors() {
  static auto* m = new std::unordered_map<uintptr_t, std::shared_ptr<Executor>>();
  return *m;
}
// Handles are never reused, so a stale handle can never run another op's kernel.
std::atomic<uintptr_t> g_next_handle{1};

// Op names live as long as the process: tasks, and aclrtFree's in-use search, name them.
const char* intern(const char* op) {  // g_exec_mu held
  static const char *last_in = nullptr, *last_out = nullptr;  // ops are launched in runs
  if (op == last_in && std::strcmp(op, last_out) == 0) return last_out;
  static auto* names = new std::set<std::string, std::less<>>();
  auto it = names->find(op);  // no allocation for a known name
  if (it == names->end()) it = names->emplace(op).first;
  last_in = op;
  return last_out = it->c_str();
}

// The descriptors ref() saw since the last executor was made on this thread, and those of that
// executor: aclSetAclOpExecutorRepeatable (called right after phase 1, CANN's rule) keeps them,
// so the address setters can name the executor's tensors. Fixed arrays: nothing allocated per op.
struct Sources {
  static constexpr uint32_t kMax = 16;
  const void* pending[kMax];
  uint32_t n = 0;
  bool overflow = false;
  const void* last[kMax];
  uint32_t last_n = 0;
  bool last_overflow = false;
  uintptr_t last_handle = 0;
};
thread_local Sources tls_sources;
// A repeatable executor's descriptors and the addresses set for them (g_exec_mu).
struct Repeat {
  std::vector<const void*> sources;
  AddressOverrides addresses;
};
std::unordered_map<uintptr_t, Repeat>& repeats() {
  static auto* m = new std::unordered_map<uintptr_t, Repeat>();
  return *m;
}

uint32_t env_cores() { return static_cast<uint32_t>(env_int("EMBER_NPU_CORES", 1, 1024).value_or(8)); }

}  // namespace

size_t live_executor_count() {
  std::lock_guard<std::mutex> g(g_exec_mu);
  return executors().size();
}

TensorRef ref(const aclTensor* t) {
  TensorRef r;
  if (!t) return r;
  r.view = t->view;
  r.strides = t->strides;
  r.storage = t->storage;
  r.offset = t->offset;
  r.acl_dtype = t->dtype;
  dtype_from_acl(t->dtype, &r.dtype);
  r.data = t->data;
  r.tracked = detail::note_planned(t->data);
  r.source = t;
  if (tls_sources.n < Sources::kMax) {
    tls_sources.pending[tls_sources.n++] = t;
  } else {
    tls_sources.overflow = true;
  }
  return r;
}

cpu::Strided KernelContext::view(const TensorRef& t) const {
  cpu::Strided s;
  s.dtype = t.dtype;
  s.sizes = IntArrayRef(t.view);
  s.strides = IntArrayRef(t.strides);
  int64_t n = numel_of(s.sizes);
  if (n == 0) {
    s.data = nullptr;
    return s;
  }
  size_t esz = element_size(t.dtype);
  const void* data = t.data;
  bool tracked = t.tracked;
  if (addresses_)
    for (const auto& [src, addr] : *addresses_)
      if (src == t.source) {
        data = addr;
        tracked = false;  // a new address: looked up (and checked) below
      }
  char* base;
  if (tracked) {
    base = detail::host_ptr(t.data);  // phase 1 checked the range; the executor keeps it allocated
  } else {  // a TensorRef not made by ref()
    int64_t storage = numel_of(IntArrayRef(t.storage));
    base = static_cast<char*>(detail::translate(data, static_cast<size_t>(storage) * esz));
    EMBER_CHECK(base != nullptr, "tensor memory at ", data, " (", numel_of(IntArrayRef(t.storage)) * static_cast<int64_t>(esz),
                " bytes) was freed, never allocated or too small when the kernel ran");
  }
  s.data = base + t.offset * static_cast<int64_t>(esz);
  return s;
}

uint32_t KernelContext::cores() const {
  static const uint32_t n = env_cores();
  return n;
}

void KernelContext::launch(uint32_t block_dim, const std::function<void(uint32_t, uint32_t)>& fn) const {
  parallel_for(static_cast<int64_t>(block_dim), 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) fn(static_cast<uint32_t>(b), block_dim);
  });
}

// Phase 1 failed: what ref() noted for the executor it did not make is dropped.
void drop_notes() {
  detail::drop_planned();
  tls_sources.n = 0;
  tls_sources.overflow = false;
}

aclnnStatus invalid(const char* op, const std::string& msg) {
  drop_notes();
  return fail(ACLNN_ERR_PARAM_INVALID, std::string(op) + ": " + msg);
}
aclnnStatus invalid(const char* op, const Error& e) {
  drop_notes();
  detail::push_error(std::string(op) + ": " + e.what(), detail::error_kind_of(e));
  return ACLNN_ERR_PARAM_INVALID;
}
aclnnStatus error(aclnnStatus code, const std::string& msg) {
  drop_notes();
  return fail(code, msg);
}
aclnnStatus null_arg(const char* op, const char* name) {
  drop_notes();
  return fail(ACLNN_ERR_PARAM_NULLPTR, std::string(op) + ": " + name + " is null");
}
aclnnStatus check_not_null(const char* op, const char* name, const void* p) {
  return p ? ACLNN_SUCCESS : null_arg(op, name);
}
aclnnStatus check_not_null(const char* op, std::initializer_list<std::pair<const char*, const void*>> args) {
  for (const auto& a : args)
    if (!a.second) return null_arg(op, a.first);
  return ACLNN_SUCCESS;
}

bool dtype_from_acl(aclDataType t, DType* out) {
  switch (t) {
    case ACL_FLOAT: *out = DType::Float32; return true;
    case ACL_DOUBLE: *out = DType::Float64; return true;
    case ACL_FLOAT16: *out = DType::Float16; return true;
    case ACL_BF16: *out = DType::BFloat16; return true;
    case ACL_INT64: *out = DType::Int64; return true;
    case ACL_INT32: *out = DType::Int32; return true;
    case ACL_BOOL: *out = DType::Bool; return true;
    case ACL_UINT8: *out = DType::UInt8; return true;
    case ACL_INT8: *out = DType::Int8; return true;
    default: return false;
  }
}

aclDataType acl_from_dtype(DType t) {
  switch (t) {
    case DType::Float32: return ACL_FLOAT;
    case DType::Float64: return ACL_DOUBLE;
    case DType::Float16: return ACL_FLOAT16;
    case DType::BFloat16: return ACL_BF16;
    case DType::Int64: return ACL_INT64;
    case DType::Int32: return ACL_INT32;
    case DType::Bool: return ACL_BOOL;
    case DType::UInt8: return ACL_UINT8;
    case DType::Int8: return ACL_INT8;
  }
  return ACL_DT_UNDEFINED;
}

namespace {
const char* acl_dtype_name(aclDataType t) {
  switch (t) {
    case ACL_FLOAT: return "ACL_FLOAT";
    case ACL_FLOAT16: return "ACL_FLOAT16";
    case ACL_INT8: return "ACL_INT8";
    case ACL_INT32: return "ACL_INT32";
    case ACL_UINT8: return "ACL_UINT8";
    case ACL_INT16: return "ACL_INT16";
    case ACL_UINT16: return "ACL_UINT16";
    case ACL_UINT32: return "ACL_UINT32";
    case ACL_INT64: return "ACL_INT64";
    case ACL_UINT64: return "ACL_UINT64";
    case ACL_DOUBLE: return "ACL_DOUBLE";
    case ACL_BOOL: return "ACL_BOOL";
    case ACL_STRING: return "ACL_STRING";
    case ACL_COMPLEX64: return "ACL_COMPLEX64";
    case ACL_COMPLEX128: return "ACL_COMPLEX128";
    case ACL_BF16: return "ACL_BF16";
    case ACL_INT4: return "ACL_INT4";
    case ACL_UINT1: return "ACL_UINT1";
    case ACL_COMPLEX32: return "ACL_COMPLEX32";
    default: return "not an aclDataType";
  }
}
}  // namespace

namespace {
MemLayout layout_of(const aclTensor* t) {
  DType dt = DType::Float32;
  dtype_from_acl(t->dtype, &dt);
  const size_t item = element_size(dt);
  return {reinterpret_cast<uintptr_t>(t->data) + static_cast<uintptr_t>(t->offset) * item, item, t->view, t->strides};
}
// The bytes of t's storage, [data, data + storage elements * item size): check_tensor has shown
// the view lies inside them, so tensors whose storages are apart cannot overlap.
bool storage_range(const aclTensor* t, uintptr_t* lo, uintptr_t* hi) {
  DType dt = DType::Float32;
  if (!dtype_from_acl(t->dtype, &dt)) return false;
  uint64_t n = 1;
  for (int64_t d : t->storage)
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return false;
  uint64_t bytes;
  if (__builtin_mul_overflow(n, element_size(dt), &bytes)) return false;
  *lo = reinterpret_cast<uintptr_t>(t->data);
  return !__builtin_add_overflow(*lo, bytes, hi);
}
std::string layout_str(const aclTensor* t) {
  std::ostringstream os;
  os << "shape " << IntArrayRef(t->view) << ", strides " << IntArrayRef(t->strides) << ", offset " << t->offset;
  return os.str();
}
}  // namespace

aclnnStatus check_overlap(const char* op, const char* out_name, const aclTensor* out,
                          std::initializer_list<std::pair<const char*, const aclTensor*>> inputs, bool identical_ok) {
  uintptr_t out_lo = 0, out_hi = 0;
  const bool out_known = storage_range(out, &out_lo, &out_hi);
  if (!is_contiguous(out) && has_internal_overlap(layout_of(out)))
    return invalid(op, std::string(out_name) + " (" + layout_str(out) +
                           ") has elements that share one address; a written tensor's elements must be distinct");
  for (auto [name, in] : inputs) {
    if (!in || in->data == nullptr) continue;
    uintptr_t lo, hi;
    if (in != out && out_known && storage_range(in, &lo, &hi) && (hi <= out_lo || out_hi <= lo)) continue;
    const MemOverlap v = in == out ? MemOverlap::Full : get_overlap(layout_of(out), layout_of(in));
    if (v == MemOverlap::No || (v == MemOverlap::Full && identical_ok)) continue;
    if (v == MemOverlap::Full)
      return invalid(op, std::string(name) + " and " + out_name + " (" + layout_str(out) +
                             ") are the same memory; this op reads all of its input while writing its output, "
                             "so they must be disjoint");
    return invalid(op, std::string(name) + " (" + layout_str(in) + ") and " + out_name + " (" + layout_str(out) +
                           ") overlap in part (" + to_string(v) +
                           "); an input must be disjoint from the output or be exactly it");
  }
  return ACLNN_SUCCESS;
}

aclnnStatus check_tensor(const char* op, const char* name, const aclTensor* t) {
  if (!t) return null_arg(op, name);
  if (!detail::descriptor_live(t)) return invalid(op, std::string(name) + " is not a live aclTensor (destroyed?)");
  DType dt;
  if (!dtype_from_acl(t->dtype, &dt))
    return invalid(op, std::string(name) + " has data type " + acl_dtype_name(t->dtype) + " (" +
                           std::to_string(t->dtype) + "), which the emulated NPU does not support");
  // The formats that name a plain row-major layout (the tags torch_npu and CANN's samples put
  // on tensors) are all computed as ND; the private blocked ones (NC1HWC0, FRACTAL_Z, FRACTAL_NZ,
  // ...) are not emulated.
  switch (t->format) {
    case ACL_FORMAT_ND:
    case ACL_FORMAT_NCHW:
    case ACL_FORMAT_NHWC:
    case ACL_FORMAT_HWCN:
    case ACL_FORMAT_NDHWC:
    case ACL_FORMAT_NCDHW:
    case ACL_FORMAT_NC:
    case ACL_FORMAT_NCL:
      break;
    default:
      return invalid(op, std::string(name) + " has format " + std::to_string(t->format) +
                             ", a blocked (private) layout the emulated NPU does not support; use ND");
  }
  auto overflow = [&] { return invalid(op, std::string(name) + ": its sizes, strides and offset overflow 64 bits"); };
  int64_t storage = 1;
  for (int64_t d : t->storage)
    if (d < 0 || __builtin_mul_overflow(storage, d, &storage)) return overflow();
  int64_t lo = t->offset, hi = t->offset;
  bool empty = false;
  for (size_t i = 0; i < t->view.size(); ++i) {
    if (t->view[i] < 0) return invalid(op, std::string(name) + " has a negative dimension");
    if (t->view[i] == 0) empty = true;
  }
  if (empty) return ACLNN_SUCCESS;
  for (size_t i = 0; i < t->view.size(); ++i) {
    int64_t span;
    if (__builtin_mul_overflow(t->view[i] - 1, t->strides[i], &span) ||
        __builtin_add_overflow(span > 0 ? hi : lo, span, span > 0 ? &hi : &lo))
      return overflow();
  }
  size_t bytes;
  if (__builtin_mul_overflow(static_cast<size_t>(storage), element_size(dt), &bytes)) return overflow();
  if (lo < 0 || hi >= storage) {
    std::ostringstream os;
    os << name << ": ViewShape overlap: the view reaches elements [" << lo << ", " << hi << "] but the storage holds "
       << storage << " elements";
    return invalid(op, os.str());
  }
  int dev = detail::device_of(t->data);
  if (dev < 0)
    return invalid(op, std::string(name) + ": tensor data is not device memory (a host pointer where a device pointer "
                                           "is expected)");
  if (!detail::translate_planned(t->data, bytes, dev))
    return invalid(op, std::string(name) + ": tensor storage of " + std::to_string(bytes) +
                           " bytes is not inside one live aclrtMalloc allocation");
  return ACLNN_SUCCESS;
}

aclnnStatus check_dtype(const char* op, const char* name, const aclTensor* t, std::initializer_list<DType> allowed) {
  DType dt = dtype_of(t);
  for (DType a : allowed)
    if (a == dt) return ACLNN_SUCCESS;
  std::ostringstream os;
  os << name << " has dtype " << dt << ", expected one of";
  for (DType a : allowed) os << " " << a;
  return invalid(op, os.str());
}

aclnnStatus check_shape(const char* op, const char* name, const aclTensor* t, IntArrayRef expected) {
  if (shape_of(t) == expected) return ACLNN_SUCCESS;
  std::ostringstream os;
  os << name << " has shape " << shape_of(t) << ", expected " << expected;
  return invalid(op, os.str());
}

IntArrayRef shape_of(const aclTensor* t) { return IntArrayRef(t->view); }
IntArrayRef strides_of(const aclTensor* t) { return IntArrayRef(t->strides); }
bool is_contiguous(const aclTensor* t) { return is_contiguous_layout(shape_of(t), strides_of(t)); }
DType dtype_of(const aclTensor* t) {
  DType d = DType::Float32;
  dtype_from_acl(t->dtype, &d);
  return d;
}
double scalar_value(const aclScalar* s) { return s->d; }
int64_t scalar_int_value(const aclScalar* s) {
  return scalar_is_floating(s) ? saturating_int64(s->d) : s->i;
}
bool scalar_is_floating(const aclScalar* s) {
  return s->dtype == ACL_FLOAT || s->dtype == ACL_DOUBLE || s->dtype == ACL_FLOAT16 || s->dtype == ACL_BF16;
}
bool scalar_is_bool(const aclScalar* s) { return s->dtype == ACL_BOOL; }
std::vector<int64_t> int_array(const aclIntArray* a) { return a ? a->values : std::vector<int64_t>(); }
std::vector<bool> bool_array(const aclBoolArray* a) { return a ? a->values : std::vector<bool>(); }
std::vector<const aclTensor*> tensor_list(const aclTensorList* l) {
  std::vector<const aclTensor*> v;
  if (l)
    for (aclTensor* t : l->tensors) v.push_back(t);
  return v;
}

cpu::Strided expand_to(const cpu::Strided& s, IntArrayRef shape) {
  cpu::Strided r(s.data, s.dtype, DimVector(shape), DimVector(shape.size(), 0));
  size_t lead = shape.size() - s.sizes.size();
  for (size_t i = 0; i < s.sizes.size(); ++i)
    if (s.sizes[i] == shape[lead + i]) r.strides[lead + i] = s.strides[i];
  return r;
}

aclnnStatus make_executor(const char* op, uint64_t workspace_size, Kernel kernel, uint64_t* workspaceSize,
                          aclOpExecutor** executor) {
  if (aclnnStatus s = check_not_null(op, {{"workspaceSize", workspaceSize}, {"executor", executor}})) return s;
  if (EMBER_UNLIKELY(detail::finalized()))  // Note [Runtime lifecycle]
    return error(ACLNN_ERR_RUNTIME_ERROR, std::string(op) + ": acl is not initialized (aclFinalize was called; call "
                                                           "aclInit first)");
  auto e = std::make_shared<Executor>();  // one allocation for the executor and its count
  e->workspace_size = workspace_size;
  e->kernel = std::move(kernel);
  e->device = detail::current_device();
  uintptr_t h = g_next_handle.fetch_add(1) * 64;
  {
    std::lock_guard<std::mutex> g(g_exec_mu);
    e->op = intern(op);
    detail::take_planned(&e->uses);
    executors()[h] = std::move(e);
  }
  Sources& src = tls_sources;
  std::copy(src.pending, src.pending + src.n, src.last);
  src.last_n = src.n;
  src.last_overflow = src.overflow;
  src.last_handle = h;
  src.n = 0;
  src.overflow = false;
  *workspaceSize = workspace_size;
  *executor = reinterpret_cast<aclOpExecutor*>(h);
  return ACLNN_SUCCESS;
}

aclnnStatus run_executor(const char* op, void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                         aclrtStream stream) {
  if (!executor) return null_arg(op, "executor");
  if (EMBER_UNLIKELY(detail::finalized()))  // Note [Runtime lifecycle]: the executor stays, unused
    return error(ACLNN_ERR_RUNTIME_ERROR, std::string(op) + ": acl is not initialized (aclFinalize was called; call "
                                                           "aclInit first)");
  // What needs no executor is looked up before the registry lock (these take other locks).
  detail::Allocation alloc;
  const bool workspace_live =
      workspaceSize > 0 && workspace && detail::translate(workspace, workspaceSize, &alloc) != nullptr;
  const int workspace_device = workspace ? detail::device_of(workspace) : -1;
  detail::StreamPtr s = detail::resolve_stream(stream);
  // The executor leaves the registry and its task enters the stream under one lock, so aclrtFree
  // (which searches both, Note [In-flight uses]) always finds the allocations it uses.
  std::unique_lock<std::mutex> g(g_exec_mu);
  auto it = executors().find(reinterpret_cast<uintptr_t>(executor));
  if (it == executors().end()) {
    g.unlock();
    return invalid(op, "the executor was already used or destroyed (aclnn executors are single-use: call the "
                       "GetWorkspaceSize phase again)");
  }
  std::shared_ptr<Executor> ex;
  std::shared_ptr<const AddressOverrides> addresses;  // a repeatable executor's, for this run
  if (it->second->repeatable) {
    ex = it->second;  // stays registered until aclDestroyAclOpExecutor
    auto r = repeats().find(it->first);
    if (r != repeats().end() && !r->second.addresses.empty())
      addresses = std::make_shared<const AddressOverrides>(r->second.addresses);
  } else {
    ex = std::move(it->second);
    executors().erase(it);  // from here on the executor is consumed
  }
  auto reject = [&](const std::string& msg) {
    g.unlock();
    return invalid(op, msg);
  };
  if (std::strcmp(ex->op, op) != 0) return reject(std::string("the executor was made by ") + ex->op + "GetWorkspaceSize, not " + op);
  if (workspaceSize > 0 && !workspace) {
    g.unlock();
    return null_arg(op, "workspace (workspaceSize > 0)");
  }
  if (workspaceSize < ex->workspace_size)
    return reject("workspaceSize " + std::to_string(workspaceSize) + " is smaller than the " +
                  std::to_string(ex->workspace_size) + " bytes phase 1 asked for");
  if (workspaceSize > 0 && (workspace_device != ex->device || !workspace_live))
    return reject("workspace is not " + std::to_string(workspaceSize) + " bytes of live device memory on npu:" +
                  std::to_string(ex->device));
  if (!s) return reject("not a live stream");
  if (s->device() != ex->device)
    return reject("stream belongs to npu:" + std::to_string(s->device()) + " but the op was planned on npu:" +
                  std::to_string(ex->device));
  uint64_t planned = ex->workspace_size;
  // The canaries may cover the caller's workspace beyond the planned size and the runtime's own
  // padding after the allocation, never bytes of the allocation the caller did not hand over
  // (a workspace carved out of a larger buffer).
  uintptr_t given_end = reinterpret_cast<uintptr_t>(workspace) + workspaceSize;
  uintptr_t alloc_end = alloc.addr + alloc.size > given_end ? given_end : alloc.addr + alloc.extent;
  detail::AllocList uses;
  if (ex->repeatable) {
    uses = ex->uses.copy();
    if (addresses)
      for (const auto& [src, addr] : *addresses) {
        detail::Allocation a;
        if (detail::translate(addr, 1, &a)) uses.add(a.addr);
      }
  } else {
    uses = std::move(ex->uses);
  }
  if (workspaceSize > 0) uses.add(alloc.addr);
  detail::Task task;
  task.name = ex->op;
  task.run = [ex, addresses, workspace, workspaceSize, planned, alloc_end] {
    // Workspace guard: poison the scratch, fence it with canaries, check afterwards.
    char* ws = workspace ? detail::host_ptr(workspace) : nullptr;
    size_t canary = 0;
    if (ws) {
      std::memset(ws, kPoison, workspaceSize);
      uintptr_t tail = reinterpret_cast<uintptr_t>(workspace) + planned;
      canary = std::min<size_t>(alloc_end - tail, kCanaryMax);
      std::memset(ws + planned, kCanary, canary);
    }
    KernelContext ctx(ws, planned, ex->device, addresses.get());
    ex->kernel(ctx);
    for (size_t i = 0; i < canary; ++i) {
      if (static_cast<unsigned char>(ws[planned + i]) != kCanary) {
        EMBER_THROW(Error, "workspace overrun: the kernel wrote byte ", i, " past the end of its ", planned,
                    "-byte workspace");
      }
    }
  };
  s->enqueue(std::move(task), std::move(uses));
  return ACLNN_SUCCESS;
}

// ---- repeatable executors (aclnn/aclnn_base.h) ----
extern "C" aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor) {
  const char* api = "aclSetAclOpExecutorRepeatable";
  if (!executor) return fail(ACLNN_ERR_PARAM_NULLPTR, std::string(api) + ": executor is null");
  uintptr_t h = reinterpret_cast<uintptr_t>(executor);
  std::lock_guard<std::mutex> g(g_exec_mu);
  auto it = executors().find(h);
  if (it == executors().end())
    return fail(ACLNN_ERR_PARAM_INVALID, std::string(api) + ": not a live executor (already run or destroyed)");
  if (it->second->repeatable) return ACLNN_SUCCESS;
  const Sources& src = tls_sources;
  if (src.last_handle != h)
    return fail(ACLNN_ERR_PARAM_INVALID, std::string(api) + ": call it right after the op's GetWorkspaceSize, on the "
                                                            "same thread (as CANN requires)");
  if (src.last_overflow)
    return fail(ACLNN_ERR_INNER, std::string(api) + ": " + it->second->op + " has more than " +
                                     std::to_string(Sources::kMax) + " tensors; it cannot be made repeatable");
  it->second->repeatable = true;
  repeats()[h].sources.assign(src.last, src.last + src.last_n);
  return ACLNN_SUCCESS;
}

extern "C" aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor* executor) {
  if (!executor) return fail(ACLNN_ERR_INNER_NULLPTR, "aclDestroyAclOpExecutor: executor is null");
  uintptr_t h = reinterpret_cast<uintptr_t>(executor);
  std::lock_guard<std::mutex> g(g_exec_mu);
  if (executors().erase(h) == 0)
    return fail(ACLNN_ERR_PARAM_INVALID, "aclDestroyAclOpExecutor: not a live executor (a single-use executor is "
                                         "consumed by its phase 2; destroyed twice?)");
  repeats().erase(h);  // queued runs keep their own copy of the executor and the addresses
  return ACLNN_SUCCESS;
}

namespace {
// Points a repeatable executor's tensor (named by the descriptor given to phase 1) at addr for
// the runs launched from now on. index is CANN's input or output position; the descriptor is
// what identifies the tensor here, so it must be the one phase 1 saw (not a copy made since).
aclnnStatus set_tensor_addr(const char* api, aclOpExecutor* executor, const void* tensor, void* addr) {
  if (!executor || !tensor || !addr)
    return fail(ACLNN_ERR_PARAM_NULLPTR,
                std::string(api) + ": " + (!executor ? "executor" : !tensor ? "tensor" : "addr") + " is null");
  if (detail::device_of(addr) < 0)
    return fail(ACLNN_ERR_PARAM_INVALID, std::string(api) + ": addr is not device memory (a host pointer?)");
  std::lock_guard<std::mutex> g(g_exec_mu);
  auto r = repeats().find(reinterpret_cast<uintptr_t>(executor));
  if (r == repeats().end())
    return fail(ACLNN_ERR_PARAM_INVALID, std::string(api) + ": not a live repeatable executor (call "
                                                            "aclSetAclOpExecutorRepeatable right after phase 1)");
  const auto& srcs = r->second.sources;
  if (std::find(srcs.begin(), srcs.end(), tensor) == srcs.end())
    return fail(ACLNN_ERR_PARAM_INVALID, std::string(api) + ": the tensor is not one this executor's op was "
                                                            "planned with (pass the aclTensor given to phase 1)");
  for (auto& [src, a] : r->second.addresses)
    if (src == tensor) {
      a = addr;
      return ACLNN_SUCCESS;
    }
  r->second.addresses.emplace_back(tensor, addr);
  return ACLNN_SUCCESS;
}
}  // namespace

extern "C" aclnnStatus aclSetInputTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor,
                                             void* addr) {
  (void)index;
  return set_tensor_addr("aclSetInputTensorAddr", executor, tensor, addr);
}

extern "C" aclnnStatus aclSetOutputTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor,
                                              void* addr) {
  (void)index;
  return set_tensor_addr("aclSetOutputTensorAddr", executor, tensor, addr);
}

// A tensor of a list input (Cat's): the list's element at relativeIndex.
extern "C" aclnnStatus aclSetDynamicInputTensorAddr(aclOpExecutor* executor, size_t irIndex,
                                                    const size_t relativeIndex, aclTensorList* tensors, void* addr) {
  (void)irIndex;
  const char* api = "aclSetDynamicInputTensorAddr";
  if (!tensors) return fail(ACLNN_ERR_PARAM_NULLPTR, std::string(api) + ": tensors is null");
  if (!detail::descriptor_live(tensors) || relativeIndex >= tensors->tensors.size())
    return fail(ACLNN_ERR_PARAM_INVALID, std::string(api) + ": relativeIndex " + std::to_string(relativeIndex) +
                                             " is not an element of a live aclTensorList");
  return set_tensor_addr(api, executor, tensors->tensors[relativeIndex], addr);
}

namespace detail {
bool planned_use(uintptr_t a, const char** op) {
  std::lock_guard<std::mutex> g(g_exec_mu);
  for (const auto& [handle, e] : executors()) {
    if (e->uses.has(a)) {
      *op = e->op;
      return true;
    }
  }
  return false;
}
}  // namespace detail

}  // namespace npu
}  // namespace ember
