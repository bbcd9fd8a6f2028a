// The command lines of the libtorch examples (ember's own, not part of the ported programs):
// --help or -h prints the usage, every option with its meaning, and exits with 0; an option
// without its value or an unknown one prints the usage to stderr and exits with 2.
#pragma once

#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>

namespace cli {

inline bool help_asked(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  return false;
}

// Calls take(name, value) for each "--name value" pair (flags: names in `flags`, value "1");
// returns -1 to go on, or the exit code: 0 after --help, 2 after a bad command line.
inline int parse(int argc, char** argv, const char* usage, const std::function<bool(const std::string&, const std::string&)>& take,
                 std::initializer_list<const char*> flags = {}) {
  if (help_asked(argc, argv)) {
    std::cout << usage;
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    bool flag = false;
    for (const char* f : flags) flag = flag || k == f;
    if (flag) {
      if (!take(k, "1")) break;
      continue;
    }
    if (i + 1 >= argc || !take(k, argv[i + 1])) {
      std::cerr << (i + 1 >= argc ? "missing value for " : "unknown option ") << k << "\n" << usage;
      return 2;
    }
    ++i;
  }
  return -1;
}

}  // namespace cli
