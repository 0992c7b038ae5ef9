// The API models' model_args table: docs/models.md lists it, the four kinds share it, its integer
// ranges are the documented ones, and the unknown-key error lists the keys as before the table.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "lmeval/core/error.hpp"
#include "lmeval/models/api/api_models.hpp"
#include "models/api/api_lm.hpp"
#include "models/model_arg_docs.hpp"

namespace lmeval::api {
namespace {

TEST(ApiModels_ArgTable, DocsListTheTable) {
  ModelRegistry reg;
  register_api_models(reg);
  for (const char* kind : {"local-completions", "local-chat-completions", "openai-completions",
                           "openai-chat-completions"}) {
    SCOPED_TRACE(kind);
    const ModelInfoEntry* e = reg.find(kind);
    ASSERT_NE(e, nullptr);
    testing::expect_documented("api", e->args);
    std::set<std::string> seen;
    for (const auto& a : e->args) {
      EXPECT_TRUE(seen.insert(a.key).second) << a.key << " twice";
      EXPECT_FALSE(a.doc.empty()) << a.key << " has no doc text";
    }
  }
}

TEST(ApiModels_ArgTable, UnknownKeyListsTheKeysAsBefore) {
  try {
    parse_api_args(ApiKind::kLocalCompletions, Json{{"base_url", "http://x"}, {"nokey", 1}}, {});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.message(), "unknown model_args key 'nokey' for model local-completions");
    EXPECT_EQ(e.where().field, "--model_args nokey");
    EXPECT_EQ(e.expected(),
              "one of model, pretrained, base_url, tokenizer, tokenizer_backend, "
              "tokenized_requests, num_concurrent, max_retries, timeout, batch_size, max_length, "
              "max_gen_toks, seed, eos_string, add_bos_token, custom_prefix_token_id, truncate, "
              "revision, trust_remote_code, use_fast_tokenizer, verify_certificate, ca_cert_path, "
              "auth_token, header, max_images, think_end_token, api_key");
  }
}

// Every integer key whose accepted values read "A to B" refuses A-1 and B+1 naming the key and
// the range, and takes A and B; timeout refuses 0, nan and 86401.
TEST(ApiModels_ArgTable, IntegerRangesAreTheDocumentedOnes) {
  const std::regex range(R"((-?\d+) to (-?\d+))");
  const Json base = {
      {"model", "m"}, {"base_url", "http://h/v1/completions"}, {"tokenizer_backend", nullptr}};
  size_t checked = 0;
  for (const auto& a : api_model_args()) {
    std::smatch m;
    if (a.info.type != ModelArgType::Int || !std::regex_match(a.info.accepted, m, range)) continue;
    const int64_t lo = std::stoll(m[1]), hi = std::stoll(m[2]);
    for (int64_t ok : {lo, hi}) {
      Json args = base;
      args[a.info.key] = ok;
      EXPECT_NO_THROW(parse_api_args(ApiKind::kLocalCompletions, args, {}))
          << a.info.key << "=" << ok;
    }
    for (int64_t bad : {lo - 1, hi + 1}) {
      Json args = base;
      args[a.info.key] = bad;
      try {
        parse_api_args(ApiKind::kLocalCompletions, args, {});
        ADD_FAILURE() << a.info.key << "=" << bad << " accepted";
      } catch (const UserError& e) {
        EXPECT_EQ(e.where().field, "--model_args " + a.info.key);
        EXPECT_EQ(e.expected(), "an integer from " + a.info.accepted);
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4u);  // num_concurrent, max_retries, max_length, max_gen_toks
  for (const char* bad : {"0", "nan", "86401", "-1"}) {
    Json args = base;
    args["timeout"] = bad;
    try {
      parse_api_args(ApiKind::kLocalCompletions, args, {});
      ADD_FAILURE() << "timeout=" << bad << " accepted";
    } catch (const UserError& e) {
      EXPECT_EQ(e.message(), std::string("model_args timeout=") + bad + " is out of range");
      EXPECT_EQ(e.expected(), "seconds, more than 0 and at most 86400");
    }
  }
  Json args = base;
  args["timeout"] = "86400";
  EXPECT_EQ(parse_api_args(ApiKind::kLocalCompletions, args, {}).timeout_s, 86400);
}

TEST(ApiModels_ArgTable, ModelBeforePretrainedAndNoneKeepsDefaults) {
  const Json base = {{"base_url", "http://h/v1/completions"}, {"tokenizer_backend", "None"}};
  Json both = base;
  both["pretrained"] = "p";
  both["model"] = "m";
  EXPECT_EQ(parse_api_args(ApiKind::kLocalCompletions, both, {}).model, "m");
  Json none_model = base;
  none_model["model"] = "None";
  none_model["pretrained"] = "p";
  none_model["max_gen_toks"] = nullptr;
  none_model["seed"] = "None";
  ApiArgs a = parse_api_args(ApiKind::kLocalCompletions, none_model, {});
  EXPECT_EQ(a.model, "p");
  EXPECT_EQ(a.max_gen_toks, 256);
  EXPECT_EQ(a.seed, 1234);
  EXPECT_EQ(a.tokenizer_backend, "");  // None: prompts sent as text
  EXPECT_FALSE(a.tokenized_requests);
  Json hdr = base;
  hdr["model"] = "m";
  hdr["header"] = R"({"X-Key": "v"})";
  EXPECT_EQ(parse_api_args(ApiKind::kLocalCompletions, hdr, {}).header.value()["X-Key"], "v");
  hdr["header"] = "[1]";
  EXPECT_THROW(parse_api_args(ApiKind::kLocalCompletions, hdr, {}), UserError);
}

}  // namespace
}  // namespace lmeval::api
