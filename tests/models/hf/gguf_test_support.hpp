// Helpers of the GGUF tests: the fixtures' folder and a writer of hand-made GGUF files.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "lmeval/core/error.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;
using json = nlohmann::json;

inline fs::path fixtures() { return lmeval::testing::source_dir() / "tests" / "fixtures" / "gguf"; }
inline json read_json(const fs::path& p) { return json::parse(lmeval::testing::read_file(p)); }

inline std::string unhex(const std::string& h) {
  std::string out(h.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<char>(std::stoi(h.substr(2 * i, 2), nullptr, 16));
  return out;
}

inline fs::path temp_file(const std::string& name, const std::string& bytes) {
  const fs::path p = fs::temp_directory_path() / ("lmeval_gguf_" + name);
  std::ofstream(p, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return p;
}

// A GGUF writer for hand-made files: metadata strings and u32s, tensors with raw bytes.
struct MiniGguf {
  std::string kv, infos, data;
  uint64_t n_kv = 0, n_tensors = 0;
  uint32_t version = 3;
  template <typename T>
  static void put(std::string& s, T v) {
    s.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  static void str(std::string& s, const std::string& v) {
    put<uint64_t>(s, v.size());
    s += v;
  }
  MiniGguf& text(const std::string& k, const std::string& v) {
    str(kv, k);
    put<uint32_t>(kv, 8);
    str(kv, v);
    ++n_kv;
    return *this;
  }
  MiniGguf& u32(const std::string& k, uint32_t v) {
    str(kv, k);
    put<uint32_t>(kv, 4);
    put<uint32_t>(kv, v);
    ++n_kv;
    return *this;
  }
  MiniGguf& boolean(const std::string& k, bool v) {
    str(kv, k);
    put<uint32_t>(kv, 7);
    put<uint8_t>(kv, v ? 1 : 0);
    ++n_kv;
    return *this;
  }
  MiniGguf& texts(const std::string& k, const std::vector<std::string>& v) {
    str(kv, k);
    put<uint32_t>(kv, 9);
    put<uint32_t>(kv, 8);
    put<uint64_t>(kv, v.size());
    for (const auto& s : v) str(kv, s);
    ++n_kv;
    return *this;
  }
  MiniGguf& i32s(const std::string& k, const std::vector<int32_t>& v) {
    str(kv, k);
    put<uint32_t>(kv, 9);
    put<uint32_t>(kv, 5);
    put<uint64_t>(kv, v.size());
    for (auto x : v) put<int32_t>(kv, x);
    ++n_kv;
    return *this;
  }
  MiniGguf& tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type,
                   const std::string& bytes) {
    str(infos, name);
    put<uint32_t>(infos, static_cast<uint32_t>(ne.size()));
    for (auto d : ne) put<uint64_t>(infos, d);
    put<uint32_t>(infos, type);
    put<uint64_t>(infos, data.size());
    data += bytes;
    data.resize((data.size() + 31) / 32 * 32, '\0');
    ++n_tensors;
    return *this;
  }
  std::string bytes() const {
    std::string s = "GGUF";
    put<uint32_t>(s, version);
    put<uint64_t>(s, n_tensors);
    put<uint64_t>(s, n_kv);
    s += kv + infos;
    s.resize((s.size() + 31) / 32 * 32, '\0');
    return s + data;
  }
  // A llama of one layer, hidden 32, 2 heads, vocab 4: the metadata the config needs.
  static MiniGguf llama(const std::string& arch = "llama") {
    MiniGguf g;
    g.text("general.architecture", arch)
        .u32(arch + ".embedding_length", 32)
        .u32(arch + ".block_count", 1)
        .u32(arch + ".attention.head_count", 2)
        .u32(arch + ".vocab_size", 4);
    return g;
  }
};

inline std::string expect_user_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return std::string(e.what()) + " | " + e.where().file + " | " + e.where().field + " | " +
           e.expected();
  }
  ADD_FAILURE() << "no UserError";
  return "";
}

}  // namespace lmeval::hf
