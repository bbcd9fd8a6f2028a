// safetensors files (read with every size and offset checked) and the save/load functions over
// them; the atomic write of a file is in atomic_file.cpp.
#include "ember/nn/serialize.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "ember/nn/internal/atomic_file.h"
#include "ember/ops/ops.h"
#include "ember/core/json.h"

namespace ember {
namespace nn {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian; ember writes host order");

constexpr uint64_t kMaxHeader = uint64_t(100) << 20;  // as the reference implementation
// The only arrays in a header are shapes and data_offsets: longer ones are refused while parsing,
// before a 100 MiB header of "[0,0,0,..." can take gigabytes.
constexpr size_t kMaxArrayItems = 64;
constexpr size_t kMaxRank = 64;  // ember's limit on dims

const char* st_dtype(DType t) {
  switch (t) {
    case DType::Float32: return "F32";
    case DType::Float64: return "F64";
    case DType::Float16: return "F16";
    case DType::BFloat16: return "BF16";
    case DType::Int64: return "I64";
    case DType::Int32: return "I32";
    case DType::Bool: return "BOOL";
    case DType::UInt8: return "U8";
    case DType::Int8: return "I8";
    case DType::Int16: return "I16";
  }
  return "?";
}
bool from_st_dtype(const std::string& s, DType* t) {
  static const std::pair<const char*, DType> table[] = {{"F32", DType::Float32}, {"F64", DType::Float64},
                                                        {"F16", DType::Float16}, {"BF16", DType::BFloat16},
                                                        {"I64", DType::Int64},   {"I32", DType::Int32},
                                                        {"BOOL", DType::Bool},   {"U8", DType::UInt8},
                                                        {"I8", DType::Int8},     {"I16", DType::Int16}};
  for (const auto& [name, dt] : table)
    if (s == name) {
      *t = dt;
      return true;
    }
  return false;
}

using Json = json::Value;

int64_t json_uint(const Json& v, const std::string& where, const std::string& what) {
  bool ok = v.kind == Json::Number && !v.num.empty() && v.num.size() <= 18 &&
            std::all_of(v.num.begin(), v.num.end(), [](char c) { return c >= '0' && c <= '9'; });
  EMBER_CHECK_T(Error, ok, where, ": ", what, " must be a non-negative integer, got '", v.num, "'");
  return std::stoll(v.num);
}

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;
};

struct FileContents {
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
  std::vector<char> data;
};

// One header entry: {"dtype": ..., "shape": [...], "data_offsets": [begin, end]}, its byte count
// checked against its shape and the data_size bytes of data.
Entry read_entry(const std::string& name, const Json& v, uint64_t data_size, const std::string& where) {
  std::string tw = where + ": tensor '" + name + "'";
  EMBER_CHECK_T(Error, v.kind == Json::Object, tw, ": expected an object with dtype, shape and data_offsets");
  const Json *dt = nullptr, *shape = nullptr, *offs = nullptr;
  for (const auto& [k, m] : v.members) {
    if (k == "dtype") dt = &m;
    else if (k == "shape") shape = &m;
    else if (k == "data_offsets") offs = &m;
  }
  EMBER_CHECK_T(Error, dt && shape && offs, tw, ": needs dtype, shape and data_offsets");
  Entry e;
  e.name = name;
  EMBER_CHECK_T(Error, dt->kind == Json::String, tw, ": dtype must be a string");
  EMBER_CHECK_T(Error, from_st_dtype(dt->str, &e.dtype), tw, ": unknown dtype '", dt->str,
                "' (ember reads F64, F32, F16, BF16, I64, I32, BOOL)");
  EMBER_CHECK_T(Error, shape->kind == Json::Array, tw, ": shape must be an array");
  EMBER_CHECK_T(Error, shape->items.size() <= kMaxRank, tw, ": shape has ", shape->items.size(), " dims (at most ",
                kMaxRank, ")");
  // Counted in checked 64-bit arithmetic: a [64, 2^56] F32 shape is 2^64 bytes, which would wrap
  // to 0 and match data_offsets [0, 0].
  uint64_t numel = 1;
  bool empty = false;
  for (const Json& d : shape->items) {
    int64_t k = json_uint(d, tw, "a shape entry");
    e.shape.push_back(k);
    empty |= k == 0;
  }
  uint64_t need = 0;
  if (!empty) {
    bool wraps = false;
    for (int64_t k : e.shape) wraps |= __builtin_mul_overflow(numel, static_cast<uint64_t>(k), &numel);
    wraps |= __builtin_mul_overflow(numel, static_cast<uint64_t>(element_size(e.dtype)), &need);
    EMBER_CHECK_T(Error, !wraps, tw, ": shape ", to_string(IntArrayRef(e.shape)), " of ", dt->str,
                  " needs more bytes than fit in 64 bits (the file holds ", data_size, " data bytes)");
  }
  EMBER_CHECK_T(Error, offs->kind == Json::Array && offs->items.size() == 2, tw, ": data_offsets must be [begin, end]");
  e.begin = static_cast<uint64_t>(json_uint(offs->items[0], tw, "data_offsets[0]"));
  e.end = static_cast<uint64_t>(json_uint(offs->items[1], tw, "data_offsets[1]"));
  EMBER_CHECK_T(Error, e.begin <= e.end && e.end <= data_size, tw, ": data_offsets [", e.begin, ", ", e.end,
                "] fall outside the ", data_size, " data bytes (truncated file?)");
  EMBER_CHECK_T(Error, e.end - e.begin == need, tw, ": data_offsets [", e.begin, ", ", e.end, "] hold ", e.end - e.begin,
                " bytes but shape ", to_string(IntArrayRef(e.shape)), " of ", dt->str, " needs ", need);
  return e;
}

// The tensors must tile the data buffer exactly: no overlap, no gap, nothing left over.
void check_tiling(const std::vector<Entry>& entries, uint64_t data_size, const std::string& where) {
  std::vector<const Entry*> by_offset;
  for (const Entry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t pos = 0;
  for (const Entry* e : by_offset) {
    EMBER_CHECK_T(Error, e->begin == pos, where, ": tensor '", e->name, "' starts at byte ", e->begin, " but the previous one ends at ",
                  pos, e->begin < pos ? " (overlap)" : " (gap)");
    pos = e->end;
  }
  EMBER_CHECK_T(Error, pos == data_size, where, ": the tensors cover ", pos, " data bytes but the file holds ", data_size);
}

// A whole safetensors image of `size` bytes from f, checked before anything is allocated for it.
FileContents read_stream(std::istream& f, uint64_t size, const std::string& where) {
  EMBER_CHECK_T(Error, size >= 8, where, ": the file is truncated (", size, " bytes; a header length needs 8)");
  uint64_t n = 0;
  f.read(reinterpret_cast<char*>(&n), 8);
  EMBER_CHECK_T(Error, n <= kMaxHeader, where, ": header length ", n, " is over the 100 MiB limit (corrupt file?)");
  EMBER_CHECK_T(Error, n <= size - 8, where, ": the file is truncated: the header claims ", n, " bytes but only ",
                size - 8, " follow");
  std::string header(n, '\0');
  f.read(&header[0], static_cast<std::streamsize>(n));
  Json root = json::parse(header, where + " header", kMaxArrayItems);
  EMBER_CHECK_T(Error, root.kind == Json::Object, where, ": the header must be a JSON object");
  FileContents out;
  uint64_t data_size = size - 8 - n;
  std::set<std::string> names;
  for (const auto& [name, v] : root.members) {
    EMBER_CHECK_T(Error, names.insert(name).second, where, ": '", name, "' appears twice in the header");
    if (name == "__metadata__") {
      EMBER_CHECK_T(Error, v.kind == Json::Object, where, ": __metadata__ must be an object of strings");
      for (const auto& [k, s] : v.members) {
        EMBER_CHECK_T(Error, s.kind == Json::String, where, ": __metadata__['", k, "'] must be a string");
        out.metadata[k] = s.str;
      }
      continue;
    }
    out.entries.push_back(read_entry(name, v, data_size, where));
  }
  check_tiling(out.entries, data_size, where);
  out.data.resize(data_size);
  if (data_size) f.read(out.data.data(), static_cast<std::streamsize>(data_size));
  EMBER_CHECK_T(Error, f.good(), where, ": read error");
  return out;
}

FileContents read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EMBER_CHECK_T(Error, f.good(), "load_safetensors: cannot open '", path, "': ", std::strerror(errno));
  f.seekg(0, std::ios::end);
  uint64_t size = static_cast<uint64_t>(f.tellg());
  f.seekg(0);
  return read_stream(f, size, "load_safetensors('" + path + "')");
}

std::map<std::string, Tensor> tensors_of(const FileContents& fc) {
  std::map<std::string, Tensor> out;
  for (const Entry& e : fc.entries) {
    Tensor t = empty(e.shape, e.dtype);
    if (e.end > e.begin) std::memcpy(t.raw_data_ptr(), fc.data.data() + e.begin, e.end - e.begin);
    if (e.dtype == DType::Bool) {  // any non-zero byte is true; store canonical 0/1
      auto* p = static_cast<unsigned char*>(t.raw_data_ptr());
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = p[i] != 0;
    }
    out.emplace(e.name, t);
  }
  return out;
}

}  // namespace

void save_safetensors(const std::map<std::string, Tensor>& tensors, const std::string& path,
                      const std::map<std::string, std::string>& metadata) {
  std::vector<std::pair<std::string, Tensor>> host;
  std::ostringstream header;
  header << "{";
  bool first = true;
  if (!metadata.empty()) {
    header << "\"__metadata__\":{";
    for (auto it = metadata.begin(); it != metadata.end(); ++it)
      header << (it == metadata.begin() ? "" : ",") << json::quote(it->first) << ":" << json::quote(it->second);
    header << "}";
    first = false;
  }
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    EMBER_CHECK_VALUE(t.defined(), "save_safetensors: tensor '", name, "' is undefined");
    EMBER_CHECK_VALUE(name != "__metadata__", "save_safetensors: '__metadata__' is reserved");
    Tensor c = t.detach().cpu().contiguous();
    uint64_t bytes = static_cast<uint64_t>(c.numel()) * element_size(c.dtype());
    header << (first ? "" : ",") << json::quote(name) << ":{\"dtype\":\"" << st_dtype(c.dtype()) << "\",\"shape\":[";
    for (int64_t d = 0; d < c.dim(); ++d) header << (d ? "," : "") << c.size(d);
    header << "],\"data_offsets\":[" << offset << "," << offset + bytes << "]}";
    offset += bytes;
    first = false;
    host.emplace_back(name, c);
  }
  header << "}";
  std::string h = header.str();
  h.append((8 - h.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  std::vector<FileChunk> chunks;
  for (const auto& [tname, c] : host) chunks.push_back({c.raw_data_ptr(), static_cast<size_t>(c.numel()) * element_size(c.dtype())});
  write_atomically(path, h, chunks);
}

std::map<std::string, Tensor> load_safetensors(const std::string& path) { return tensors_of(read_file(path)); }

std::map<std::string, Tensor> load_safetensors_bytes(const void* data, size_t size) {
  std::istringstream f(std::string(static_cast<const char*>(data), size), std::ios::binary);
  return tensors_of(read_stream(f, size, "load_safetensors_bytes"));
}

std::map<std::string, std::string> load_safetensors_metadata(const std::string& path) { return read_file(path).metadata; }

void save(const Module& module, const std::string& path) { save_safetensors(module.state_dict(), path); }

LoadReport load(Module& module, const std::string& path, bool strict) {
  return module.load_state_dict(load_safetensors(path), strict);
}

}  // namespace nn

namespace {
// What ember::save wrote ("__metadata__" key "ember.content"): optimizer, tensor or tensors.
const char* const kContent = "ember.content";

std::map<std::string, Tensor> load_checked(const std::string& path, const std::string& want, const char* fn) {
  const auto meta = nn::load_safetensors_metadata(path);
  auto it = meta.find(kContent);
  const std::string has = it == meta.end() ? "a module's state dict (or other tensors)" : "'" + it->second + "'";
  if (it == meta.end() || it->second != want)
    throw ValueError(std::string(fn) + ": " + path + " holds " + has + ", not '" + want + "' (written by ember::save of a" +
                     (want == "optimizer" ? "n optimizer" : want == "tensor" ? " tensor" : " list of tensors") + ")");
  return nn::load_safetensors(path);
}
}  // namespace

void detail::load_module_checked(nn::Module& module, const std::string& path) {
  const auto meta = nn::load_safetensors_metadata(path);
  auto it = meta.find(kContent);
  if (it != meta.end())
    throw ValueError("load(module): " + path + " holds '" + it->second + "', not a module's state dict");
  nn::load(module, path, /*strict=*/true);
}

void save(const optim::Optimizer& optimizer, const std::string& path) {
  nn::save_safetensors(optimizer.state_dict(), path, {{kContent, "optimizer"}});
}

void load(optim::Optimizer& optimizer, const std::string& path) {
  optimizer.load_state_dict(load_checked(path, "optimizer", "load(optimizer)"));
}

void save(const Tensor& tensor, const std::string& path) {
  EMBER_CHECK_VALUE(tensor.defined(), "save(tensor): the tensor is undefined");
  nn::save_safetensors({{"tensor", tensor}}, path, {{kContent, "tensor"}});
}

void load(Tensor& tensor, const std::string& path) {
  auto all = load_checked(path, "tensor", "load(tensor)");
  auto it = all.find("tensor");
  if (it == all.end() || all.size() != 1)
    throw ValueError("load(tensor): " + path + " should hold one tensor named 'tensor', found " + std::to_string(all.size()) +
                     " entries");
  tensor = it->second;
}

void save(const std::vector<Tensor>& tensors, const std::string& path) {
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK_VALUE(tensors[i].defined(), "save(tensors): tensor ", i, " is undefined");
    named[std::to_string(i)] = tensors[i];
  }
  nn::save_safetensors(named, path, {{kContent, "tensors"}, {"ember.count", std::to_string(tensors.size())}});
}

void load(std::vector<Tensor>& tensors, const std::string& path) {
  auto all = load_checked(path, "tensors", "load(tensors)");
  std::vector<Tensor> out(all.size());
  for (auto& [name, t] : all) {
    size_t i = 0;
    bool digits = !name.empty() && name.size() < 19 && name.find_first_not_of("0123456789") == std::string::npos;
    if (digits) i = static_cast<size_t>(std::stoull(name));
    if (!digits || i >= out.size() || out[i].defined())
      throw ValueError("load(tensors): " + path + " has an entry '" + name + "' that is not one of 0.." +
                       std::to_string(out.size() ? out.size() - 1 : 0));
    out[i] = t;
  }
  tensors = std::move(out);
}
}  // namespace ember
