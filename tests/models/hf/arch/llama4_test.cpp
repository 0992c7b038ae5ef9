// Llama 4 text's config.json readings (arch/llama4.cpp): the fixture's layer pattern as
// Llama4TextConfig derives it, and configs transformers cannot run refused naming the field.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"
#include "models/hf/arch/arch_config.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

Json llama4_config() {
  return Json::parse(lmeval::testing::read_file(lmeval::testing::source_dir() / "tests" /
                                                "fixtures" / "hf_arch" / "llama4" / "config.json"));
}

TEST(HfLlama4Config, LayerPatternAsLlama4TextConfigDerivesIt) {
  ArchConfig a = parse_arch_config(llama4_config(), "config.json");
  EXPECT_EQ(a.layer_rope, (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ(a.layer_attention_chunk, (std::vector<int64_t>{8, 8, 8, 0}));
  EXPECT_EQ(a.layer_moe, (std::vector<uint8_t>{0, 1, 0, 1}));
  EXPECT_EQ(a.intermediate_size, 96);  // intermediate_size_mlp: the dense layers
  EXPECT_EQ(a.moe.expert_intermediate, 24);
  EXPECT_EQ(a.moe.shared_intermediate, 24);
  EXPECT_EQ(a.moe.router, MoeRouter::kLlama4);
  EXPECT_EQ(a.qk_norm, QkNorm::kL2AfterRope);
  EXPECT_TRUE(a.rope_interleaved);
  EXPECT_DOUBLE_EQ(a.attn_floor_scale, 4.0);
  EXPECT_DOUBLE_EQ(a.attn_temperature_scale, 0.1);

  // Without the derived lists: no_rope_layer_interval, interleave_moe_layer_step.
  Json c = llama4_config();
  for (const char* k : {"no_rope_layers", "layer_types", "moe_layers"}) c.erase(k);
  c["no_rope_layer_interval"] = 2;
  c["interleave_moe_layer_step"] = 1;
  c["use_qk_norm"] = false;
  c["attn_temperature_tuning"] = false;
  a = parse_arch_config(c, "config.json");
  EXPECT_EQ(a.layer_rope, (std::vector<uint8_t>{1, 0, 1, 0}));
  EXPECT_EQ(a.layer_attention_chunk, (std::vector<int64_t>{8, 0, 8, 0}));
  EXPECT_EQ(a.layer_moe, (std::vector<uint8_t>{1, 1, 1, 1}));
  EXPECT_EQ(a.qk_norm, QkNorm::kNone);
  EXPECT_DOUBLE_EQ(a.attn_floor_scale, 0.0);
}

TEST(HfLlama4Config, ConfigsTransformersCannotRunAreRefusedNamingTheField) {
  struct Case {
    std::function<void(Json&)> edit;
    const char* field;
  };
  const Case cases[] = {
      {[](Json& c) { c["attention_chunk_size"] = nullptr; }, "$.attention_chunk_size"},
      {[](Json& c) {
         c["no_rope_layers"] = Json::array({1, 0});
       },
       "$.no_rope_layers"},
      {[](Json& c) { c["layer_types"][0] = "sliding_attention"; }, "$.layer_types"},
      {[](Json& c) { c["floor_scale"] = 0; }, "$.floor_scale"},
      {[](Json& c) { c["num_experts_per_tok"] = 5; }, "$.num_experts_per_tok"},
      {[](Json& c) { c["moe_layers"] = 1; }, "$.moe_layers"},
  };
  for (const Case& k : cases) {
    Json c = llama4_config();
    k.edit(c);
    try {
      parse_arch_config(c, "config.json");
      ADD_FAILURE() << "accepted " << k.field;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(k.field), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace lmeval::hf
