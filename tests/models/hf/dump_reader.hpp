// Reads back what LMEVAL_HF_DUMP / debug::dump_to wrote (src/models/hf/debug_dump.hpp): the
// forward calls' safetensors files in order, and one named tensor of a file.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace lmeval::hf::testing {

struct DumpedTensor {
  std::string dtype;  // "F32", "I64"
  std::vector<int64_t> shape;
  std::string bytes;  // little-endian values
};

class DumpFile {
 public:
  explicit DumpFile(const std::filesystem::path& file) : bytes_(lmeval::testing::read_file(file)) {
    uint64_t n = 0;
    for (int i = 7; i >= 0 && bytes_.size() >= 8; --i)
      n = (n << 8) | static_cast<unsigned char>(bytes_[static_cast<size_t>(i)]);
    header_ = nlohmann::json::parse(bytes_.substr(8, n));
    data_ = 8 + n;
  }
  const nlohmann::json& header() const { return header_; }
  bool has(const std::string& name) const { return header_.contains(name); }
  DumpedTensor tensor(const std::string& name) const {
    const auto& h = header_.at(name);
    const auto off = h.at("data_offsets");
    const uint64_t a = off[0].get<uint64_t>(), b = off[1].get<uint64_t>();
    return {h.at("dtype").get<std::string>(), h.at("shape").get<std::vector<int64_t>>(),
            bytes_.substr(data_ + a, b - a)};
  }

 private:
  std::string bytes_;
  nlohmann::json header_;
  uint64_t data_ = 0;
};

// The dump folder's files, in the order of the forward calls that wrote them.
inline std::vector<std::filesystem::path> dump_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace lmeval::hf::testing
