// Masking of credentials in messages: k=v, JSON (also malformed), Python dict reprs, headers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "lmeval/core/secrets.hpp"

using namespace lmeval;

TEST(Core_Secrets, MasksKeyValueForms) {
  EXPECT_EQ(mask_secrets("model=x,api_key=sk-abc123,base_url=http://h"),
            "model=x,api_key=***,base_url=http://h");
  EXPECT_EQ(mask_secrets("pretrained=m,token=hf_XYZ"), "pretrained=m,token=***");
  // think_end_token is no credential.
  EXPECT_EQ(mask_secrets("think_end_token=</think>"), "think_end_token=</think>");
}

TEST(Core_Secrets, MasksJsonEvenWhenMalformed) {
  std::string bad =
      R"({"model": "x", "api_key": "sk-SECRET9", "base_url": "http://127.0.0.1:9/v1/completions",})";
  std::string m = mask_secrets(bad);
  EXPECT_EQ(m.find("sk-SECRET9"), std::string::npos) << m;
  EXPECT_NE(m.find("\"api_key\": \"***\""), std::string::npos) << m;
  EXPECT_NE(m.find("base_url"), std::string::npos) << m;
  // Unterminated string: masked to the end.
  EXPECT_EQ(mask_secrets(R"({"auth_token": "abcdef)"), R"({"auth_token": "***)");
  // A header object is masked whole; Python dict repr quoting too.
  std::string h = mask_secrets(R"({'header': {'Authorization': 'Bearer sk-H'}, 'model': 'm'})");
  EXPECT_EQ(h.find("sk-H"), std::string::npos) << h;
  EXPECT_NE(h.find("'model': 'm'"), std::string::npos) << h;
  EXPECT_EQ(mask_secrets("Authorization: Bearer sk-zzz"), "Authorization: ***");
}

TEST(Core_Secrets, RedactsEnvironmentAndGivenValues) {
  setenv("OPENAI_API_KEY", "sk-ENVSECRET", 1);
  EXPECT_EQ(redact("error near sk-ENVSECRET here"), "error near *** here");
  EXPECT_EQ(redact("value q-1234 leaked", {"q-1234"}), "value *** leaked");
  unsetenv("OPENAI_API_KEY");
  // The variables the API backends read their keys from (the reference's and their SDKs').
  for (const char* var : {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "TEXTSYNTH_API_SECRET_KEY",
                          "WATSONX_API_KEY", "WATSONX_PASSWORD", "WATSONX_TOKEN"}) {
    const char* was = std::getenv(var);
    const std::string saved = was ? was : "";
    setenv(var, "v-ENVSECRET-2", 1);
    EXPECT_EQ(redact("near v-ENVSECRET-2 here"), "near *** here") << var;
    if (was)
      setenv(var, saved.c_str(), 1);
    else
      unsetenv(var);
  }
  auto values = secret_values_in("api_key=sk-1,token=tt");
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0], "sk-1");
  EXPECT_EQ(values[1], "tt");
}

// A field label ("--model_args token: ...", validate's "model_args.token: ...") is followed by
// the message, which stays readable; a value in the message is still masked.
TEST(Core_Secrets, FieldLabelsAreNotValues) {
  EXPECT_EQ(mask_secrets("--model_args token: unknown model_args key 'token' for model hf"),
            "--model_args token: unknown model_args key 'token' for model hf");
  EXPECT_EQ(mask_secrets("model_args.api_key: unknown model_args key 'api_key'"),
            "model_args.api_key: unknown model_args key 'api_key'");
  EXPECT_EQ(mask_secrets("--model_args token: bad value in token=hf_XYZ"),
            "--model_args token: bad value in token=***");
  // Elsewhere `token: value` is still a value (YAML-style).
  EXPECT_EQ(mask_secrets("api_key: sk-abc"), "api_key: ***");
}

// Issue 32: a password in a URL, and a header value a server echoes on its own.
TEST(Core_Secrets, MasksUrlPasswordsAndHeaderValuesOneByOne) {
  EXPECT_EQ(lmeval::mask_secrets("base_url=http://user:hunter22@host:8000/v1 failed"),
            "base_url=http://user:***@host:8000/v1 failed");
  EXPECT_EQ(lmeval::mask_url_passwords("'https://a:b%40c@h/x', http://h/y, http://u@h/"),
            "'https://a:***@h/x', http://h/y, http://u@h/");
  const auto values =
      lmeval::secret_values_in(R"(header={"X-Key": "k-123456", "X-Other": "o-654321"})");
  EXPECT_NE(std::find(values.begin(), values.end(), "k-123456"), values.end());
  EXPECT_NE(std::find(values.begin(), values.end(), "o-654321"), values.end());
  EXPECT_EQ(lmeval::redact("HTTP 400: bad header k-123456", values), "HTTP 400: bad header ***");
  const auto pw = lmeval::secret_values_in("base_url=http://user:hunter22@host/v1");
  EXPECT_NE(std::find(pw.begin(), pw.end(), "hunter22"), pw.end());
}
