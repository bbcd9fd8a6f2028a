// ember: the dispatcher (operator registry), modelled on c10's but kept flat.
//
// Each operator has an entry with its schema, the kernels registered per dispatch key (later
// registrations shadow earlier ones) and a computed table indexed by runtime key. A call's key is
// the highest of (union of its tensors' key sets | thread-local included) - thread-local excluded,
// restricted to the keys the op handles (a key without a kernel that falls through is skipped).
#pragma once

#include <array>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ember/device/profiler.h"
#include "ember/dispatch/kernel_function.h"
#include "ember/dispatch/schema.h"
#include "ember/tensor/dispatch_key.h"

namespace ember {

// ---- thread-local included/excluded keys (NoGradGuard, autocast, redispatch) ----
struct LocalDispatchKeySet {
  DispatchKeySet included;
  DispatchKeySet excluded;
};
LocalDispatchKeySet& tls_dispatch_keys();

class ExcludeDispatchKeyGuard {
 public:
  explicit ExcludeDispatchKeyGuard(DispatchKeySet ks);
  explicit ExcludeDispatchKeyGuard(DispatchKey k) : ExcludeDispatchKeyGuard(DispatchKeySet(k)) {}
  ~ExcludeDispatchKeyGuard();
  ExcludeDispatchKeyGuard(const ExcludeDispatchKeyGuard&) = delete;
  ExcludeDispatchKeyGuard& operator=(const ExcludeDispatchKeyGuard&) = delete;

 private:
  DispatchKeySet prev_;
};

class IncludeDispatchKeyGuard {
 public:
  explicit IncludeDispatchKeyGuard(DispatchKey k);
  ~IncludeDispatchKeyGuard();
  IncludeDispatchKeyGuard(const IncludeDispatchKeyGuard&) = delete;
  IncludeDispatchKeyGuard& operator=(const IncludeDispatchKeyGuard&) = delete;

 private:
  DispatchKeySet prev_;
};

namespace detail {
inline DispatchKeySet keys_of(const Tensor& t) {
  return t.defined() ? t.impl()->key_set() : DispatchKeySet();
}
inline DispatchKeySet keys_of(const std::optional<Tensor>& t) {
  return t && t->defined() ? t->impl()->key_set() : DispatchKeySet();
}
inline DispatchKeySet keys_of(const std::vector<Tensor>& ts) {
  DispatchKeySet ks;
  for (const Tensor& t : ts) ks = ks | keys_of(t);
  return ks;
}
template <class T>
inline DispatchKeySet keys_of(const T&) {
  return DispatchKeySet();
}
}  // namespace detail

class OperatorEntry;

// Note [Write checks]
// Every call of an op whose schema writes a tensor (Tensor(a!): in-place and out forms, built-in or
// a user's) is checked once, at its first dispatch, before any kernel runs, on the CPU and the NPU
// alike (dispatch/write_checks.cpp, with core/memory_overlap.h's geometry):
//  - a written-to tensor whose elements alias each other (an expanded view) is refused, but for ops
//    whose schema says writes_idempotent (fill_, zero_), as in PyTorch;
//  - an input in partial overlap with a written-to tensor (both dense, same memory, another layout:
//    a[1:] += a[:-1], b.copy_(b.t())) is refused, as in PyTorch; an input of the identical layout
//    (the element-wise in-place case) is allowed;
//  - an input that shares elements with a written-to tensor where one of them is not dense
//    (a[:, 1:] += a[:, :-1]; PyTorch cannot tell these and computes what the loop order gives) is
//    read from a snapshot (a clone), so the result is the one of unaliased inputs; an optional or
//    list argument cannot be replaced and is refused instead;
//  - two written-to tensors that share memory are refused.
// The errors are MemoryOverlapError and name the op, the arguments and their layouts.
namespace detail {
struct WriteArg {
  const Tensor* tensor = nullptr;             // a Tensor, or a present Tensor?
  const std::vector<Tensor>* list = nullptr;  // a Tensor[]
  bool replaceable = false;                   // a snapshot can stand in for it in the call
};
inline WriteArg write_arg(const Tensor& t) { return {&t, nullptr, true}; }
inline WriteArg write_arg(const std::optional<Tensor>& t) { return {t ? &*t : nullptr, nullptr, false}; }
inline WriteArg write_arg(const std::vector<Tensor>& ts) { return {nullptr, &ts, false}; }
template <class T>
inline WriteArg write_arg(const T&) {
  return {};
}
// Runs the checks; returns true when some input must be read from the snapshot left in
// snapshots[i] (n entries).
bool check_writes(const OperatorEntry& e, const WriteArg* args, size_t n, Tensor* snapshots);
bool check_writes_boxed(const OperatorEntry& e, Stack* stack);  // replaces the stack's entries
// The argument as passed, or its snapshot.
template <class A>
struct Snapshot {
  static A pick(A a, const Tensor&) { return a; }
};
template <>
struct Snapshot<const Tensor&> {
  static const Tensor& pick(const Tensor& a, const Tensor& s) { return s.defined() ? s : a; }
};
}  // namespace detail
template <class Sig>
class TypedOperatorHandle;

// The arguments' shapes and dtypes for the profiler: "float32[2, 3], float32[3], scalar".
std::string describe_arguments(const Stack& args);

class OperatorHandle {
 public:
  explicit OperatorHandle(OperatorEntry* e = nullptr) : entry_(e) {}
  const FunctionSchema& schema() const;
  const std::string& name() const;  // "ember::add.Scalar"
  bool has_kernel(DispatchKey k) const;
  OperatorEntry* entry() const { return entry_; }

  enum class AutogradSupport { Differentiable, NotDifferentiable, NoDoubleBackward, Unsupported, Missing };
  // Differentiable: an Autograd kernel records a backward, or the op is CompositeImplicit (its
  // constituents record). Missing: only the generic fallback (which rejects inputs that
  // require grad).
  AutogradSupport autograd_support() const;

  // Checks Sig against the schema's canonical signature; throws TypeError on mismatch.
  template <class Sig>
  TypedOperatorHandle<Sig> typed() const;

  // Boxed call: the stack holds the arguments (missing trailing ones take their defaults) and
  // receives the returns.
  void call_boxed(Stack* stack) const;
  void redispatch_boxed(DispatchKeySet ks, Stack* stack) const;

 private:
  void check_signature(const std::string& sig) const;
  OperatorEntry* entry_;
};

class OperatorEntry {
 public:
  explicit OperatorEntry(std::string name) : name_(std::move(name)) {}

  const FunctionSchema& schema() const { return schema_; }
  bool has_schema() const { return has_schema_; }
  const std::string& name() const { return name_; }
  DispatchKeySet mask() const { return mask_; }

  // Key for a call given the union of the arguments' key sets.
  DispatchKey dispatch_key(DispatchKeySet arg_keys) const {
    const LocalDispatchKeySet& tls = tls_dispatch_keys();
    return (((arg_keys | tls.included) - tls.excluded) & mask_).highest();
  }
  // The schema writes a tensor (Note [Write checks]); written_args() are their indices.
  bool writes() const { return !written_.empty(); }
  const std::vector<size_t>& written_args() const { return written_; }
  const KernelFunction& lookup(DispatchKey k) const {
    const KernelFunction& kf = table_[static_cast<int>(k)];
    if (EMBER_UNLIKELY(!kf.valid())) report_missing(k);
    return kf;
  }
  [[noreturn]] void report_missing(DispatchKey k) const;

 private:
  friend class Dispatcher;
  friend class OperatorHandle;
  struct Registration {
    uint64_t id;
    KernelFunction kernel;
  };
  void recompute();

  std::string name_;
  FunctionSchema schema_;
  bool has_schema_ = false;
  std::vector<size_t> written_;  // the schema's Tensor(a!) arguments
  uint64_t schema_id_ = 0;
  std::string schema_debug_;
  std::array<std::vector<Registration>, kNumDispatchKeys> kernels_;  // per key, newest last
  std::array<KernelFunction, kNumRuntimeKeys> table_;
  DispatchKeySet mask_;
  DispatchKeySet from_fallback_;  // table entries filled by a key-wide fallback
  std::vector<std::string> notes_;  // registration history for dump()
};

template <class R, class... Args>
class TypedOperatorHandle<R(Args...)> {
 public:
  TypedOperatorHandle() = default;
  explicit TypedOperatorHandle(OperatorEntry* e) : entry_(e) {}

  R call(Args... args) const {
    DispatchKeySet ks = (DispatchKeySet() | ... | detail::keys_of(args));
    const KernelFunction& k = entry_->lookup(entry_->dispatch_key(ks));
    if (EMBER_UNLIKELY(entry_->writes())) return call_writing(k, std::index_sequence_for<Args...>(), args...);
    if (EMBER_UNLIKELY(profiler::detail::enabled())) return call_profiled(k, args...);  // the profiler's one branch
    return call_kernel(k, args...);
  }
  // Calls the kernel of the highest key in ks (no thread-local state applied).
  R redispatch(DispatchKeySet ks, Args... args) const {
    return call_kernel(entry_->lookup(ks.highest()), args...);
  }
  // The key set a call with these arguments would use (after thread-local state and the mask).
  DispatchKeySet key_set(Args... args) const {
    DispatchKeySet ks = (DispatchKeySet() | ... | detail::keys_of(args));
    const LocalDispatchKeySet& tls = tls_dispatch_keys();
    return ((ks | tls.included) - tls.excluded) & entry_->mask();
  }
  OperatorHandle handle() const { return OperatorHandle(entry_); }

 private:
  __attribute__((always_inline)) R call_kernel(const KernelFunction& k, Args... args) const {
    if (EMBER_LIKELY(k.unboxed != nullptr)) return reinterpret_cast<R (*)(Args...)>(k.unboxed)(args...);
    Stack s;
    s.reserve(sizeof...(Args));
    (s.push_back(detail::ArgTraits<Args>::box(args)), ...);
    k.boxed(OperatorHandle(entry_), &s);
    return detail::PopReturn<R>::pop(&s);
  }
  // An op that writes a tensor: Note [Write checks], then the call, with snapshots where needed.
  template <size_t... I>
  __attribute__((noinline)) R call_writing(const KernelFunction& k, std::index_sequence<I...>, Args... args) const {
    const detail::WriteArg w[sizeof...(Args) + 1] = {detail::write_arg(args)..., {}};
    Tensor snaps[sizeof...(Args) + 1];
    if (EMBER_UNLIKELY(detail::check_writes(*entry_, w, sizeof...(Args), snaps))) {
      if (profiler::detail::enabled()) return call_profiled(k, detail::Snapshot<Args>::pick(args, snaps[I])...);
      return call_kernel(k, detail::Snapshot<Args>::pick(args, snaps[I])...);
    }
    if (profiler::detail::enabled()) return call_profiled(k, args...);
    return call_kernel(k, args...);
  }
  // Out of line: the recording code stays off the fast path's instruction stream.
  __attribute__((noinline)) R call_profiled(const KernelFunction& k, Args... args) const {
    profiler::detail::Scope scope("op", entry_->name(), profiler::detail::record_shapes() ? describe(args...) : "");
    return call_kernel(k, args...);
  }
  static std::string describe(Args... args) {
    Stack s;
    (s.push_back(detail::ArgTraits<Args>::box(args)), ...);
    return describe_arguments(s);
  }
  OperatorEntry* entry_ = nullptr;
};

template <class Sig>
TypedOperatorHandle<Sig> OperatorHandle::typed() const {
  check_signature(detail::SignatureOf<Sig>::str());
  return TypedOperatorHandle<Sig>(entry_);
}

class Dispatcher {
 public:
  static Dispatcher& singleton();

  // "ns::name" or "ns::name.overload"; throws NotImplementedError if absent.
  OperatorHandle find_schema(const std::string& name);
  std::optional<OperatorHandle> find(const std::string& name);
  void call_boxed(const std::string& name, Stack& stack);
  void call_boxed(const std::string& name, Stack* stack) { call_boxed(name, *stack); }
  std::vector<std::string> list_ops();
  // Schema, registered kernels per key (with where they came from), computed table.
  std::string dump(const std::string& name);

  // Registration (used by Library). Each returns an id for deregistration.
  uint64_t register_schema(FunctionSchema schema, const std::string& debug);
  uint64_t register_kernel(const std::string& op, DispatchKey key, KernelFunction kernel);
  uint64_t register_fallback(DispatchKey key, KernelFunction kernel);
  // The Autocast kernel of every op whose schema declares `policy` and which has no Autocast kernel
  // of its own (nn/amp registers one per policy).
  uint64_t register_policy_fallback(AmpPolicy policy, KernelFunction kernel);
  void deregister(uint64_t id);
  // Errors raised while running EMBER_LIBRARY blocks at static initialisation are kept here and
  // rethrown by the first lookup of the affected op (a throw during static init would abort).
  void record_registration_error(const std::string& op, const std::string& msg);
  std::vector<std::string> registration_errors();

  const KernelFunction* fallback(DispatchKey key) const;
  const KernelFunction* policy_fallback(AmpPolicy policy) const;

 private:
  Dispatcher() = default;
  OperatorEntry* entry_locked(const std::string& name);
  void recompute_all_locked();

  std::mutex mu_;
  std::list<OperatorEntry> entries_;
  std::map<std::string, OperatorEntry*> by_name_;
  std::array<std::vector<std::pair<uint64_t, KernelFunction>>, kNumRuntimeKeys> fallbacks_;
  std::array<std::vector<std::pair<uint64_t, KernelFunction>>, 4> policy_fallbacks_;  // by AmpPolicy
  std::map<uint64_t, std::pair<std::string, DispatchKey>> registrations_;  // id -> (op, key)
  std::map<std::string, std::string> errors_;  // op -> first registration error
  uint64_t next_id_ = 1;
};

}  // namespace ember
