// Executors (single-use handles for planned kernels), phase 2 with the workspace guard, and the
// tensor references of phase 1 (the checks of kernel.h are in aclnn_checks.cpp).

#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_map>

#include "ember/core/error.h"
#include "ember/device/npu/descriptors.h"
#include "ember/device/npu/kernel.h"
#include "ember/device/npu/runtime.h"
#include "ember/device/profiler.h"

namespace ember {
namespace npu {

using detail::fail;

namespace {

constexpr unsigned char kPoison = 0xFF;  // workspace contents before a kernel: NaN for floats
constexpr unsigned char kCanary = 0xA5;  // bytes after the workspace
constexpr size_t kCanaryMax = 4096;
// Workspaces up to kWholePoison bytes are poisoned whole before each kernel. Larger ones (a
// staged GEMM's fp32 copies of its operands: tens of MiB) would cost a write pass per launch, 10 ms
// of a 43 ms step (BM_llama_mlp_step/npu/bf16/64); their first and last kWholePoison / 2 bytes
// and one 64-byte line of every 4 KiB in between are poisoned, so a kernel that reads any 4 KiB
// run of scratch before writing it still meets NaNs. EMBER_NPU_WORKSPACE_POISON=full poisons all.
constexpr size_t kWholePoison = size_t(64) << 10;

void poison_workspace(char* ws, size_t size) {
  if (size <= kWholePoison || detail::full_workspace_poison()) {
    std::memset(ws, kPoison, size);
    return;
  }
  constexpr size_t kEdge = kWholePoison / 2, kPage = 4096, kLine = 64;
  std::memset(ws, kPoison, kEdge);
  std::memset(ws + size - kEdge, kPoison, kEdge);
  for (size_t at = kEdge; at + kLine <= size - kEdge; at += kPage) std::memset(ws + at, kPoison, kLine);
}

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
  const int64_t reach = reach_elements(t);
  if (reach > numel_of(IntArrayRef(t->storage))) r.storage = DimVector{reach};  // (a view past its storage dims)
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

// Phase 1 failed: what ref() noted for the executor it did not make is dropped.
void drop_notes() {
  detail::drop_planned();
  tls_sources.n = 0;
  tls_sources.overflow = false;
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

namespace {

// Phase 2's executor, looked up (g_exec_mu held) and, unless repeatable, consumed: a repeatable
// one stays registered until aclDestroyAclOpExecutor and brings the addresses set for this run.
bool claim(aclOpExecutor* executor, std::shared_ptr<Executor>* ex, std::shared_ptr<const AddressOverrides>* addresses) {
  auto it = executors().find(reinterpret_cast<uintptr_t>(executor));
  if (it == executors().end()) return false;
  if (it->second->repeatable) {
    *ex = it->second;
    auto r = repeats().find(it->first);
    if (r != repeats().end() && !r->second.addresses.empty())
      *addresses = std::make_shared<const AddressOverrides>(r->second.addresses);
  } else {
    *ex = std::move(it->second);
    executors().erase(it);  // from here on the executor is consumed
  }
  return true;
}

// What is wrong with phase 2's arguments for executor ex (empty: nothing).
std::string run_mismatch(const Executor& ex, const char* op, uint64_t workspace_size, int workspace_device,
                         bool workspace_live, const detail::StreamPtr& s) {
  if (std::strcmp(ex.op, op) != 0) return std::string("the executor was made by ") + ex.op + "GetWorkspaceSize, not " + op;
  if (workspace_size < ex.workspace_size)
    return "workspaceSize " + std::to_string(workspace_size) + " is smaller than the " +
           std::to_string(ex.workspace_size) + " bytes phase 1 asked for";
  if (workspace_size > 0 && (workspace_device != ex.device || !workspace_live))
    return "workspace is not " + std::to_string(workspace_size) + " bytes of live device memory on npu:" +
           std::to_string(ex.device);
  if (!s) return "not a live stream";
  if (s->device() != ex.device)
    return "stream belongs to npu:" + std::to_string(s->device()) + " but the op was planned on npu:" +
           std::to_string(ex.device);
  return {};
}

// The allocations a run reads or writes (Note [In-flight uses]): the executor's, a repeatable
// one's new addresses, and the workspace's.
detail::AllocList run_uses(Executor& ex, const AddressOverrides* addresses, uint64_t workspace_size,
                           uintptr_t workspace_alloc) {
  detail::AllocList uses;
  if (ex.repeatable) {
    uses = ex.uses.copy();
    if (addresses)
      for (const auto& [src, addr] : *addresses) {
        detail::Allocation a;
        if (detail::translate(addr, 1, &a)) uses.add(a.addr);
      }
  } else {
    uses = std::move(ex.uses);
  }
  if (workspace_size > 0) uses.add(workspace_alloc);
  return uses;
}

// The kernel inside the workspace guard: the scratch poisoned, fenced with canaries up to
// alloc_end, checked afterwards.
detail::Task guarded_task(std::shared_ptr<Executor> ex, std::shared_ptr<const AddressOverrides> addresses,
                          void* workspace, uint64_t workspace_size, uintptr_t alloc_end) {
  detail::Task task;
  task.name = ex->op;
  const uint64_t planned = ex->workspace_size;
  task.run = [ex, addresses, workspace, workspace_size, planned, alloc_end] {
    char* ws = workspace ? detail::host_ptr(workspace) : nullptr;
    size_t canary = 0;
    if (ws) {
      poison_workspace(ws, workspace_size);
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
  return task;
}

}  // namespace

aclnnStatus run_executor(const char* op, void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                         aclrtStream stream) {
  // Every phase 2 (ember's ops, CANN programs' own calls, user kernels) is a host range of the
  // profile, named by the op (phase 1 is recorded by ember's callers, ops/npu_exec.h).
  profiler::detail::Scope scope("aclnn", profiler::detail::enabled() ? std::string(op) : std::string());
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
  std::shared_ptr<Executor> ex;
  std::shared_ptr<const AddressOverrides> addresses;
  if (!claim(executor, &ex, &addresses)) {
    g.unlock();
    return invalid(op, "the executor was already used or destroyed (aclnn executors are single-use: call the "
                       "GetWorkspaceSize phase again)");
  }
  if (workspaceSize > 0 && !workspace && std::strcmp(ex->op, op) == 0) {
    g.unlock();
    return null_arg(op, "workspace (workspaceSize > 0)");
  }
  std::string wrong = run_mismatch(*ex, op, workspaceSize, workspace_device, workspace_live, s);
  if (!wrong.empty()) {
    g.unlock();
    return invalid(op, wrong);
  }
  // The canaries may cover the caller's workspace beyond the planned size and the runtime's own
  // padding after the allocation, never bytes of the allocation the caller did not hand over
  // (a workspace carved out of a larger buffer).
  uintptr_t given_end = reinterpret_cast<uintptr_t>(workspace) + workspaceSize;
  uintptr_t alloc_end = alloc.addr + alloc.size > given_end ? given_end : alloc.addr + alloc.extent;
  detail::AllocList uses = run_uses(*ex, addresses.get(), workspaceSize, alloc.addr);
  s->enqueue(guarded_task(ex, addresses, workspace, workspaceSize, alloc_end), std::move(uses));
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
