// ember: error types and the EMBER_CHECK family.
//
// Every user mistake throws an ember::Error subclass whose message names the op, what was given
// and what was expected. Messages are formatted only on failure. The library never aborts.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace ember {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

#define EMBER_DEFINE_ERROR(Name)                                 \
  class Name : public Error {                                    \
   public:                                                       \
    explicit Name(const std::string& msg) : Error(msg) {}        \
  }

EMBER_DEFINE_ERROR(ShapeError);           // incompatible shapes, bad dims
EMBER_DEFINE_ERROR(DTypeError);           // unsupported or mismatched dtypes
EMBER_DEFINE_ERROR(DeviceError);          // wrong or mixed devices, host access to device data
EMBER_DEFINE_ERROR(IndexError);           // index or dim out of range
EMBER_DEFINE_ERROR(NotImplementedError);  // no kernel for an op/key, unsupported feature
EMBER_DEFINE_ERROR(OutOfMemoryError);     // an allocator could not satisfy a request
EMBER_DEFINE_ERROR(ValueError);           // an argument value outside its domain
EMBER_DEFINE_ERROR(TypeError);            // schema / typed signature / IValue type mismatch
EMBER_DEFINE_ERROR(InternalError);        // a broken invariant inside ember (a bug)
// A written-to tensor whose elements alias each other or an input in a way no result is defined
// for (PyTorch's "unsupported operation: ... refer to a single memory location").
EMBER_DEFINE_ERROR(MemoryOverlapError);
#undef EMBER_DEFINE_ERROR

namespace detail {
inline void append_all(std::ostringstream&) {}
template <class T, class... Rest>
void append_all(std::ostringstream& os, const T& v, const Rest&... rest) {
  os << v;
  append_all(os, rest...);
}
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  append_all(os, args...);
  return os.str();
}
template <class E, class... Args>
[[noreturn]] void throw_error(const Args&... args) {
  throw E(str_cat(args...));
}
}  // namespace detail

}  // namespace ember

#define EMBER_LIKELY(x) __builtin_expect(!!(x), 1)
#define EMBER_UNLIKELY(x) __builtin_expect(!!(x), 0)

// EMBER_CHECK_T(ErrorType, cond, message parts...)
#define EMBER_CHECK_T(E, cond, ...)                                     \
  do {                                                                  \
    if (EMBER_UNLIKELY(!(cond))) ::ember::detail::throw_error<E>(__VA_ARGS__); \
  } while (0)

#define EMBER_CHECK(cond, ...) EMBER_CHECK_T(::ember::Error, cond, __VA_ARGS__)
#define EMBER_CHECK_SHAPE(cond, ...) EMBER_CHECK_T(::ember::ShapeError, cond, __VA_ARGS__)
#define EMBER_CHECK_DTYPE(cond, ...) EMBER_CHECK_T(::ember::DTypeError, cond, __VA_ARGS__)
#define EMBER_CHECK_DEVICE(cond, ...) EMBER_CHECK_T(::ember::DeviceError, cond, __VA_ARGS__)
#define EMBER_CHECK_INDEX(cond, ...) EMBER_CHECK_T(::ember::IndexError, cond, __VA_ARGS__)
#define EMBER_CHECK_VALUE(cond, ...) EMBER_CHECK_T(::ember::ValueError, cond, __VA_ARGS__)
#define EMBER_CHECK_TYPE(cond, ...) EMBER_CHECK_T(::ember::TypeError, cond, __VA_ARGS__)
#define EMBER_THROW(E, ...) ::ember::detail::throw_error<E>(__VA_ARGS__)

// Internal invariant: stays on in release builds, throws InternalError with the location.
// Usage: EMBER_ASSERT(cond, "what was expected", values...).
#define EMBER_ASSERT(cond, ...)                                                    \
  do {                                                                            \
    if (EMBER_UNLIKELY(!(cond)))                                                  \
      ::ember::detail::throw_error<::ember::InternalError>(                       \
          "internal error (", __FILE__, ":", __LINE__, "): ", #cond, " failed: ", \
          __VA_ARGS__);                                                           \
  } while (0)
