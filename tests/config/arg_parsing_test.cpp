// The reference's k=v coercions; expected values are the spec's examples, which its authors
// verified by executing the reference functions (../shared/spec/lm_eval_reference.md §2.3).
#include "lmeval/config/arg_parsing.hpp"

#include <gtest/gtest.h>

#include "lmeval/config/eval_config.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/python_format.hpp"
#include "support/test_support.hpp"

using lmeval::Json;

TEST(Config_ArgParsing, CliModelArgsExamples) {
  auto a = lmeval::merge_dict_flag({{"pretrained=gpt2,dtype=float32", "max_length=128"}},
                                   "--model_args");
  EXPECT_EQ(a, Json::parse(R"({"pretrained":"gpt2","dtype":"float32","max_length":128})"));
  auto b = lmeval::merge_dict_flag({{"a=1,b=x=y,c=True"}}, "--model_args");
  EXPECT_EQ(b, Json::parse(R"({"a":1,"b":"x=y","c":true})"));
  auto c = lmeval::merge_dict_flag({{"a=1"}, {"a=2,b=3"}}, "--model_args");
  EXPECT_EQ(c, Json::parse(R"({"a":2,"b":3})"));
  auto d = lmeval::merge_dict_flag({{R"({"pretrained":"gpt2","x":1})", "y=2"}}, "--model_args");
  EXPECT_EQ(d, Json::parse(R"({"pretrained":"gpt2","x":1})"));
}

TEST(Config_ArgParsing, CliValueCoercion) {
  EXPECT_EQ(lmeval::cli_value("-1"), Json(-1.0));
  EXPECT_TRUE(lmeval::cli_value("-1").is_number_float());
  EXPECT_EQ(lmeval::cli_value("1e3"), Json(1000.0));
  EXPECT_EQ(lmeval::cli_value("None"), Json(nullptr));
  EXPECT_EQ(lmeval::cli_value("none"), Json("none"));
  EXPECT_EQ(lmeval::cli_value("float32"), Json("float32"));
  EXPECT_EQ(lmeval::cli_value("[1,2]"), Json::parse("[1,2]"));
  EXPECT_EQ(lmeval::cli_value("0x10"), Json(16));
  EXPECT_EQ(lmeval::cli_value("'x'"), Json("x"));
}

TEST(Config_ArgParsing, YamlStringCoercion) {
  auto d = lmeval::simple_parse_args_string("a=-1,b=none,c=[1],d=0x10,e='q',f=1e3,g=x=y,h");
  EXPECT_EQ(d["a"], Json(-1));
  EXPECT_TRUE(d["a"].is_number_integer());
  EXPECT_EQ(d["b"], Json(nullptr));
  EXPECT_EQ(d["c"], Json("[1]"));
  EXPECT_EQ(d["d"], Json("0x10"));
  EXPECT_EQ(d["e"], Json("q"));
  EXPECT_EQ(d["f"], Json(1000.0));
  EXPECT_EQ(d["g"], Json("x=y"));
  EXPECT_EQ(d["h"], Json(""));
}

TEST(Config_ArgParsing, ItemWithoutEqualsIsAUserError) {
  EXPECT_THROW(lmeval::merge_dict_flag({{"pretrained"}}, "--model_args"), lmeval::UserError);
  EXPECT_THROW(lmeval::merge_dict_flag({{"{bad json"}}, "--model_args"), lmeval::UserError);
}

TEST(Config_Seed, NormalisationRules) {
  auto s = lmeval::parse_seed("42");
  EXPECT_EQ(s, (std::vector<std::optional<int64_t>>{42, 42, 42, 42}));
  s = lmeval::parse_seed("1,None,3");
  EXPECT_EQ(s, (std::vector<std::optional<int64_t>>{1, std::nullopt, 3, 1234}));
  EXPECT_THROW(lmeval::parse_seed("1,2"), lmeval::UserError);
  EXPECT_THROW(lmeval::parse_seed("x"), lmeval::UserError);
}

TEST(Config_EvalConfig, UnknownYamlKeyHasDidYouMeanAndLine) {
  auto y = lmeval::parse_yaml("model: dummy\ntaks: arc_easy\n", "eval.yaml");
  lmeval::EvalConfig cfg;
  try {
    lmeval::apply_config_yaml(y, cfg);
    FAIL();
  } catch (const lmeval::UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("eval.yaml:2"), std::string::npos) << m;
    EXPECT_NE(m.find("did you mean 'tasks'"), std::string::npos) << m;
  }
}

TEST(Config_EvalConfig, FinalizeRules) {
  lmeval::EvalConfig cfg;
  cfg.log_samples = true;
  EXPECT_THROW(cfg.finalize(), lmeval::UserError);
  lmeval::EvalConfig c2;
  c2.fewshot_as_multiturn = true;
  EXPECT_THROW(c2.finalize(), lmeval::UserError);
  lmeval::EvalConfig c3;
  c3.model_args = Json::parse(R"({"pretrained":"m","x":1})");
  c3.metadata = Json::parse(R"({"x":2})");
  c3.finalize();
  EXPECT_EQ(c3.metadata, Json::parse(R"({"pretrained":"m","x":2})"));
}

TEST(Config_EvalConfig, CredentialsLeaveModelArgs) {
  lmeval::EvalConfig cfg;
  cfg.model_args =
      Json::parse(R"({"model":"m","api_key":"sk-1","auth_token":"t","header":{"X":"y"}})");
  cfg.finalize();
  EXPECT_EQ(cfg.model_args, Json::parse(R"({"model":"m"})"));
  EXPECT_EQ(cfg.model_secrets,
            Json::parse(R"({"api_key":"sk-1","auth_token":"t","header":{"X":"y"}})"));
  EXPECT_EQ(cfg.metadata, Json::parse(R"({"model":"m"})"));  // task metadata never holds them
}

TEST(Config_FewshotSeeds, ParsingAndErrors) {
  using lmeval::parse_fewshot_seeds;
  lmeval::SourceLocation where{"", 0, 0, "--fewshot_seeds"};
  EXPECT_EQ(parse_fewshot_seeds(lmeval::Json("1234,1, 2,3,-4"), where),
            (std::vector<int64_t>{1234, 1, 2, 3, -4}));
  EXPECT_EQ(parse_fewshot_seeds(lmeval::Json::parse("[5, \"6\"]"), where),
            (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(parse_fewshot_seeds(lmeval::Json(9), where), (std::vector<int64_t>{9}));
  EXPECT_THROW(parse_fewshot_seeds(lmeval::Json("1,1"), where), lmeval::UserError);
  EXPECT_THROW(parse_fewshot_seeds(lmeval::Json("1,x"), where), lmeval::UserError);
  EXPECT_THROW(parse_fewshot_seeds(lmeval::Json("1,,2"), where), lmeval::UserError);
  EXPECT_THROW(parse_fewshot_seeds(lmeval::Json(""), where), lmeval::UserError);
  EXPECT_THROW(parse_fewshot_seeds(lmeval::Json(1.5), where), lmeval::UserError);
  try {
    parse_fewshot_seeds(lmeval::Json("3,2,3"), where);
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find('3'), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("--fewshot_seeds"), std::string::npos) << e.what();
  }
}

TEST(Config_FewshotSeeds, FirstSeedBecomesTheFewshotSeed) {
  lmeval::EvalConfig cfg;
  cfg.fewshot_seeds = {7, 1234};
  cfg.finalize();
  EXPECT_EQ(cfg.seed[3], 7);
  lmeval::EvalConfig plain;
  plain.finalize();
  EXPECT_EQ(plain.seed[3], 1234);
}

// Every dict flag against the reference's own MergeDictAction / split_top_level /
// simple_parse_args_string (scripts/gen_kv_flag_goldens.py).
TEST(Config_ArgParsing, KeyValueFlagsAsTheReferenceParsesThem) {
  auto g = nlohmann::ordered_json::parse(lmeval::testing::read_file(
      lmeval::testing::source_dir() / "tests/config/goldens/kv_flags.json"));
  int n = 0;
  for (const auto& c : g["merge_dict_flag"]) {
    auto values = c["values"].get<std::vector<std::string>>();
    SCOPED_TRACE(c["values"].dump());
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_EQ(lmeval::split_top_level(values[i]),
                c["split_top_level"][i].get<std::vector<std::string>>());
    if (c.contains("error")) {
      std::string want = c["error"].get<std::string>();
      want = want.substr(want.find(": ") + 2);
      if (want.rfind("argument --flag: ", 0) == 0) want = want.substr(17);
      want = want.substr(0, want.find(". Hint"));
      try {
        lmeval::merge_dict_flag({values}, "--flag");
        ADD_FAILURE() << "no error; the reference says " << want;
      } catch (const lmeval::UserError& e) {
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      }
    } else {
      EXPECT_EQ(lmeval::py::json_dumps(lmeval::merge_dict_flag({values}, "--flag")),
                c["result"].get<std::string>());
    }
    ++n;
  }
  for (const auto& c : g["simple_parse_args_string"]) {
    SCOPED_TRACE(c["text"].get<std::string>());
    EXPECT_EQ(
        lmeval::py::json_dumps(lmeval::simple_parse_args_string(c["text"].get<std::string>())),
        c["result"].get<std::string>());
    ++n;
  }
  EXPECT_GE(n, 30);
}
