// torch.save files read without Python: the zip and legacy layouts torch writes hold the same
// tensors, byte for byte, as their safetensors twin (tests/fixtures/hf_ckpt, written by torch:
// scripts/gen_ckpt_fixtures.py), strided views included; damaged and hand-made hostile files are
// refused naming the file.
#include "models/hf/torch_file.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "lmeval/core/error.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

using namespace std::string_literals;

namespace fs = std::filesystem;

fs::path fixtures() { return lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_ckpt"; }

// Every tensor of `file` equals the safetensors twin's in dtype, shape and bytes.
void expect_same_tensors(const TorchFile& file, const SafetensorsFile& twin) {
  ASSERT_EQ(file.tensors().size(), twin.tensors().size());
  for (const auto& [name, t] : twin.tensors()) {
    auto it = file.tensors().find(name);
    ASSERT_NE(it, file.tensors().end()) << name;
    EXPECT_EQ(it->second.dtype, t.dtype) << name;
    EXPECT_EQ(it->second.shape, t.shape) << name;
    ASSERT_EQ(it->second.nbytes, t.nbytes) << name;
    EXPECT_EQ(std::memcmp(it->second.data, t.data, t.nbytes), 0) << name;
  }
}

TEST(TorchFile, ZipLegacyAndStridedHoldTheSafetensorsTensors) {
  const SafetensorsFile twin(fixtures() / "llama" / "model.safetensors");
  for (const char* dir : {"llama_bin", "llama_bin_legacy", "llama_bin_strided"}) {
    SCOPED_TRACE(dir);
    const TorchFile f(fixtures() / dir / "pytorch_model.bin");
    expect_same_tensors(f, twin);
  }
  const TorchFile strided(fixtures() / "llama_bin_strided" / "pytorch_model.bin");
  // The transposed view is gathered into bytes of its own; the others point into the file.
  EXPECT_TRUE(strided.tensors().at("model.layers.0.self_attn.q_proj.weight").owner);
  EXPECT_FALSE(strided.tensors().at("model.layers.1.mlp.up_proj.weight").owner);
  const SafetensorsFile bf16(fixtures() / "llama_bf16" / "model.safetensors");
  expect_same_tensors(TorchFile(fixtures() / "llama_bf16_bin" / "pytorch_model.bin"), bf16);
}

// A zip archive of stored entries, as torch's writer makes them (no CRCs: lm-eval does not check
// them).
std::string zip(const std::vector<std::pair<std::string, std::string>>& entries,
                uint16_t method = 0) {
  auto le = [](uint64_t v, int n) {
    std::string s;
    for (int k = 0; k < n; ++k) s += static_cast<char>((v >> (8 * k)) & 0xff);
    return s;
  };
  std::string out, cd;
  for (const auto& [name, data] : entries) {
    const size_t at = out.size();
    out += le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(method, 2) + le(0, 8) +
           le(data.size(), 4) + le(data.size(), 4) + le(name.size(), 2) + le(0, 2) + name + data;
    cd += le(0x02014b50, 4) + le(20, 2) + le(20, 2) + le(0, 2) + le(method, 2) + le(0, 8) +
          le(data.size(), 4) + le(data.size(), 4) + le(name.size(), 2) + le(0, 2) + le(0, 2) +
          le(0, 2) + le(0, 2) + le(0, 4) + le(at, 4) + name;
  }
  const size_t cd_at = out.size();
  out += cd + le(0x06054b50, 4) + le(0, 4) + le(entries.size(), 2) + le(entries.size(), 2) +
         le(cd.size(), 4) + le(cd_at, 4) + le(0, 2);
  return out;
}

// The pickle of {"w": a float32 tensor of `size` over storage "0" of `numel` elements}.
std::string state_dict_pickle(int numel, int size) {
  std::string p = "\x80\x02}X\x01\x00\x00\x00w"s;
  p += "ctorch._utils\n_rebuild_tensor_v2\n(";
  p += "(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x00"
       "0X\x03\x00\x00\x00"
       "cpu"s;
  p += "K" + std::string(1, static_cast<char>(numel)) + "tQ";
  p += "K\x00K"s + std::string(1, static_cast<char>(size)) + "\x85K\x01\x85\x89";
  p += "ccollections\nOrderedDict\n)RtRs.";
  return p;
}

std::string error_of(const std::string& bytes) {
  lmeval::testing::ScratchDir d("lmeval_torch_file");
  d.write("pytorch_model.bin", bytes);
  const std::string path = (d.path() / "pytorch_model.bin").string();
  try {
    TorchFile f(path);
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().file, path) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

#define EXPECT_ERROR(bytes, phrase)                      \
  do {                                                   \
    const std::string m_ = error_of(bytes);              \
    EXPECT_NE(m_.find(phrase), std::string::npos) << m_; \
  } while (0)

TEST(TorchFile, HandMadeZip) {
  lmeval::testing::ScratchDir d("lmeval_torch_file");
  const std::string floats = "\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40"s;  // 1 2 3
  d.write("ok.bin", zip({{"a/data.pkl", state_dict_pickle(3, 3)},
                         {"a/data/0", floats},
                         {"a/byteorder", "little"}}));
  const TorchFile f(d.path() / "ok.bin");
  const TensorView& w = f.tensors().at("w");
  EXPECT_EQ(w.dtype, "F32");
  EXPECT_EQ(w.shape, (std::vector<int64_t>{3}));
  float v[3];
  std::memcpy(v, w.data, 12);
  EXPECT_EQ(v[2], 3.0f);
}

TEST(TorchFile, DamagedAndHostileZipsAreRefused) {
  const std::string floats(12, '\0');
  const std::string pkl = state_dict_pickle(3, 3);
  EXPECT_ERROR(zip({{"a/data.pkl", pkl}, {"a/data/0", floats.substr(0, 8)}}),
               "storage of 3 elements but its data holds 8 bytes");
  EXPECT_ERROR(zip({{"a/data.pkl", state_dict_pickle(3, 4)}, {"a/data/0", floats}}),
               "reaches element 3 of a storage of 3");
  EXPECT_ERROR(zip({{"a/data.pkl", pkl}}), "storage 0 has no entry a/data/0");
  EXPECT_ERROR(zip({{"a/version", "3"}, {"a/data/0", floats}}), "no a/data.pkl");
  EXPECT_ERROR(zip({{"a/data.pkl", pkl}, {"a/data/0", floats}, {"a/data/0", floats}}),
               "appears twice");
  EXPECT_ERROR(zip({{"a/data.pkl", pkl}, {"a/data/0", floats}}, 8), "compressed (method 8)");
  EXPECT_ERROR(zip({{"a/data.pkl", pkl}, {"a/data/0", floats}, {"a/byteorder", "big"}}),
               "big-endian");
  // A pickle that would run code inside an otherwise valid archive.
  EXPECT_ERROR(zip({{"a/data.pkl",
                     "\x80\x02"
                     "cposix\nsystem\nX\x02\x00\x00\x00ls\x85R."s}}),
               "posix.system");
  const std::string real =
      lmeval::testing::read_file(fixtures() / "llama_bin" / "pytorch_model.bin");
  EXPECT_ERROR(real.substr(0, real.size() / 2), "no end of central directory");
  std::string cd_out = real;
  // The end record's central directory offset moved past the end.
  const size_t eocd = cd_out.rfind(std::string("PK\x05\x06", 4));
  cd_out[eocd + 19] = '\x7f';
  EXPECT_ERROR(cd_out, "outside the file");
  EXPECT_ERROR(std::string(600, 'x'), "not a PyTorch checkpoint");
  EXPECT_ERROR("", "not a PyTorch checkpoint");
  std::string tar(1024, '\0');
  tar.replace(257, 5, "ustar");
  EXPECT_ERROR(tar, "tar format");
}

TEST(TorchFile, DamagedLegacyFilesAreRefused) {
  const std::string real =
      lmeval::testing::read_file(fixtures() / "llama_bin_legacy" / "pytorch_model.bin");
  EXPECT_ERROR(real.substr(0, real.size() - 100), "truncated");
  EXPECT_ERROR(real.substr(0, 15), "truncated");  // the magic number alone
  // The element count of the first storage's data, changed.
  std::string bad = real;
  const size_t keys_end = bad.find(".", bad.find("\x80\x02]")) + 1;
  bad[keys_end] = static_cast<char>(bad[keys_end] + 1);
  EXPECT_ERROR(bad, "elements where");
}

}  // namespace
}  // namespace lmeval::hf
