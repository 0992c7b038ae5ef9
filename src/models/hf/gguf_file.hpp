// A GGUF file (llama.cpp's format, versions 2 and 3): its metadata, its tensor table and the
// memory-mapped data, every offset and size checked against the file. No torch here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/hf/gguf_types.hpp"
#include "models/hf/mapped_file.hpp"

namespace lmeval::hf {

// One metadata value: a number, a bool, a string or an array of values.
struct GgufValue {
  enum class Kind { kUnsigned, kSigned, kFloat, kBool, kString, kArray };
  Kind kind = Kind::kUnsigned;
  uint32_t type = 0;  // GGUF's own type id (0 UINT8 ... 12 FLOAT64)
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  std::vector<GgufValue> items;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> ne;  // ggml's dimensions, innermost first (numpy's shape reversed)
  const GgmlType* type = nullptr;
  const std::byte* data = nullptr;
  size_t nbytes = 0;
  int64_t numel() const;
};

class GgufFile {
 public:
  // Throws UserError naming the file and what is wrong for any malformed file.
  explicit GgufFile(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_.path(); }
  uint32_t version() const { return version_; }
  const std::map<std::string, GgufValue>& metadata() const { return kv_; }
  const GgufValue* find(const std::string& key) const;
  // The tensors in the file's order.
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* tensor(const std::string& name) const;
  void release(const GgufTensorInfo& t) const { file_.release(t.data, t.nbytes); }

 private:
  MappedFile file_;
  uint32_t version_ = 0;
  std::map<std::string, GgufValue> kv_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t> by_name_;
};

}  // namespace lmeval::hf
