// ember (internal to nn/): files written atomically (Note [Atomic saves], nn/atomic_file.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ember {
namespace nn {

// A run of bytes to write.
struct FileChunk {
  const void* data;
  size_t size;
};

// Writes header, then the chunks, to path: a reader sees the old file or the new one, whole. An
// ember::Error names the step that failed (disk full among them); the target is then untouched.
void write_atomically(const std::string& path, const std::string& header, const std::vector<FileChunk>& chunks);

}  // namespace nn
}  // namespace ember
