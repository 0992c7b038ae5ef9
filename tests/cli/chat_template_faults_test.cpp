// A broken chat template under --apply_chat_template: exit 2 naming the file it came from
// (tokenizer_config.json's chat_template field, or chat_template.jinja) with the line and column in
// the template, for a syntax error and for a template that raises.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::run_command;

TEST(ChatTemplateFaults, ErrorsNameTheFileTheTemplateCameFrom) {
  LMEVAL_REQUIRE_SHARED("fixtures/gpt2/tokenizer.json");
  lmeval::testing::ScratchDir scratch{"lmeval_chat_faults"};
  const fs::path tok = scratch.path() / "tok";
  fs::create_directories(tok);
  fs::copy_file(lmeval::testing::shared_dir() / "fixtures/gpt2/tokenizer.json",
                tok / "tokenizer.json");
  auto run = [&] {
    return run_command("cd '" + scratch.path().string() + "' && '" +
                       lmeval::testing::lmeval_binary().string() +
                       "' run --model dummy --tasks demo_story_cloze --limit 1 --model_args "
                       "'tokenizer=" +
                       tok.string() + "' --apply_chat_template");
  };
  for (const std::string& tmpl : {std::string("{% for m in messages %}{{ m.content }"),
                                  std::string("{{ raise_exception('no chat here') }}")}) {
    std::ofstream(tok / "tokenizer_config.json", std::ios::trunc)
        << "{\"chat_template\": \"" << tmpl << "\"}";
    auto r = run();
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find((tok / "tokenizer_config.json").string() + " $.chat_template"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("chat template:1:"), std::string::npos) << r.err;
  }
  fs::remove(tok / "tokenizer_config.json");
  std::ofstream(tok / "chat_template.jinja") << "{% if %}";
  auto r = run();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find((tok / "chat_template.jinja").string() + ": chat template:1:"),
            std::string::npos)
      << r.err;
}
