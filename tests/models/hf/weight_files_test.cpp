// A model folder's weights in each format transformers reads (tests/fixtures/hf_ckpt: one Llama
// as model.safetensors, pytorch_model.bin in torch's zip and legacy layouts, index-named .bin
// shards, strided views, bfloat16), chosen in transformers' order: the same log-probs as
// transformers loading each folder, and identical to the safetensors twin's.
#include "models/hf/weight_files.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "lmeval/core/error.hpp"
#include "models/hf/ckpt_fixtures.hpp"
#include "models/hf/transformer.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::f32;
using testing::max_diff;
fs::path fixtures() { return testing::ckpt_fixtures(); }
std::vector<std::vector<double>> logprobs(Transformer& m, const json& in) {
  return testing::next_token_logprobs(m, in);
}

TEST(HfWeightFormats, EveryFormatScoresAsTransformersAndAsItsSafetensorsTwin) {
  const json g = testing::ckpt_goldens()["formats"];
  auto twin = Transformer::load(fixtures() / "llama", f32());
  const auto twin_lp = logprobs(*twin, g["llama"]["inputs"]);
  auto bf16_twin = Transformer::load(fixtures() / "llama_bf16", f32());
  const auto bf16_lp = logprobs(*bf16_twin, g["llama_bf16"]["inputs"]);
  for (const auto& [name, golden] : g.items()) {
    SCOPED_TRACE(name);
    auto model = Transformer::load(fixtures() / name, f32());
    const auto lp = logprobs(*model, golden["inputs"]);
    EXPECT_LT(max_diff(lp, golden["next_token_logprobs"]), 1e-5);
    // The same tensors give the very same numbers whatever file held them.
    EXPECT_EQ(lp, name.find("bf16") != std::string::npos ? bf16_lp : twin_lp);
  }
}

TEST(HfWeightFormats, SafetensorsWinOverPytorchBin) {
  // llama_both's pytorch_model.bin holds other weights: transformers reads model.safetensors.
  auto w = WeightFiles::open_model(fixtures() / "llama_both");
  EXPECT_EQ(w->source().filename(), "model.safetensors");
  auto bin = WeightFiles::open_model(fixtures() / "llama_bin_sharded");
  EXPECT_EQ(bin->source().filename(), "pytorch_model.bin.index.json");
  EXPECT_EQ(bin->names(), WeightFiles::open_model(fixtures() / "llama")->names());
}

TEST(HfWeightFormats, BadFoldersAndIndexesAreRefused) {
  lmeval::testing::ScratchDir d("lmeval_weight_files");
  auto error_of = [&](const fs::path& dir) -> std::string {
    try {
      WeightFiles::open_model(dir);
    } catch (const UserError& e) {
      return std::string(e.what()) + " | " + e.where().file;
    }
    ADD_FAILURE() << "no error";
    return "";
  };
  std::string e = error_of(d.path());
  EXPECT_NE(e.find("no model weights found"), std::string::npos) << e;
  EXPECT_NE(e.find("pytorch_model.bin"), std::string::npos) << e;
  d.write("pytorch_model.bin.index.json", R"({"weight_map": {"a": "../elsewhere.bin"}})");
  e = error_of(d.path());
  EXPECT_NE(e.find("is not a file inside"), std::string::npos) << e;
  EXPECT_NE(e.find("pytorch_model.bin.index.json"), std::string::npos) << e;
  d.write("pytorch_model.bin.index.json", R"({"weight_map": {"a": "shard-1.bin"}})");
  e = error_of(d.path());
  EXPECT_NE(e.find("shard-1.bin named in the index is missing"), std::string::npos) << e;
  d.write("pytorch_model.bin.index.json", R"({"weights": {}})");
  e = error_of(d.path());
  EXPECT_NE(e.find("no weight_map"), std::string::npos) << e;
  d.write("pytorch_model.bin", "PK\x03\x04");
  e = error_of(d.path());
  EXPECT_NE(e.find("corrupt PyTorch zip checkpoint"), std::string::npos) << e;
  EXPECT_NE(e.find((d.path() / "pytorch_model.bin").string()), std::string::npos) << e;
}

}  // namespace
}  // namespace lmeval::hf
