// A bad model_args value of an API or engine backend is exit 2 naming the key before any task or
// dataset is loaded (the reference builds its LM before it loads tasks): the run below names a
// task whose data file is absent, which planning would report first.
#include <gtest/gtest.h>

#include <string>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace lmeval::api {
namespace {

struct Case {
  const char* model;
  const char* model_args;
  const char* key;  // the key the message must name
};

class ArgsBeforeData : public ::testing::TestWithParam<Case> {};

TEST_P(ArgsBeforeData, BadValueIsExitTwoBeforeTheTasksAreLoaded) {
  const Case& c = GetParam();
  lmeval::testing::ScratchDir scratch("lmeval_args_first");
  scratch.write("tasks/absent_data.yaml",
                "task: absent_data\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
                "    test: " +
                    (scratch.path() / "no_such_file.jsonl").string() +
                    "\noutput_type: generate_until\ntest_split: test\ndoc_to_text: q\n"
                    "doc_to_target: a\n");
  // The model would need a server or a package: none is started, nothing is looked up.
  const auto r = lmeval::testing::run_command(
      "cd '" + scratch.path().string() +
      "' && env -u VIRTUAL_ENV -u OPENAI_API_KEY PATH=/usr/bin:/bin LMEVAL_NO_INDEX_CACHE=1 '" +
      lmeval::testing::lmeval_binary().string() + "' run --model " + c.model + " --model_args " +
      c.model_args + " --tasks absent_data --include_path tasks");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(c.key), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no_such_file"), std::string::npos) << "the tasks were loaded first:\n"
                                                           << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Backends, ArgsBeforeData,
    ::testing::Values(Case{"vllm", "pretrained=m,tensor_parallel_size=abc", "tensor_parallel_size"},
                      Case{"vllm", "pretrained=m,max_length=8,max_model_len=8", "max_model_len"},
                      Case{"sglang", "pretrained=m,tp_size=abc", "tp_size"},
                      Case{"sglang", "pretrained=m,device=cpu", "device"},
                      Case{"local-completions",
                           "model=m,base_url=http://127.0.0.1:9/v1/completions,num_concurrent=0",
                           "num_concurrent"},
                      Case{"local-chat-completions", "model=m,base_url=ftp://x", "base_url"},
                      Case{"openai-completions", "model=m", "OPENAI_API_KEY"},
                      Case{"anthropic-completions", "model=m,foo=1", "--model_args foo"},
                      Case{"watsonx_llm", "temperature=0.5", "--model_args model_id"}));

}  // namespace
}  // namespace lmeval::api
