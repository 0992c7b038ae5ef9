// gen_kwargs as HFLM and the API models read them (models/gen_kwargs.hpp). Expected values are
// what the reference's lm_eval.models.utils.normalize_gen_kwargs / handle_stop_sequences and
// LocalCompletionsAPI._create_payload (lm-eval 0.4.13) return for the same inputs.
#include "lmeval/models/gen_kwargs.hpp"

#include <gtest/gtest.h>

#include "lmeval/core/error.hpp"

namespace lmeval::gen_kwargs {
namespace {

using Strings = std::vector<std::string>;

TEST(Models_GenKwargs, StopSequencesAsHandleStopSequences) {
  // handle_stop_sequences(["a"], "</s>") == ["a", "</s>"]; (None, "</s>") == ["</s>"];
  // ("x", None) == ["x"]; (["</s>"], "</s>") == ["</s>"].
  for (UntilRule rule : {UntilRule::kHf, UntilRule::kApi}) {
    EXPECT_EQ(stop_sequences(Json::array({"a"}), "</s>", rule), (Strings{"a", "</s>"}));
    EXPECT_EQ(stop_sequences(Json(), "</s>", rule), (Strings{"</s>"}));
    EXPECT_EQ(stop_sequences("x", std::nullopt, rule), (Strings{"x"}));
    EXPECT_EQ(stop_sequences(Json::array({"</s>"}), "</s>", rule), (Strings{"</s>"}));
  }
  // The backends' differences: hf reads a non-string item as its JSON text and refuses other
  // types as usage errors; the API refuses both as the reference's ValueError does.
  EXPECT_EQ(stop_sequences(Json::array({"a", 1}), std::nullopt, UntilRule::kHf),
            (Strings{"a", "1"}));
  EXPECT_THROW(stop_sequences(Json::array({"a", 1}), std::nullopt, UntilRule::kApi), RuntimeError);
  EXPECT_THROW(stop_sequences(5, std::nullopt, UntilRule::kHf), UserError);
  try {
    stop_sequences(5, std::nullopt, UntilRule::kApi);
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()),
              "Expected `kwargs['until']` to be of type Union[str,list] but got 5");
  }
}

TEST(Models_GenKwargs, HfAsNormalizeGenKwargs) {
  // normalize_gen_kwargs({"until": "\n"}, 256): until ["\n"], do_sample False, max_gen_toks 256.
  HfGenKwargs g = normalize_for_hf(Json{{"until", "\n"}}, 256, "");
  EXPECT_EQ(g.until, (Strings{"\n"}));
  EXPECT_FALSE(g.do_sample);
  EXPECT_EQ(g.max_gen_toks, 256);
  // {"until": ["a","b"], "max_new_tokens": 5, "max_tokens": 9}: max_gen_toks 5 (priority).
  g = normalize_for_hf(
      Json{{"until", Json::array({"a", "b"})}, {"max_new_tokens", 5}, {"max_tokens", 9}}, 256,
      "</s>");
  EXPECT_EQ(g.max_gen_toks, 5);
  EXPECT_EQ(g.until, (Strings{"a", "b", "</s>"}));  // HFLM adds eos (handle_stop_sequences)
  // {"max_tokens": 7, "max_completion_tokens": 3, "temperature": 0.5}: 7, do_sample True.
  g = normalize_for_hf(Json{{"max_tokens", 7}, {"max_completion_tokens", 3}, {"temperature", 0.5}},
                       256, "");
  EXPECT_EQ(g.max_gen_toks, 7);
  EXPECT_TRUE(g.do_sample);
  EXPECT_EQ(g.temperature, 0.5);
  // {"max_gen_toks": None, "max_tokens": 12}: None is skipped, 12.
  EXPECT_EQ(
      normalize_for_hf(Json{{"max_gen_toks", nullptr}, {"max_tokens", 12}}, 256, "").max_gen_toks,
      12);
  // {"do_sample": False, "temperature": 0.7}: greedy. {"do_sample": True}: sampling.
  EXPECT_FALSE(
      normalize_for_hf(Json{{"do_sample", false}, {"temperature", 0.7}}, 256, "").do_sample);
  EXPECT_TRUE(normalize_for_hf(Json{{"do_sample", true}}, 256, "").do_sample);
  // {"temperature": 0}: do_sample False. int("x") fails: a usage error naming the key.
  EXPECT_FALSE(normalize_for_hf(Json{{"temperature", 0}}, 256, "").do_sample);
  EXPECT_THROW(normalize_for_hf(Json{{"max_gen_toks", "x"}}, 256, ""), UserError);
  EXPECT_EQ(normalize_for_hf(Json(), 256, "e").until, (Strings{"e"}));
  // float(temperature): "0.5" is 0.5 and True 1.0 (sampling); "hot", None and [1] raise.
  EXPECT_EQ(normalize_for_hf(Json{{"temperature", "0.5"}}, 256, "").temperature, 0.5);
  EXPECT_TRUE(normalize_for_hf(Json{{"temperature", true}}, 256, "").do_sample);
  for (const Json& bad : {Json("hot"), Json(nullptr), Json::array({1})}) {
    try {
      normalize_for_hf(Json{{"temperature", bad}}, 256, "");
      ADD_FAILURE() << bad.dump();
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("generation_kwargs.temperature"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Models_GenKwargs, ApiAsCreatePayload) {
  // _create_payload(generate=True, gen_kwargs={"until": ["\n"], "max_gen_toks": 32, "do_sample":
  // False, "temperature": 0.2, "top_p": 0.9}, eos="<eos>"): max_tokens 32, temperature 0.2,
  // stop ["\n", "<eos>"], then top_p 0.9 (do_sample dropped).
  PayloadGenKwargs p = pop_for_payload(Json{{"until", Json::array({"\n"})},
                                            {"max_gen_toks", 32},
                                            {"do_sample", false},
                                            {"temperature", 0.2},
                                            {"top_p", 0.9}},
                                       256, Json(), "<eos>");
  EXPECT_EQ(p.max_tokens, 32);
  EXPECT_EQ(p.temperature, 0.2);
  EXPECT_EQ(p.stop, (Strings{"\n", "<eos>"}));
  EXPECT_EQ(p.rest, (Json{{"top_p", 0.9}}));
  // {"max_tokens": None, "max_gen_toks": 5}: max_tokens None, max_gen_toks stays among the rest.
  p = pop_for_payload(Json{{"max_tokens", nullptr}, {"max_gen_toks", 5}}, 256, Json(), "<eos>");
  EXPECT_TRUE(p.max_tokens.is_null());
  EXPECT_EQ(p.rest, (Json{{"max_gen_toks", 5}}));
  // {}: max_tokens 256, temperature 0, stop ["<eos>"].
  p = pop_for_payload(Json::object(), 256, Json(), "<eos>");
  EXPECT_EQ(p.max_tokens, 256);
  EXPECT_EQ(p.temperature, 0);
  EXPECT_EQ(p.stop, (Strings{"<eos>"}));
  EXPECT_TRUE(p.rest.empty());
  // TemplateAPI.generate_until's budget reads max_gen_toks only.
  EXPECT_EQ(api_context_max_gen_toks(Json{{"max_tokens", 9}}, 256), 256);
  EXPECT_EQ(api_context_max_gen_toks(Json{{"max_gen_toks", 9}}, 256), 9);
}

}  // namespace
}  // namespace lmeval::gen_kwargs
