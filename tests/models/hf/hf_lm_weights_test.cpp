// The model_args that choose weights (pretrained= with pytorch_model.bin, subfolder=, peft=,
// delta=) against the reference's HFLM itself given the same arguments
// (scripts/gen_ckpt_fixtures.py), delta= as HFLM adds it (tied embeddings twice), and their
// refusals.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "lmeval/core/error.hpp"
#include "lmeval/models/hf/transformers_path.hpp"
#include "models/hf/ckpt_fixtures.hpp"
#include "models/hf/hf_lm.hpp"
#include "models/hf/weight_edits.hpp"
#include "support/scratch_dir.hpp"

namespace lmeval::hf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ckpt_fixtures;

fs::path tokenizer_dir() { return lmeval::testing::shared_dir() / "fixtures" / "llama"; }

// The golden's model_args with the fixture folders' paths (and the shared tokenizer unless the
// model folder has its own).
Json model_args(const json& golden) {
  Json args = {{"device", "cpu"}, {"dtype", "float32"}, {"batch_size", 1}};
  for (const auto& [k, v] : golden.items())
    args[k] =
        k == "subfolder" ? v.get<std::string>() : (ckpt_fixtures() / v.get<std::string>()).string();
  if (!golden.contains("subfolder")) args["tokenizer"] = tokenizer_dir().string();
  return args;
}

TEST(HfWeightArgs, LoglikelihoodsAsTheReferenceHflm) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  const json goldens = testing::ckpt_goldens()["hflm"];
  ASSERT_EQ(goldens.size(), 8u);
  for (const auto& g : goldens) {
    SCOPED_TRACE(g["model_args"].dump());
    HFLM lm(parse_hf_args(model_args(g["model_args"]), {}));
    std::vector<LoglikelihoodRequest> reqs;
    for (const auto& r : g["requests"]) reqs.push_back({r[0], r[1]});
    const auto res = lm.loglikelihood(reqs);
    ASSERT_EQ(res.size(), reqs.size());
    for (size_t i = 0; i < res.size(); ++i) {
      EXPECT_NEAR(res[i].loglikelihood, g["loglikelihood"][i].get<double>(), 1e-4) << i;
      EXPECT_EQ(res[i].is_greedy, g["is_greedy"][i].get<bool>()) << i;
    }
    const Json info = lm.model_info();
    EXPECT_EQ(info.contains("peft_sha"), g["model_args"].contains("peft"));
    EXPECT_EQ(info.contains("delta_sha"), g["model_args"].contains("delta"));
  }
}

// The golden's loglikelihoods (HFLM.loglikelihood with the same model_args) from `lm`.
void expect_as_reference(HFLM& lm, const json& g) {
  std::vector<LoglikelihoodRequest> reqs;
  for (const auto& r : g["requests"]) reqs.push_back({r[0], r[1]});
  const auto res = lm.loglikelihood(reqs);
  ASSERT_EQ(res.size(), reqs.size());
  double d = 0;
  for (size_t i = 0; i < res.size(); ++i) {
    EXPECT_NEAR(res[i].loglikelihood, g["loglikelihood"][i].get<double>(), 1e-4) << i;
    EXPECT_EQ(res[i].is_greedy, g["is_greedy"][i].get<bool>()) << i;
    d = std::max(d, std::abs(res[i].loglikelihood - g["loglikelihood"][i].get<double>()));
  }
  std::cout << "[peft] HFLM " << g["model_args"].dump() << ": max loglikelihood difference " << d
            << "\n";
}

TEST(HfWeightArgs, DoraIa3LohaAndLokrLoglikelihoodsAsTheReferenceHflm) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  size_t merged = 0;
  const json goldens = testing::peft_goldens()["hflm"];
  for (const auto& g : goldens) {
    SCOPED_TRACE(g["model_args"].dump());
    // AdaLoRA runs through transformers and peft (tests/cli/transformers_path_test.cpp;
    // scripts/compare_hf_fallback.py against the reference).
    if (adapter_reason(ckpt_fixtures() / g["model_args"]["peft"].get<std::string>())) continue;
    HFLM lm(parse_hf_args(model_args(g["model_args"]), {}));
    EXPECT_FALSE(lm.transformers_reason());
    expect_as_reference(lm, g);
    ++merged;
  }
  EXPECT_EQ(merged, 6u);
}

TEST(HfWeightArgs, SeveralAdaptersSwitchUnlessPeftMustApplyOne) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  HFLM lm(parse_hf_args(model_args({{"pretrained", "llama"}, {"peft", "lora_plain"}}), {}));
  auto at = [](const char* a) { return (ckpt_fixtures() / a).string(); };
  // AdaLoRA needs a model built by transformers: each adapter's run builds its own.
  EXPECT_FALSE(lm.prepare_adapters({at("lora_plain"), at("adalora_llama")}));
  ASSERT_TRUE(lm.prepare_adapters(
      {at("lora_plain"), at("dora_llama"), at("ia3_llama"), at("loha_llama"), at("lokr_llama")}));
  const json goldens = testing::peft_goldens()["hflm"];
  auto golden = [&](const std::string& adapter) {
    for (const auto& g : goldens)
      if (g["model_args"]["peft"] == adapter) return g;
    ADD_FAILURE() << "no golden for " << adapter;
    return json();
  };
  lm.use_adapter(2);
  expect_as_reference(lm, golden("ia3_llama"));
  lm.use_adapter(1);
  expect_as_reference(lm, golden("dora_llama"));
  lm.use_adapter(4);
  expect_as_reference(lm, golden("lokr_llama"));
  lm.use_adapter(3);
  expect_as_reference(lm, golden("loha_llama"));
}

TEST(HfWeightArgs, DeltaAddsEveryTensorAndTiedEmbeddingsTwice) {
  const json g = testing::ckpt_goldens()["delta"];
  for (const char* base : {"llama", "gpt2"}) {
    SCOPED_TRACE(base);
    LoadOptions o = testing::f32();
    o.weights.delta = ckpt_fixtures() / (std::string(base) + "_delta");
    auto model = Transformer::load(ckpt_fixtures() / base, o);
    const auto lp = testing::next_token_logprobs(*model, g[base]["inputs"]);
    EXPECT_LT(testing::max_diff(lp, g[base]["next_token_logprobs"]), 1e-4);
  }
}

TEST(HfWeightArgs, DeltaOfABareBaseModelCheckpoint) {
  // The delta's tensors without the base model's prefix ("layers.0..." for "model.layers.0..."),
  // as checkpoints of LlamaModel are written: from_pretrained maps both onto the same modules.
  lmeval::testing::ScratchDir d("lmeval_delta_bare");
  fs::copy_file(ckpt_fixtures() / "llama_delta" / "config.json", d.path() / "config.json");
  testing::rename_safetensors(
      ckpt_fixtures() / "llama_delta" / "model.safetensors", d.path() / "model.safetensors",
      [](const std::string& n) { return n.rfind("model.", 0) == 0 ? n.substr(6) : n; });
  LoadOptions o = testing::f32();
  o.weights.delta = d.path();
  auto model = Transformer::load(ckpt_fixtures() / "llama", o);
  const json g = testing::ckpt_goldens()["delta"]["llama"];
  EXPECT_LT(testing::max_diff(testing::next_token_logprobs(*model, g["inputs"]),
                              g["next_token_logprobs"]),
            1e-4);
}

TEST(HfWeightArgs, DeltaInHalfPrecisionRoundsAsTorchAdds) {
  // dtype=bfloat16: both models are loaded in bfloat16 and added there; the result is the
  // bfloat16 sum, so loading it again in bfloat16 changes nothing.
  LoadOptions o = testing::f32();
  o.weights.delta = ckpt_fixtures() / "llama_delta";
  o.weights.dtype = "bfloat16";
  auto archive = WeightArchive::open(ckpt_fixtures() / "llama", o.weights);
  const TensorView* t = archive->find("model.layers.0.mlp.up_proj.weight");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->dtype, "F32");
  std::vector<float> v(t->nbytes / 4);
  std::memcpy(v.data(), t->data, t->nbytes);
  auto base = WeightArchive::open(ckpt_fixtures() / "llama");
  auto delta = WeightArchive::open(ckpt_fixtures() / "llama_delta");
  std::vector<float> b(v.size()), d(v.size());
  std::memcpy(b.data(), base->find(t->name)->data, t->nbytes);
  std::memcpy(d.data(), delta->find(t->name)->data, t->nbytes);
  size_t differs_from_float32_sum = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i], round_to_bfloat16(round_to_bfloat16(b[i]) + round_to_bfloat16(d[i]))) << i;
    differs_from_float32_sum += v[i] != b[i] + d[i];
  }
  EXPECT_GT(differs_from_float32_sum, v.size() / 2);
}

std::string error_of(const Json& extra) {
  Json args = {{"pretrained", (ckpt_fixtures() / "llama").string()},
               {"tokenizer", tokenizer_dir().string()},
               {"device", "cpu"}};
  for (const auto& [k, v] : extra.items()) args[k] = v;
  try {
    HFLM lm(parse_hf_args(args, {}));
  } catch (const UserError& e) {
    return std::string(e.what()) + " | " + e.where().file + " | " + e.where().field;
  }
  ADD_FAILURE() << "no error";
  return "";
}

#define EXPECT_ERROR(extra, phrase)                      \
  do {                                                   \
    const std::string m_ = error_of(extra);              \
    EXPECT_NE(m_.find(phrase), std::string::npos) << m_; \
  } while (0)

TEST(HfWeightArgs, RefusalsNameTheArgument) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  EXPECT_ERROR((Json{{"peft", (ckpt_fixtures() / "lora_plain").string()},
                     {"delta", (ckpt_fixtures() / "llama_delta").string()}}),
               "Cannot use both 'peft' and 'delta' options at the same time.");
  EXPECT_ERROR((Json{{"subfolder", "nope"}}), "subfolder 'nope' is not a folder of");
  EXPECT_ERROR((Json{{"delta", "./nope"}}), "delta='./nope' is not a model folder");
  EXPECT_ERROR((Json{{"delta", (ckpt_fixtures() / "gpt2").string()}}),
               "the delta model is a GPT2LMHeadModel and the model a LlamaForCausalLM");
  EXPECT_ERROR((Json{{"peft", "./nope"}}), "adapter folder './nope' does not exist");
  EXPECT_ERROR((Json{{"peft", (ckpt_fixtures() / "lora_other_base").string()}}),
               "do not fit its weight");
  // A delta lacking a tensor the model uses: the reference's KeyError, as a UserError.
  lmeval::testing::ScratchDir d("lmeval_delta");
  fs::copy_file(ckpt_fixtures() / "llama_delta" / "config.json", d.path() / "config.json");
  fs::copy_file(ckpt_fixtures() / "llama_bin_sharded" / "pytorch_model-00001-of-00002.bin",
                d.path() / "pytorch_model.bin");
  EXPECT_ERROR((Json{{"delta", d.path().string()}}), "the delta model lacks tensor");
  // None means no adapter, as in the reference.
  HfArgs a = parse_hf_args(Json{{"pretrained", "x"}, {"peft", "None"}, {"delta", nullptr}}, {});
  EXPECT_TRUE(a.peft.empty());
  EXPECT_TRUE(a.delta.empty());
  try {
    parse_hf_args(Json{{"pretrained", "x"}, {"peft", Json::array({"a", "b"})}}, {});
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    // The CLI splits a list into one run per adapter (tests/e2e/hf_adapters_test.cpp).
    EXPECT_NE(std::string(e.what()).find("a list of adapters reached one model"),
              std::string::npos);
    EXPECT_EQ(e.where().field, "--model_args peft");
  }
}

}  // namespace
}  // namespace lmeval::hf
