// EvalConfig survives the trip through JSON (a shard's partial file), credentials excepted.
#include <gtest/gtest.h>

#include "lmeval/config/eval_config.hpp"

using namespace lmeval;

TEST(Config_EvalConfigJson, RoundTripsEveryFieldButSecrets) {
  EvalConfig c;
  c.tasks = {"a", "b"};
  c.model = "dummy";
  c.model_args = {{"pretrained", "x"}, {"api_key", "sk-secret"}};
  c.limit = 0.5;
  c.num_fewshot = 3;
  c.seed = {1, std::nullopt, 3, 4};
  c.gen_kwargs = {{"temperature", 0}};
  c.apply_chat_template = "tool_use";
  c.fewshot_as_multiturn = true;
  c.shard_index = 2;
  c.shard_count = 5;
  c.finalize();  // moves api_key to model_secrets
  ASSERT_EQ(c.model_secrets["api_key"], "sk-secret");
  Json j = eval_config_to_json(c);
  EXPECT_EQ(j.dump().find("sk-secret"), std::string::npos) << j.dump();
  EvalConfig back = eval_config_from_json(j);
  EXPECT_EQ(eval_config_to_json(back), j);
  EXPECT_EQ(back.tasks, c.tasks);
  EXPECT_EQ(back.limit, 0.5);
  EXPECT_FALSE(back.seed[1].has_value());
  EXPECT_EQ(back.seed[3], 4);
  EXPECT_EQ(back.shard_index, 2);
  EXPECT_TRUE(back.model_secrets.empty());
}
