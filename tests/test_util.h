// Helpers shared by the tests.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include <ember/ember.h>

namespace ember_test {

// Built with a sanitizer (ASan/UBSan/TSan): instrumented kernels run several times slower than
// uninstrumented libraries (oneDNN), so how time divides between ops says nothing there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(undefined_behavior_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// A copy of t's whole storage with t's exact sizes/strides/offset (CPU).
inline ember::Tensor deep_copy(const ember::Tensor& t) {
  using namespace ember;
  size_t nbytes = t.impl()->storage()->nbytes();
  int64_t elems = static_cast<int64_t>(nbytes / t.element_size());
  Tensor buf = empty({elems}, t.dtype());
  if (nbytes) std::memcpy(buf.raw_data_ptr(), t.impl()->storage()->data(), nbytes);
  return buf.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

// Expects `fn` to throw E with a message containing every one of `parts`.
template <class E, class Fn>
void expect_error(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "expected an exception";
  } catch (const E& e) {
    std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message lacks '" << p << "': " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

}  // namespace ember_test
