// Saving and loading tensors in the safetensors format (https://github.com/huggingface/safetensors):
// an 8-byte little-endian header length, a JSON header {"name": {"dtype": "F32", "shape": [2, 3],
// "data_offsets": [begin, end]}, ..., "__metadata__": {...}}, then the raw little-endian data.
// Files move between ember and PyTorch (safetensors.torch.load_file / save_file).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/optim/optim.h"

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

// libtorch's torch::save / torch::load, for what its programs checkpoint: modules (as nn::save),
// optimizers, tensors and lists of tensors. They write ember's safetensors; libtorch's own .pt
// archives cannot be read. A file of another kind (an optimizer's into a module, ...) is refused
// with a message naming the file and what it holds.
// (Modules go by their shared_ptr, as libtorch's holders do; nn::save / nn::load take a Module&.)
namespace detail {
void load_module_checked(nn::Module& module, const std::string& path);
}
template <class M, std::enable_if_t<std::is_base_of<nn::Module, M>::value, int> = 0>
void save(const std::shared_ptr<M>& module, const std::string& path) {
  nn::save(*module, path);
}
template <class M, std::enable_if_t<std::is_base_of<nn::Module, M>::value, int> = 0>
void load(const std::shared_ptr<M>& module, const std::string& path) {  // strict
  detail::load_module_checked(*module, path);
}
// A module holder (TORCH_MODULE's classes): its module.
template <class Impl>
void save(const nn::ModuleHolder<Impl>& module, const std::string& path) {
  nn::save(*module, path);
}
template <class Impl>
void load(const nn::ModuleHolder<Impl>& module, const std::string& path) {  // strict
  detail::load_module_checked(*module, path);
}
void save(const optim::Optimizer& optimizer, const std::string& path);
void load(optim::Optimizer& optimizer, const std::string& path);  // (Optimizer::load_state_dict's checks)
void save(const Tensor& tensor, const std::string& path);
void load(Tensor& tensor, const std::string& path);  // replaces tensor (on the CPU, as libtorch's)
void save(const std::vector<Tensor>& tensors, const std::string& path);
void load(std::vector<Tensor>& tensors, const std::string& path);

}  // namespace ember
