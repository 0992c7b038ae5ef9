// Pre-quantised checkpoints read natively (tests/fixtures/hf_quant, made by
// scripts/gen_quant_fixtures.py): every weight dequantised bit for bit as the package that reads
// its format, the log-probs as transformers', and a bad quantization_config or a missing or
// misshapen tensor named.
#include "models/hf/quant_weights.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <functional>

#include "lmeval/core/error.hpp"
#include "lmeval/core/sha256.hpp"
#include "models/hf/ckpt_fixtures.hpp"
#include "models/hf/quant_formats.hpp"
#include "models/hf/transformer.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::vector<std::string> kQuantFixtures = {
    "gptq_4bit",      "gptq_4bit_act_v2", "gptq_3bit",  "gptq_2bit",          "gptq_8bit",
    "awq_gemm",       "fp8_block",        "fp8_tensor", "ct_int4_group_asym", "ct_int8_channel",
    "ct_fp8_channel", "bnb_nf4_double",   "bnb_fp4",    "bnb_nf4_bf16",       "bnb_fp4_fp16",
    "bnb_int8"};

fs::path quant_fixture(const std::string& name) {
  return lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_quant" / name;
}

json golden_of(const fs::path& dir) {
  return json::parse(lmeval::testing::read_file(dir / "golden.json"));
}

// The dtype= the goldens' weights were made in: the checkpoint's own ("auto") unless the golden
// says (bitsandbytes' were loaded in float32).
WeightSources sources_of(const json& golden) {
  WeightSources s;
  s.dtype = golden["meta"].value("weights_dtype", "auto");
  return s;
}

class QuantFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantFixtureTest, DequantisedWeightsAreThePackagesBitForBit) {
  const fs::path dir = quant_fixture(GetParam());
  const json golden = golden_of(dir);
  auto archive = WeightArchive::open(dir, sources_of(golden));
  ASSERT_FALSE(golden["dequantised"].empty());
  for (const auto& [name, want] : golden["dequantised"].items()) {
    const TensorView* t = archive->find(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->dtype, "F32") << name;
    const std::string bytes(reinterpret_cast<const char*>(t->data), t->nbytes);
    std::string head;
    for (size_t i = 0; i < 4 && i * 4 < t->nbytes; ++i)
      head += std::to_string(reinterpret_cast<const float*>(t->data)[i]) + " ";
    EXPECT_EQ(sha256_hex(bytes), want["sha256"].get<std::string>())
        << name << ": got " << head << "want " << want["head"].dump();
  }
  // The model sees plain weights: the packed tensors and their scales are not among its names.
  for (const std::string& n : archive->names())
    for (const char* packed : {"qweight", "qzeros", ".scales", "g_idx", "weight_packed",
                               "weight_scale", "weight_zero_point", "weight_shape", "absmax",
                               "quant_map", "quant_state", "SCB", "weight_format"})
      EXPECT_EQ(n.find(packed), std::string::npos) << n;
}

TEST_P(QuantFixtureTest, LogprobsMatchTransformers) {
  const fs::path dir = quant_fixture(GetParam());
  const json golden = golden_of(dir);
  // float32 arithmetic over the weights as the goldens' dtype makes them.
  LoadOptions options = testing::f32();
  options.weights = sources_of(golden);
  auto model = Transformer::load(dir, options);
  const auto got = testing::next_token_logprobs(*model, golden["inputs"]);
  const double next = testing::max_diff(got, golden["next_token_logprobs"]);
  EXPECT_LT(next, 1e-4) << GetParam();
  const int64_t V = model->config().vocab_size;
  double last = 0;
  for (size_t i = 0; i < golden["inputs"].size(); ++i) {
    const auto ids = golden["inputs"][i].get<std::vector<Token>>();
    const std::vector<float> lp = model->full_logprobs({ids}, {}, {});
    const auto& want = golden["last_row_logprobs"][i];
    for (int64_t v = 0; v < V; ++v)
      last = std::max(last, std::abs(lp[(ids.size() - 1) * V + v] - want[v].get<double>()));
  }
  EXPECT_LT(last, 1e-4) << GetParam();
  // The figures docs/models.md quotes (--gtest_output=xml shows them).
  RecordProperty("max_abs_diff", std::to_string(std::max(next, last)));
}

INSTANTIATE_TEST_SUITE_P(HfQuant, QuantFixtureTest, ::testing::ValuesIn(kQuantFixtures),
                         [](const auto& info) { return info.param; });

// Where transformers' own forward is not a product with the dequantised weight (bitsandbytes
// 4-bit with a bfloat16 / float16 compute dtype casts the layer's input to it; LLM.int8()
// quantises the input to int8), the goldens are a float twin's and keep that forward apart: the
// native run is as far from it as the script measured between it and the twin, and not close.
TEST(HfQuantBitsandbytes, DifferenceFromTransformersOwnForwardIsTheMeasuredOne) {
  for (const char* name : {"bnb_nf4_bf16", "bnb_fp4_fp16", "bnb_int8"}) {
    const fs::path dir = quant_fixture(name);
    const json golden = golden_of(dir);
    ASSERT_TRUE(golden.contains("transformers_forward")) << name;
    LoadOptions options = testing::f32();
    options.weights = sources_of(golden);
    auto model = Transformer::load(dir, options);
    const json& own = golden["transformers_forward"];
    double diff = testing::max_diff(testing::next_token_logprobs(*model, golden["inputs"]),
                                    own["next_token_logprobs"]);
    const int64_t V = model->config().vocab_size;
    for (size_t i = 0; i < golden["inputs"].size(); ++i) {
      const auto ids = golden["inputs"][i].get<std::vector<Token>>();
      const std::vector<float> lp = model->full_logprobs({ids}, {}, {});
      for (int64_t v = 0; v < V; ++v)
        diff = std::max(diff, std::abs(lp[(ids.size() - 1) * V + v] -
                                       own["last_row_logprobs"][i][v].get<double>()));
    }
    const double measured = golden["meta"]["transformers_forward_max_abs_diff"].get<double>();
    RecordProperty(std::string(name) + "_max_abs_diff", std::to_string(diff));
    EXPECT_GT(diff, 1e-3) << name;
    EXPECT_NEAR(diff, measured, 1e-4 + 0.01 * measured) << name;
  }
}

// The float8 encodings as torch decodes them (torch.float8_e4m3fn / float8_e5m2 .float()).
TEST(HfQuantFormats, Fp8BytesDecodeAsTorch) {
  EXPECT_EQ(quant::fp8_to_float(0x7E, false), 448.0f);
  EXPECT_EQ(quant::fp8_to_float(0x01, false), 0.001953125f);  // the smallest subnormal, 2^-9
  EXPECT_EQ(quant::fp8_to_float(0xB8, false), -1.0f);
  EXPECT_TRUE(std::isnan(quant::fp8_to_float(0x7F, false)));
  EXPECT_EQ(quant::fp8_to_float(0x7B, true), 57344.0f);
  EXPECT_TRUE(std::isinf(quant::fp8_to_float(0x7C, true)));
  EXPECT_EQ(quant::fp8_to_float(0x3C, true), 1.0f);
}

// A copy of a fixture with its config or its weights file changed, and the error loading it.
class QuantFaults : public ::testing::Test {
 protected:
  std::string error_of(const std::string& fixture, const std::function<void(json&)>& edit_config,
                       const std::string& rename_from = "", const std::string& rename_to = "") {
    for (const auto& e : fs::directory_iterator(quant_fixture(fixture)))
      scratch_.write(e.path().filename(), lmeval::testing::read_file(e.path()));
    json cfg = json::parse(lmeval::testing::read_file(scratch_.path() / "config.json"));
    edit_config(cfg["quantization_config"]);
    scratch_.write("config.json", cfg.dump());
    if (!rename_from.empty()) {
      // Same-length names keep the safetensors header valid: the tensor is simply not there.
      std::string bytes = lmeval::testing::read_file(scratch_.path() / "model.safetensors");
      const auto at = bytes.find("\"" + rename_from + "\"");
      EXPECT_NE(at, std::string::npos) << rename_from;
      bytes.replace(at + 1, rename_to.size(), rename_to);
      scratch_.write("model.safetensors", bytes);
    }
    try {
      auto archive = WeightArchive::open(scratch_.path());
      return "";
    } catch (const UserError& e) {
      return std::string(e.what()) + " | " + e.where().to_string() + " | " + e.expected();
    }
  }
  // The fixture with the first `from` of its weights file overwritten by `to` (same length: the
  // bytes of a tensor, such as bitsandbytes' JSON quant_state, change and the header stays).
  std::string error_of_bytes(const std::string& fixture, const std::string& from,
                             const std::string& to) {
    EXPECT_EQ(from.size(), to.size());
    std::string bytes = lmeval::testing::read_file(quant_fixture(fixture) / "model.safetensors");
    const auto at = bytes.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    bytes.replace(at, to.size(), to);
    return error_of(fixture, [&](json&) { scratch_.write("model.safetensors", bytes); });
  }
  lmeval::testing::ScratchDir scratch_{"lmeval_quant_faults"};
};

void expect_has(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "want '" << part << "' in: " << text;
}

TEST_F(QuantFaults, UnknownMethodNamesTheField) {
  const std::string e = error_of("gptq_4bit", [](json& q) { q["quant_method"] = "gptq-ish"; });
  expect_has(e, "config.json");
  expect_has(e, "$.quantization_config.quant_method");
  expect_has(e, "gptq-ish");
}

TEST_F(QuantFaults, UnsupportedBitsNameTheField) {
  const std::string e = error_of("gptq_4bit", [](json& q) { q["bits"] = 5; });
  expect_has(e, "$.quantization_config.bits");
  expect_has(e, "one of 2, 3, 4, 8");
  expect_has(error_of("awq_gemm", [](json& q) { q["bits"] = 8; }), "$.quantization_config.bits");
  expect_has(error_of("ct_int4_group_asym",
                      [](json& q) { q["config_groups"]["group_0"]["weights"]["num_bits"] = 12; }),
             "$.quantization_config.config_groups.group_0.weights.num_bits");
}

TEST_F(QuantFaults, MissingCompanionTensorIsNamed) {
  const std::string e = error_of(
      "gptq_4bit", [](json&) {}, "model.layers.1.mlp.down_proj.qzeros",
      "model.layers.1.mlp.down_proj.qzerox");
  expect_has(e, "model.safetensors");
  expect_has(e, "model.layers.1.mlp.down_proj.qzeros");
  expect_has(error_of(
                 "fp8_block", [](json&) {}, "model.layers.0.mlp.up_proj.weight_scale_inv",
                 "model.layers.0.mlp.up_proj.weight_scale_inx"),
             "model.layers.0.mlp.up_proj.weight_scale_inv");
  expect_has(
      error_of(
          "ct_int4_group_asym", [](json&) {}, "model.layers.0.self_attn.v_proj.weight_zero_point",
          "model.layers.0.self_attn.v_proj.weight_zero_poinx"),
      "model.layers.0.self_attn.v_proj.weight_zero_point");
}

TEST_F(QuantFaults, ShapesThatDoNotFitTheConfigAreNamed) {
  // group_size 16 wants twice the groups of scales the checkpoint has.
  std::string e = error_of("gptq_4bit", [](json& q) { q["group_size"] = 16; });
  expect_has(e, ".scales");
  expect_has(e, "[groups, out_features]");
  e = error_of("fp8_block", [](json& q) { q["weight_block_size"] = {16, 16}; });
  expect_has(e, "weight_scale_inv");
  e = error_of("awq_gemm", [](json& q) { q["group_size"] = 48; });
  expect_has(e, "$.quantization_config.group_size");
  e = error_of("gptq_4bit", [](json& q) { q["checkpoint_format"] = "marlin"; });
  expect_has(e, "$.quantization_config.checkpoint_format");
}

// bitsandbytes' serialisations: a missing quant_state or SCB, a quant_state whose shape or block
// size does not fit the tensors, an unknown quant_type, a configuration that is neither 4- nor
// 8-bit or has an unknown compute dtype.
TEST_F(QuantFaults, BadBitsandbytesSerialisationsAreNamed) {
  const std::string q0 = "model.layers.0.self_attn.q_proj.weight";
  std::string e = error_of(
      "bnb_nf4_double", [](json&) {}, q0 + ".quant_state.bitsandbytes__nf4",
      q0 + ".quant_state.bitsandbytes__nfX");
  expect_has(e, "model.safetensors");
  expect_has(e, q0 + ".quant_state.bitsandbytes__nf4");
  e = error_of_bytes("bnb_nf4_double", "\"quant_type\": \"nf4\"", "\"quant_type\": \"nf5\"");
  expect_has(e, "quant_type \"nf5\"");
  expect_has(e, ".quant_state.bitsandbytes__nf4");
  expect_has(e, "model.safetensors");
  expect_has(e, "quant_type \"nf4\" or \"fp4\"");
  // blocksize 32 wants twice the absmax the checkpoint has.
  e = error_of_bytes("bnb_fp4", "\"blocksize\": 64", "\"blocksize\": 32");
  expect_has(e, ".weight.absmax");
  expect_has(e, "one absmax per block of 32");
  // A quant_state naming 34 rows where the packed bytes hold 64.
  e = error_of_bytes("bnb_fp4", "\"shape\": [6", "\"shape\": [3");
  expect_has(e, "tensor 'model.layers.");
  expect_has(e, "two codes a byte");
  e = error_of(
      "bnb_int8", [](json&) {}, "model.layers.1.mlp.up_proj.SCB", "model.layers.1.mlp.up_proj.SCX");
  expect_has(e, "model.safetensors");
  expect_has(e, "model.layers.1.mlp.up_proj.SCB");
  e = error_of_bytes("bnb_nf4_double", "\"nested_blocksize\": 256", "\"nested_blocksize\": 128");
  expect_has(e, "nested_blocksize 128");
  expect_has(e, "256 (the only one bitsandbytes' matmul_4bit runs)");
  // weight_format 1 (a tiled layout): its one byte, found through the safetensors header.
  std::string bytes = lmeval::testing::read_file(quant_fixture("bnb_int8") / "model.safetensors");
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), sizeof header);
  const json h = json::parse(bytes.substr(8, header));
  const std::string format = "model.layers.0.self_attn.k_proj.weight_format";
  bytes[8 + header + h[format]["data_offsets"][0].get<size_t>()] = 1;
  e = error_of("bnb_int8", [&](json&) { scratch_.write("model.safetensors", bytes); });
  expect_has(e, format);
  expect_has(e, "0 (row-major");
  e = error_of("bnb_fp4", [](json& q) { q["load_in_4bit"] = false; });
  expect_has(e, "config.json");
  expect_has(e, "$.quantization_config.load_in_4bit");
  e = error_of("bnb_int8", [](json& q) { q["load_in_4bit"] = true; });
  expect_has(e, "load_in_4bit and load_in_8bit are both true");
  e = error_of("bnb_fp4", [](json& q) { q["bnb_4bit_compute_dtype"] = "float8"; });
  expect_has(e, "$.quantization_config.bnb_4bit_compute_dtype");
  expect_has(e, "float32, bfloat16 or float16");
}

}  // namespace
}  // namespace lmeval::hf
