// ember: strict parsing of ember's environment variables (EMBER_NPU_MEMORY, EMBER_NPU_DEVICES,
// EMBER_NPU_CORES, EMBER_CPU_CACHE_MB). Unset or empty: no value. Anything else must be a whole
// number in [lo, hi], in full; otherwise a ValueError names the variable, its value and what was
// expected. "1e30", "inf", "nan", "-1", "12abc" and out-of-range values are all refused.
#pragma once

#include <cstdint>
#include <optional>

namespace ember {

std::optional<int64_t> env_int(const char* name, int64_t lo, int64_t hi);
// A byte count: digits with an optional K, M, G or T suffix (powers of 1024, either case, an
// optional trailing B or iB: "512M", "8GiB", "4096").
std::optional<uint64_t> env_bytes(const char* name, uint64_t lo, uint64_t hi);

}  // namespace ember
