// LM::apply_chat_template: generation prompt, continue_final_message and the system-less retry.
#include <gtest/gtest.h>

#include "lmeval/core/error.hpp"
#include "lmeval/models/lm.hpp"

using namespace lmeval;

namespace {

struct ChatLM : LM {
  std::string tmpl;
  explicit ChatLM(std::string t) : tmpl(std::move(t)) {}
  std::vector<LoglikelihoodResult> loglikelihood(
      const std::vector<LoglikelihoodRequest>&) override {
    return {};
  }
  std::vector<double> loglikelihood_rolling(const std::vector<std::string>&) override { return {}; }
  std::vector<std::string> generate_until(const std::vector<GenerationRequest>&) override {
    return {};
  }
  std::optional<std::string> chat_template(const std::string&) const override { return tmpl; }
  Json chat_template_variables() const override { return {{"bos_token", "<s>"}}; }
};

const char* kTemplate =
    "{{ bos_token }}{% for m in messages %}{% if m.role == 'system' and no_system is defined %}"
    "{{ raise_exception('no system') }}{% endif %}<{{ m.role }}>{{ m.content }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}";

}  // namespace

TEST(Models_ChatTemplate, GenerationPromptAndSpecialTokens) {
  ChatLM lm(kTemplate);
  EXPECT_EQ(lm.apply_chat_template({{"user", "hi"}}, true), "<s><user>hi</s><assistant>");
}

TEST(Models_ChatTemplate, ContinueFinalMessageCutsAfterItsContent) {
  ChatLM lm(kTemplate);
  EXPECT_EQ(lm.apply_chat_template({{"user", "hi"}, {"assistant", "Answer:"}}, false),
            "<s><user>hi</s><assistant>Answer:");
}

TEST(Models_ChatTemplate, RetriesWithoutSystemWhenTheTemplateRaises) {
  std::string t = std::string("{% set no_system = true %}") + kTemplate;
  ChatLM lm(t);
  EXPECT_EQ(lm.apply_chat_template({{"system", "S"}, {"user", "hi"}}, true),
            "<s><user>hi</s><assistant>");
}

TEST(Models_ChatTemplate, NoTemplateIsAUserError) {
  struct NoChat : ChatLM {
    NoChat() : ChatLM("") {}
    std::optional<std::string> chat_template(const std::string&) const override {
      return std::nullopt;
    }
  } lm;
  EXPECT_THROW(lm.apply_chat_template({{"user", "hi"}}, true), UserError);
}
