// ember: the registration API, the same for built-in and user ops.
//
//   namespace op {
//   EMBER_DECLARE_OP(scale_shift, Keep, "myops::scale_shift(Tensor x, float a, float b) -> Tensor",
//                    Tensor(const Tensor&, double, double));
//   }
//   EMBER_LIBRARY(myops, m) { m.def(op::scale_shift()); }
//   EMBER_LIBRARY_IMPL(myops, CPU, m) { m.impl(op::scale_shift(), &scale_shift_cpu); }
//   Tensor y = op::scale_shift::call(x, 2.0, 1.0);
//
// The declaration (dispatch/op_decl.h) names the op once and lets the compiler check the kernels'
// types. The string forms remain, as in PyTorch (checked when registered and at the first typed
// call):
//   EMBER_LIBRARY(myops, m) { m.def("scale_shift(Tensor x, float a, float b) -> Tensor"); }
//   EMBER_LIBRARY_IMPL(myops, CPU, m) { m.impl("scale_shift", &scale_shift_cpu); }
//   EMBER_LIBRARY_IMPL(_, Autocast, m) { m.fallback(KernelFunction::make_fallthrough()); }
//
// The blocks run at static initialisation. A Library object made at run time (e.g. in a test)
// removes its registrations when destroyed, restoring what was there before.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/op_decl.h"

namespace ember {

// What a schema's text cannot say about an op (PyTorch's native_functions.yaml tags).
enum class OpTag {
  // Writes one value to every element of its written-to tensors (fill_, zero_): a written-to
  // tensor whose elements alias each other is allowed (Note [Write checks] in dispatcher.h).
  WritesIdempotent,
  // The op's autocast policy (AmpPolicy in schema.h); without one autocast keeps its dtypes.
  AutocastLower,
  AutocastFloat32,
  AutocastPromote,
};

class Library {
 public:
  enum class Kind { Def, Impl };
  // ns "_" with Kind::Impl is for fallbacks only.
  Library(Kind kind, std::string ns, DispatchKey key = DispatchKey::Undefined, const char* file = "",
          int line = 0);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // Declares an operator of this namespace.
  Library& def(const std::string& schema);
  Library& def(const std::string& schema, std::initializer_list<OpTag> tags);
  // Declares an operator and registers fn as its CompositeImplicit kernel (written in terms of
  // other ops, so it needs no per-backend kernel and no backward of its own).
  template <class R, class... Args>
  Library& def(const std::string& schema, R (*fn)(Args...)) {
    def(schema);
    std::string name = schema.substr(0, schema.find('('));
    return impl_for(DispatchKey::CompositeImplicit, name, KernelFunction::from_unboxed(fn));
  }

  // The forms taking a declaration (dispatch/op_decl.h): the schema, name and policy come from
  // it, and a kernel whose type is not the declared signature does not compile.
  template <class D, std::enable_if_t<is_op_decl<D>::value, int> = 0>
  Library& def(D) {
    static_assert(D::check());
    return def_schema(std::string(D::schema), D::writes_idempotent, D::amp);
  }
  template <class D, std::enable_if_t<is_op_decl<D>::value, int> = 0>
  Library& def(D d, typename D::Fn fn) {
    def(d);
    return impl_for(DispatchKey::CompositeImplicit, std::string(D::local_name()), KernelFunction::from_unboxed(fn));
  }
  template <class D, std::enable_if_t<is_op_decl<D>::value, int> = 0>
  Library& impl(D, typename D::Fn fn) {
    return impl_for(key_, std::string(D::local_name()), KernelFunction::from_unboxed(fn));
  }
  template <class D, std::enable_if_t<is_op_decl<D>::value, int> = 0>
  Library& impl(D, DispatchKey key, typename D::Fn fn) {
    return impl_for(key, std::string(D::local_name()), KernelFunction::from_unboxed(fn));
  }
  // A kernel built elsewhere (autograd_kernel, a boxed kernel) for a declared op.
  template <class D, std::enable_if_t<is_op_decl<D>::value, int> = 0>
  Library& impl(D, KernelFunction kernel) {
    return impl_for(key_, std::string(D::local_name()), std::move(kernel));
  }
  template <class D, std::enable_if_t<is_op_decl<D>::value, int> = 0>
  Library& impl_not_differentiable(D) {
    return impl_not_differentiable(std::string(D::local_name()));
  }
  template <class D, std::enable_if_t<is_op_decl<D>::value, int> = 0>
  Library& impl_autograd_unsupported(D, const std::string& reason) {
    return impl_autograd_unsupported(std::string(D::local_name()), reason);
  }

  // Registers fn for this library's key (EMBER_LIBRARY_IMPL) under name ("op" or "op.overload").
  template <class R, class... Args>
  Library& impl(const std::string& name, R (*fn)(Args...)) {
    return impl_for(key_, name, KernelFunction::from_unboxed(fn));
  }
  // Registers fn for an explicit key (e.g. CompositeExplicit from inside EMBER_LIBRARY).
  template <class R, class... Args>
  Library& impl(const std::string& name, DispatchKey key, R (*fn)(Args...)) {
    return impl_for(key, name, KernelFunction::from_unboxed(fn));
  }
  Library& impl_boxed(const std::string& name, BoxedKernel fn);
  // A boxed Autograd-key kernel with its tag (autograd/op_spec.h's impl_no_double_backward).
  Library& impl_boxed(const std::string& name, BoxedKernel fn, AutogradTag tag);
  // For EMBER_LIBRARY_IMPL(ns, Autograd, m): the op's outputs never require grad (comparisons,
  // argmax, ...); calls go straight to the backend.
  Library& impl_not_differentiable(const std::string& name);
  // For EMBER_LIBRARY_IMPL(ns, Autograd, m): the op has no backward yet; calling it with an
  // input that requires grad (in grad mode) throws NotImplementedError with `reason`.
  Library& impl_autograd_unsupported(const std::string& name, const std::string& reason);
  Library& fallback(KernelFunction kernel);
  // For EMBER_LIBRARY_IMPL(_, Autocast, m): the kernel of the ops declaring `policy`.
  Library& fallback(KernelFunction kernel, AmpPolicy policy);

  const std::string& ns() const { return ns_; }
  DispatchKey key() const { return key_; }

 private:
  Library& impl_for(DispatchKey key, const std::string& name, KernelFunction kernel);
  Library& def_schema(const std::string& schema, bool writes_idempotent, AmpPolicy amp);
  std::string qualify(const std::string& name) const;
  std::string where() const;

  Kind kind_;
  std::string ns_;
  DispatchKey key_;
  std::string file_;
  int line_;
  std::vector<uint64_t> ids_;
  bool keep_ = false;
  friend struct LibraryInit;
};

// Runs a registration block at static initialisation; the registrations stay for the process.
// Errors are recorded in the dispatcher (see Dispatcher::record_registration_error), not thrown.
struct LibraryInit {
  LibraryInit(Library::Kind kind, const char* ns, DispatchKey key, void (*fn)(Library&), const char* file,
              int line);
};

}  // namespace ember

#define EMBER_CONCAT_INNER(a, b) a##b
#define EMBER_CONCAT(a, b) EMBER_CONCAT_INNER(a, b)

#define EMBER_LIBRARY_BLOCK(kind, ns, key, m, uid)                                                  \
  static void uid(::ember::Library&);                                                              \
  static const ::ember::LibraryInit EMBER_CONCAT(uid, _init)(kind, #ns, key, &uid, __FILE__, __LINE__); \
  static void uid(::ember::Library& m)

// Defines operators of namespace ns (may appear in several files of one namespace).
#define EMBER_LIBRARY(ns, m) \
  EMBER_LIBRARY_BLOCK(::ember::Library::Kind::Def, ns, ::ember::DispatchKey::Undefined, m, \
                      EMBER_CONCAT(ember_library_, __COUNTER__))
// Registers kernels of namespace ns for one dispatch key (CPU, NPU, Autograd, Autocast,
// CompositeExplicit, CompositeImplicit).
#define EMBER_LIBRARY_IMPL(ns, key, m) \
  EMBER_LIBRARY_BLOCK(::ember::Library::Kind::Impl, ns, ::ember::DispatchKey::key, m, \
                      EMBER_CONCAT(ember_library_impl_, __COUNTER__))
