// Saving and loading tensors in the safetensors format (https://github.com/huggingface/safetensors):
// an 8-byte little-endian header length, a JSON header {"name": {"dtype": "F32", "shape": [2, 3],
// "data_offsets": [begin, end]}, ..., "__metadata__": {...}}, then the raw little-endian data.
// Files move between ember and PyTorch (safetensors.torch.load_file / save_file).
#pragma once

#include <map>
#include <string>

#include "ember/nn/module.h"

namespace ember {
namespace nn {

// Writes the tensors (any device; all seven dtypes) atomically: a temporary file next to path,
// then a rename, so a crash never leaves a half-written file under the final name.
void save_safetensors(const std::map<std::string, Tensor>& tensors, const std::string& path,
                      const std::map<std::string, std::string>& metadata = {});
// Reads every tensor (on the CPU). A truncated file, a header that lies about sizes or offsets
// (overlaps, gaps, out of range), an unknown dtype or malformed JSON throws ember::Error naming
// the file and the problem.
std::map<std::string, Tensor> load_safetensors(const std::string& path);
// The same from a whole .safetensors image in memory, checked the same way.
std::map<std::string, Tensor> load_safetensors_bytes(const void* data, size_t size);
// The "__metadata__" strings of a file.
std::map<std::string, std::string> load_safetensors_metadata(const std::string& path);

// A module's state_dict as safetensors, and back (strict: every key, shape and dtype must match;
// nothing is copied unless all do).
void save(const Module& module, const std::string& path);
LoadReport load(Module& module, const std::string& path, bool strict = true);

}  // namespace nn
}  // namespace ember
