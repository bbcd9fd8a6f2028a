// Fuzzes the operator schema parser (dispatch/schema.h): any text either throws ember::Error
// or parses, and then prints as text that parses again to the same schema (an exception there,
// or a different schema, is a finding).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <ember/ember.h>
#include <ember/dispatch/schema.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string printed;
  try {
    printed = ember::parse_schema("fuzz", text).str();  // "fuzz::name(...) -> ..."
  } catch (const ember::Error&) {
    return 0;
  }
  // What parsed must print as text that parses back to the same schema.
  ember::FunctionSchema again = ember::parse_schema("fuzz", printed.substr(printed.find("::") + 2));
  if (again.str() != printed) std::abort();
  return 0;
}
