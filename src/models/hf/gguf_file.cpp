// GGUF parsing (ggml's docs/gguf.md): "GGUF", version, tensor and metadata counts, the metadata
// key/value pairs, the tensor infos, then the data from the next multiple of general.alignment.
// Every count and length is checked against the bytes left, so a truncated or hostile file is
// a UserError naming the file, never a read past the mapping.
#include "models/hf/gguf_file.hpp"

#include <cstring>

#include "lmeval/core/error.hpp"

namespace lmeval::hf {

namespace {

constexpr int kMaxArrayDepth = 8;
constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS

struct Cursor {
  const std::byte* p;
  size_t left;
  size_t size;  // of the whole file, for offsets in messages
  const std::string& file;

  size_t offset() const { return size - left; }
  [[noreturn]] void fail(const std::string& what, const std::string& field = "") const {
    throw UserError("malformed GGUF file: " + what + " (at byte " + std::to_string(offset()) + ")",
                    {file, 0, 0, field},
                    "a GGUF file (version 2 or 3) as llama.cpp's and gguf-py's writers make");
  }
  void need(size_t n, const std::string& what, const std::string& field) const {
    if (n > left)
      fail(what + " needs " + std::to_string(n) + " bytes but the file has " +
               std::to_string(left) + " left (truncated?)",
           field);
  }
  template <typename T>
  T read(const std::string& what, const std::string& field = "") {
    need(sizeof(T), what, field);
    T v{};
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    left -= sizeof(T);
    return v;
  }
  std::string string(const std::string& what, const std::string& field = "") {
    const auto n = read<uint64_t>(what + "'s length", field);
    need(n, what, field);
    std::string s(reinterpret_cast<const char*>(p), n);
    p += n;
    left -= n;
    return s;
  }
};

// The smallest encoding of one value of a type: what an array's count is checked against.
size_t min_size(uint32_t type) {
  switch (type) {
    case 0:
    case 1:
    case 7:
      return 1;
    case 2:
    case 3:
      return 2;
    case 4:
    case 5:
    case 6:
      return 4;
    case 10:
    case 11:
    case 12:
      return 8;
    case 8:
      return 8;  // a string's length
    case 9:
      return 12;  // an array's type and count
    default:
      return 0;
  }
}

GgufValue read_value(Cursor& c, uint32_t type, const std::string& key, int depth) {
  GgufValue v;
  v.type = type;
  const std::string what = "metadata value '" + key + "'";
  switch (type) {
    case 0:
      v.u = c.read<uint8_t>(what, key);
      break;
    case 2:
      v.u = c.read<uint16_t>(what, key);
      break;
    case 4:
      v.u = c.read<uint32_t>(what, key);
      break;
    case 10:
      v.u = c.read<uint64_t>(what, key);
      break;
    case 1:
      v.kind = GgufValue::Kind::kSigned;
      v.i = c.read<int8_t>(what, key);
      break;
    case 3:
      v.kind = GgufValue::Kind::kSigned;
      v.i = c.read<int16_t>(what, key);
      break;
    case 5:
      v.kind = GgufValue::Kind::kSigned;
      v.i = c.read<int32_t>(what, key);
      break;
    case 11:
      v.kind = GgufValue::Kind::kSigned;
      v.i = c.read<int64_t>(what, key);
      break;
    case 6:
      v.kind = GgufValue::Kind::kFloat;
      v.f = c.read<float>(what, key);
      break;
    case 12:
      v.kind = GgufValue::Kind::kFloat;
      v.f = c.read<double>(what, key);
      break;
    case 7: {
      v.kind = GgufValue::Kind::kBool;
      const auto b = c.read<uint8_t>(what, key);
      if (b > 1) c.fail(what + " is a bool of value " + std::to_string(b) + " (0 or 1)", key);
      v.b = b == 1;
      break;
    }
    case 8:
      v.kind = GgufValue::Kind::kString;
      v.s = c.string(what, key);
      break;
    case 9: {
      v.kind = GgufValue::Kind::kArray;
      if (depth >= kMaxArrayDepth)
        c.fail(what + " nests arrays more than " + std::to_string(kMaxArrayDepth) + " deep", key);
      const auto item_type = c.read<uint32_t>(what + "'s item type", key);
      const auto n = c.read<uint64_t>(what + "'s item count", key);
      const size_t each = min_size(item_type);
      if (each == 0)
        c.fail(what + " is an array of unknown type " + std::to_string(item_type), key);
      if (n > c.left / each)
        c.fail(what + " claims " + std::to_string(n) + " items, more than the " +
                   std::to_string(c.left) + " bytes left can hold",
               key);
      v.items.reserve(n);
      for (uint64_t k = 0; k < n; ++k) v.items.push_back(read_value(c, item_type, key, depth + 1));
      break;
    }
    default:
      c.fail(what + " has unknown type " + std::to_string(type) + " (0 to 12)", key);
  }
  return v;
}

}  // namespace

int64_t GgufTensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  return n;
}

GgufFile::GgufFile(const std::filesystem::path& path) : file_(path, "GGUF file") {
  const std::string name = path.string();
  Cursor c{file_.data(), file_.size(), file_.size(), name};
  if (file_.size() < 4 || std::memcmp(file_.data(), "GGUF", 4) != 0)
    c.fail("it does not start with the magic bytes \"GGUF\"");
  c.p += 4;
  c.left -= 4;
  version_ = c.read<uint32_t>("the version");
  if (version_ != 2 && version_ != 3) {
    // A big-endian file's version reads byte-swapped here.
    const bool swapped = version_ == 0x02000000u || version_ == 0x03000000u;
    c.fail("version " + std::to_string(version_) +
               (swapped         ? " (a big-endian file, which lm-eval does not read)"
                : version_ == 1 ? " (GGUF v1, superseded in 2023; convert it again)"
                                : "") +
               "; lm-eval reads versions 2 and 3",
           "version");
  }
  const auto n_tensors = c.read<uint64_t>("the tensor count");
  const auto n_kv = c.read<uint64_t>("the metadata count");
  // A key is at least 8 + 4 + 1 bytes, a tensor info at least 8 + 4 + 4 + 8.
  if (n_kv > c.left / 13)
    c.fail("it claims " + std::to_string(n_kv) + " metadata entries, more than the file can hold");
  if (n_tensors > c.left / 24)
    c.fail("it claims " + std::to_string(n_tensors) + " tensors, more than the file can hold");
  for (uint64_t k = 0; k < n_kv; ++k) {
    const std::string key = c.string("metadata key " + std::to_string(k));
    const auto type = c.read<uint32_t>("the type of metadata '" + key + "'", key);
    GgufValue v = read_value(c, type, key, 0);
    if (!kv_.emplace(key, std::move(v)).second)
      c.fail("metadata key '" + key + "' appears twice", key);
  }
  uint64_t alignment = 32;
  if (const GgufValue* a = find("general.alignment")) {
    if (a->kind != GgufValue::Kind::kUnsigned || a->u == 0 || (a->u & (a->u - 1)) != 0)
      c.fail("general.alignment is not a power of two", "general.alignment");
    alignment = a->u;
  }
  std::vector<uint64_t> offsets;
  for (uint64_t k = 0; k < n_tensors; ++k) {
    GgufTensorInfo t;
    t.name = c.string("tensor name " + std::to_string(k));
    const auto n_dims = c.read<uint32_t>("the dimension count of tensor '" + t.name + "'", t.name);
    if (n_dims == 0 || n_dims > kMaxDims)
      c.fail("tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions (1 to 4)",
             t.name);
    uint64_t numel = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const auto n = c.read<uint64_t>("a dimension of tensor '" + t.name + "'", t.name);
      if (n > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(numel, n, &numel) ||
          numel > static_cast<uint64_t>(INT64_MAX))
        c.fail("tensor '" + t.name + "' has more elements than 64 bits count", t.name);
      t.ne.push_back(static_cast<int64_t>(n));
    }
    const auto type_id = c.read<uint32_t>("the type of tensor '" + t.name + "'", t.name);
    t.type = ggml_type(type_id);
    if (!t.type)
      c.fail("tensor '" + t.name + "' has unknown ggml type " + std::to_string(type_id), t.name);
    if (t.ne[0] % t.type->block != 0)
      c.fail("tensor '" + t.name + "' of type " + t.type->name + " has rows of " +
                 std::to_string(t.ne[0]) + " elements, not a multiple of its block of " +
                 std::to_string(t.type->block),
             t.name);
    uint64_t nbytes = 0;
    if (__builtin_mul_overflow(numel / static_cast<uint64_t>(t.type->block),
                               static_cast<uint64_t>(t.type->block_bytes), &nbytes))
      c.fail("tensor '" + t.name + "' has more bytes than 64 bits count", t.name);
    t.nbytes = nbytes;
    offsets.push_back(c.read<uint64_t>("the offset of tensor '" + t.name + "'", t.name));
    if (offsets.back() % alignment != 0)
      c.fail("tensor '" + t.name + "' starts at offset " + std::to_string(offsets.back()) +
                 ", not a multiple of the alignment " + std::to_string(alignment),
             t.name);
    if (!by_name_.emplace(t.name, tensors_.size()).second)
      c.fail("tensor '" + t.name + "' appears twice", t.name);
    tensors_.push_back(std::move(t));
  }
  // The data section starts at the next multiple of the alignment.
  const size_t header = c.offset();
  const size_t data_start = (header + alignment - 1) / alignment * alignment;
  if (!tensors_.empty() && data_start > file_.size())
    c.fail("the data section would start at byte " + std::to_string(data_start) +
           ", past the end of the file");
  const size_t data_size = data_start > file_.size() ? 0 : file_.size() - data_start;
  for (size_t k = 0; k < tensors_.size(); ++k) {
    auto& t = tensors_[k];
    if (offsets[k] > data_size || t.nbytes > data_size - offsets[k])
      throw UserError("malformed GGUF file: tensor '" + t.name + "' (" + std::to_string(t.nbytes) +
                          " bytes at data offset " + std::to_string(offsets[k]) +
                          ") goes past the end of the file's " + std::to_string(data_size) +
                          " bytes of data (truncated?)",
                      {name, 0, 0, t.name},
                      "a GGUF file (version 2 or 3) as llama.cpp's and gguf-py's writers make");
    t.data = file_.data() + data_start + offsets[k];
  }
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

const GgufTensorInfo* GgufFile::tensor(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace lmeval::hf
