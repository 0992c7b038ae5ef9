// A GGUF file's general.architecture, read before any plugin is opened (transformers_path.hpp):
// whether a GGUF runs natively or through transformers is decided by lm-eval itself, which links
// no libtorch and so not the plugin's full reader (src/models/hf/gguf_file.cpp, which checks
// everything and names what is wrong; this one only looks and gives up quietly).
#include <array>
#include <cstdint>
#include <fstream>

#include "lmeval/models/hf/transformers_path.hpp"

namespace lmeval::hf {

namespace {

class HeaderReader {
 public:
  explicit HeaderReader(const std::filesystem::path& p) : in_(p, std::ios::binary) {
    std::error_code ec;
    size_ = std::filesystem::file_size(p, ec);
    if (ec) in_.setstate(std::ios::failbit);
  }
  bool ok() const { return static_cast<bool>(in_); }
  template <typename T>
  T get() {
    T v{};
    in_.read(reinterpret_cast<char*>(&v), sizeof(T));
    return v;
  }
  // A length no larger than what is left of the file, or failure.
  uint64_t length() {
    const auto n = get<uint64_t>();
    if (!ok() || n > size_ - static_cast<uint64_t>(in_.tellg())) in_.setstate(std::ios::failbit);
    return n;
  }
  std::string text() {
    const uint64_t n = length();
    if (!ok()) return {};
    std::string s(n, '\0');
    in_.read(s.data(), static_cast<std::streamsize>(n));
    return s;
  }
  void skip(uint64_t n) { in_.seekg(static_cast<std::streamoff>(n), std::ios::cur); }
  // Skips a value of GGUF type `type` (gguf-py's GGUFValueType); false on an unknown type.
  bool skip_value(uint32_t type, int depth) {
    static constexpr std::array<uint8_t, 13> kSize = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (type >= kSize.size() || depth > 4) return false;
    if (type == 8) {
      skip(length());
    } else if (type == 9) {
      const auto inner = get<uint32_t>();
      const uint64_t n = length();
      if (inner < kSize.size() && kSize[inner] > 0) {
        skip(n * kSize[inner]);
      } else {
        for (uint64_t i = 0; i < n && ok(); ++i)
          if (!skip_value(inner, depth + 1)) return false;
      }
    } else {
      skip(kSize[type]);
    }
    return ok();
  }

 private:
  std::ifstream in_;
  uint64_t size_ = 0;
};

}  // namespace

std::optional<std::string> gguf_architecture(const std::filesystem::path& file) {
  HeaderReader r(file);
  if (!r.ok()) return std::nullopt;
  const auto magic = r.get<std::array<char, 4>>();
  const auto version = r.get<uint32_t>();
  // Versions 2 and 3, the ones the native reader takes (64-bit counts and lengths).
  if (!r.ok() || std::string(magic.data(), 4) != "GGUF" || (version != 2 && version != 3))
    return std::nullopt;
  r.get<uint64_t>();  // the tensor count
  const uint64_t n_kv = r.length();
  for (uint64_t i = 0; i < n_kv && r.ok(); ++i) {
    const std::string key = r.text();
    const auto type = r.get<uint32_t>();
    if (!r.ok()) return std::nullopt;
    if (key == "general.architecture") {
      if (type != 8) return std::nullopt;
      std::string arch = r.text();
      return r.ok() ? std::optional<std::string>(arch) : std::nullopt;
    }
    if (!r.skip_value(type, 0)) return std::nullopt;
  }
  return std::nullopt;
}

bool gguf_runs_through_transformers(const std::string& arch) {
  // transformers 5.23's GGUF_SUPPORTED_ARCHITECTURES (with load_gguf_checkpoint's renames) less
  // what lm-eval reads natively (src/models/hf/gguf_model.cpp) and less those it refuses because
  // transformers loads them wrongly or not at all (gpt-oss, t5, mistral, deci: gguf_model.cpp
  // says why).
  static constexpr std::array<const char*, 5> kTransformersOnly = {"lfm2", "mamba", "nemotron",
                                                                   "gemma4", "minimax-m2"};
  for (const char* a : kTransformersOnly)
    if (arch == a) return true;
  return false;
}

}  // namespace lmeval::hf
