// DeepSeek-V2/V3's config.json readings (arch/deepseek_v2.cpp, arch/deepseek_v3.cpp): what the
// fixtures' configs describe, and the configs transformers cannot run refused naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"
#include "models/hf/arch/arch_config.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

Json fixture_config(const std::string& name) {
  return Json::parse(lmeval::testing::read_file(lmeval::testing::source_dir() / "tests" /
                                                "fixtures" / "hf_arch" / name / "config.json"));
}

TEST(HfDeepseekConfig, LatentAttentionAndRoutersAsTransformersReadThem) {
  ArchConfig v2 = parse_arch_config(fixture_config("deepseek_v2"), "config.json");
  EXPECT_TRUE(v2.mla.enabled());
  EXPECT_EQ(v2.mla.q_lora_rank, 0);  // q_lora_rank null: a plain q_proj
  EXPECT_EQ(v2.mla.kv_lora_rank, 16);
  EXPECT_EQ(v2.head_dim, 16);  // max(qk 8 + 8, v 12)
  EXPECT_EQ(v2.value_head_dim(), 12);
  EXPECT_EQ(v2.rotary_dim, 8);
  EXPECT_TRUE(v2.rope_interleaved);
  EXPECT_EQ(v2.moe.router, MoeRouter::kDeepseekV2);
  EXPECT_FALSE(v2.moe.group_limited);
  EXPECT_DOUBLE_EQ(v2.moe.routed_scaling_factor, 1.5);
  EXPECT_EQ(v2.moe.shared_intermediate, 16);
  EXPECT_FALSE(v2.uses_moe(0));  // first_k_dense_replace 1
  EXPECT_TRUE(v2.uses_moe(1));
  EXPECT_DOUBLE_EQ(v2.attn_scale, 0.25);

  // YaRN: qk_head_dim^-0.5 times yarn_get_mscale(4, mscale_all_dim 0.7)^2.
  ArchConfig v2y = parse_arch_config(fixture_config("deepseek_v2_yarn"), "config.json");
  const double m = 0.1 * 0.7 * std::log(4.0) + 1.0;
  EXPECT_NEAR(v2y.attn_scale, 0.25 * m * m, 1e-12);
  EXPECT_EQ(v2y.mla.q_lora_rank, 24);
  EXPECT_TRUE(v2y.moe.group_limited);
  EXPECT_EQ(v2y.moe.n_group, 2);
  EXPECT_EQ(v2y.moe.shared_intermediate, 32);  // two shared experts of 16

  ArchConfig v3 = parse_arch_config(fixture_config("deepseek_v3"), "config.json");
  EXPECT_EQ(v3.moe.router, MoeRouter::kDeepseekV3);
  EXPECT_TRUE(v3.moe.norm_topk_prob);
  EXPECT_EQ(v3.moe.n_group, 2);
  EXPECT_EQ(v3.moe.topk_group, 1);
  EXPECT_DOUBLE_EQ(v3.moe.routed_scaling_factor, 2.5);
  ArchConfig v3y = parse_arch_config(fixture_config("deepseek_v3_yarn"), "config.json");
  EXPECT_FALSE(v3y.rope_interleaved);
  EXPECT_EQ(v3y.mla.q_lora_rank, 0);
  const double m3 = 0.1 * std::log(4.0) + 1.0;  // mscale_all_dim 1
  EXPECT_NEAR(v3y.attn_scale, 0.25 * m3 * m3, 1e-12);
}

TEST(HfDeepseekConfig, AbsentQLoraRankIsTheConfigClassDefault) {
  Json c = fixture_config("deepseek_v3");
  c.erase("q_lora_rank");
  EXPECT_EQ(parse_arch_config(c, "config.json").mla.q_lora_rank, 1536);
}

TEST(HfDeepseekConfig, ConfigsTransformersCannotRunAreRefusedNamingTheField) {
  struct Case {
    const char* fixture;
    std::function<void(Json&)> edit;
    const char* field;
  };
  const Case cases[] = {
      {"deepseek_v2", [](Json& c) { c["num_key_value_heads"] = 2; }, "$.num_key_value_heads"},
      {"deepseek_v2", [](Json& c) { c["topk_method"] = "noaux_tc"; }, "$.topk_method"},
      {"deepseek_v2", [](Json& c) { c["mlp_bias"] = true; }, "$.mlp_bias"},
      {"deepseek_v2", [](Json& c) { c["num_experts_per_tok"] = 5; }, "$.num_experts_per_tok"},
      {"deepseek_v2",
       [](Json& c) {
         c["topk_method"] = "group_limited_greedy";
         c["topk_group"] = 1;
       },
       "$.n_group"},
      {"deepseek_v2_yarn", [](Json& c) { c["n_group"] = 3; }, "$.n_group"},
      {"deepseek_v2_yarn", [](Json& c) { c["topk_group"] = 3; }, "$.topk_group"},
      // V3 scores a group by its two best experts: groups of one cannot be scored.
      {"deepseek_v3", [](Json& c) { c["n_group"] = 8; }, "$.n_group"},
  };
  for (const Case& k : cases) {
    Json c = fixture_config(k.fixture);
    k.edit(c);
    try {
      parse_arch_config(c, "config.json");
      ADD_FAILURE() << k.fixture << " accepted " << k.field;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(k.field), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace lmeval::hf
