// Bad inputs a demanding user tries (issue 14): each ends with exit 2 (or 1) and one message
// naming the file and line/byte offset, or the flag/field, and what was expected; never an
// "internal error", a json exception text, a signal, or a leaked credential.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::testing::run_command;

namespace {

class InputErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "tasks");
    write("data/test.jsonl",
          "{\"q\": \"1+1?\", \"choices\": [\"1\", \"2\"], \"label\": 1}\n"
          "{\"q\": \"2+2?\", \"choices\": [\"4\", \"5\"], \"label\": 0}\n");
  }
  void write(const std::string& rel, const std::string& text) { scratch_.write(rel, text); }
  // A valid multiple-choice task over `data` (relative to the test folder).
  void task(const std::string& name, const std::string& extra = "",
            const std::string& data = "data/test.jsonl", const std::string& target = "label") {
    write("tasks/" + name + ".yaml",
          "task: " + name + "\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " +
              (dir_ / data).string() + "\noutput_type: multiple_choice\ntest_split: test\n" +
              "doc_to_text: \"Q: {{q}}\\nA:\"\ndoc_to_choice: choices\ndoc_to_target: " + target +
              "\n" + extra);
  }
  lmeval::testing::CommandResult lm(const std::string& args, const std::string& env = "") {
    return run_command("cd '" + dir_.string() + "' && LMEVAL_NO_INDEX_CACHE=1 " + env + " '" +
                       lmeval::testing::lmeval_binary().string() + "' " + args + " </dev/null");
  }
  // Exit 2 with every `want` in stderr and none of the signs of an unhandled failure.
  void expect_user_error(const lmeval::testing::CommandResult& r,
                         std::initializer_list<const char*> want) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    for (const char* w : want)
      EXPECT_NE(r.err.find(w), std::string::npos) << "missing '" << w << "' in:\n" << r.err;
    for (const char* bad :
         {"internal error", "json.exception", "stoll", "libtorch error", "not implemented for"})
      EXPECT_EQ(r.err.find(bad), std::string::npos) << "'" << bad << "' in:\n" << r.err;
  }
  std::string run_t1(const std::string& extra = "") {
    return "run --model dummy --tasks t1 --include_path tasks " + extra;
  }
  lmeval::testing::ScratchDir scratch_{"lmeval_in"};
  const fs::path dir_ = scratch_.path();
};

}  // namespace

// ---------------------------------------------------------------- non-UTF-8 bytes

TEST_F(InputErrors, NonUtf8TaskYamlNamesFileLineOffset) {
  task("t1", "description: \"\xff\xfe\"\n");
  auto r = lm(run_t1());
  expect_user_error(r, {"t1.yaml:11", "UTF-8 octet", "byte offset", "expected UTF-8"});
  auto v = lm("validate --model dummy --tasks t1 --include_path tasks");
  expect_user_error(v, {"t1.yaml:11", "expected UTF-8"});
}

TEST_F(InputErrors, NonUtf8JsonlAndCsvNameFileLineOffset) {
  write("data/test.jsonl",
        "{\"q\": \"a\", \"choices\": [\"1\", \"2\"], \"label\": 1}\n"
        "{\"q\": \"b\xff\", \"choices\": [\"1\", \"2\"], \"label\": 1}\n");
  task("t1");
  expect_user_error(lm(run_t1()), {"test.jsonl:2", "byte offset 54", "expected UTF-8"});
  write("data/test.csv", "q,a,b,label\nfine,1,2,0\nbad\xc3(,1,2,1\n");
  write("tasks/t1.yaml", "task: t1\ndataset_path: csv\ndataset_kwargs:\n  data_files:\n    test: " +
                             (dir_ / "data/test.csv").string() +
                             "\noutput_type: multiple_choice\ntest_split: test\ndoc_to_text: q\n"
                             "doc_to_choice: '{{[a|string, b|string]}}'\ndoc_to_target: label\n");
  expect_user_error(lm(run_t1()), {"test.csv:3", "byte offset 26", "expected UTF-8"});
}

TEST_F(InputErrors, NonUtf8ArgumentIsRefused) {
  task("t1");
  expect_user_error(lm(run_t1("--system_instruction \"$(printf '\\377')\"")), {"not valid UTF-8"});
}

// ---------------------------------------------------------------- nesting depth

TEST_F(InputErrors, DeeplyNestedJsonRowIsRefusedNotACrash) {
  // 60,000 nested arrays crashed the samples writer (stack overflow) with --log_samples.
  write("data/test.jsonl",
        "{\"q\": \"a\", \"choices\": [\"1\", \"2\"], \"label\": 1}\n{\"q\": \"b\", \"deep\": " +
            std::string(60000, '[') + std::string(60000, ']') +
            ", \"choices\": [\"1\", \"2\"], \"label\": 1}\n");
  task("t1");
  auto r = lm(run_t1("--log_samples --output_path out"));
  expect_user_error(r, {"test.jsonl:2", "nested more than 512", "byte offset"});
  // 512 levels are accepted.
  write("data/test.jsonl", "{\"q\": \"b\", \"deep\": " + std::string(511, '[') +
                               std::string(511, ']') +
                               ", \"choices\": [\"1\", \"2\"], \"label\": 1}\n");
  auto ok = lm(run_t1("--log_samples --output_path out"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST_F(InputErrors, DeeplyNestedYamlIsRefused) {
  // The YAML reader's own limit (src/config/yaml_composer.cpp): 200 levels.
  task("t1", "metadata:\n  x: " + std::string(600, '[') + std::string(600, ']') + "\n");
  expect_user_error(lm(run_t1()), {"t1.yaml:12", "nesting deeper than 200"});
  task("t1", "metadata:\n  x: " + std::string(5000, '[') + std::string(5000, ']') + "\n");
  expect_user_error(lm(run_t1()), {"t1.yaml:12", "nesting"});
}

TEST_F(InputErrors, DeeplyNestedTemplateIsRefused) {
  write("tasks/t1.yaml",
        "task: t1\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: " +
            (dir_ / "data/test.jsonl").string() +
            "\noutput_type: multiple_choice\ntest_split: test\ndoc_to_text: \"{{ " +
            std::string(2000, '(') + "q" + std::string(2000, ')') +
            " }}\"\ndoc_to_choice: choices\ndoc_to_target: label\n");
  expect_user_error(lm(run_t1()), {"t1", "doc_to_text", "nesting too deep"});
}

TEST_F(InputErrors, AliasesExpandingTooFarAreRefused) {
  // A chain of aliases nests deeper than the YAML reader's syntactic limit once expanded.
  std::string chain = "metadata:\n  a0: &a0 [x]\n";
  for (int i = 1; i < 600; ++i)
    chain += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" +
             std::to_string(i - 1) + "]\n";
  task("t1", chain);
  expect_user_error(lm(run_t1()),
                    {"t1.yaml:12", "nested more than 512 levels deep once aliases are expanded"});
  // "Billion laughs": nine lines that expand to 10^10 values.
  std::string laughs = "metadata:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 10; ++i) {
    laughs += "  l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) laughs += (k ? ", *l" : "*l") + std::to_string(i - 1);
    laughs += "]\n";
  }
  task("t1", laughs);
  expect_user_error(lm(run_t1()),
                    {"t1.yaml:", "aliases expand the file to more than 1000000 values"});
}

// JSON given in flags and read from result, part and model files: limited like JSON rows, named
// by flag or file (it once crashed the recursive printers and copies).
TEST_F(InputErrors, DeeplyNestedJsonInFlagsAndFilesIsRefused) {
  task("t1");
  const std::string deep = "{\"a\": " + std::string(60000, '[') + std::string(60000, ']') + "}";
  write("deep.json", deep);
  for (const char* flag : {"--model_args", "--gen_kwargs", "--metadata", "--samples"}) {
    SCOPED_TRACE(flag);
    expect_user_error(lm(run_t1(std::string(flag) + " \"$(cat deep.json)\"")),
                      {flag, "nested more than 512 levels deep", "byte offset 517"});
  }
  write("parts/shard_1of2.json", deep);
  write("parts/shard_2of2.json", deep);
  expect_user_error(lm("merge parts --output_path merged"),
                    {"shard_1of2.json:1", "nested more than 512"});
  write("r1/results_2024-01-01T00-00-00.json", deep);
  write("r2/results_2024-01-01T00-00-00.json", deep);
  expect_user_error(lm("compare r1 r2"),
                    {"results_2024-01-01T00-00-00.json:1", "nested more than 512"});
  fs::copy(lmeval::testing::source_dir() / "models/stories260K", dir_ / "model",
           fs::copy_options::recursive);
  write("model/config.json", deep);
  expect_user_error(lm("run --model hf --device cpu --tasks t1 --include_path tasks --model_args "
                       "pretrained=model"),
                    {"config.json:1", "nested more than 512"});
}

TEST_F(InputErrors, NonUtf8ParquetStringNamesColumnAndRow) {
  // Made by scripts/gen_non_utf8_parquet.py (pyarrow refuses to read it: UnicodeDecodeError).
  fs::path bad =
      lmeval::testing::source_dir() / "tests/data/fixtures_parquet_bad/string_not_utf8.parquet";
  write(
      "tasks/t1.yaml",
      "task: t1\ndataset_path: parquet\ndataset_kwargs:\n  data_files:\n    test: " + bad.string() +
          "\noutput_type: multiple_choice\ntest_split: test\ndoc_to_text: q\n"
          "doc_to_choice: choices\ndoc_to_target: label\n");
  expect_user_error(lm(run_t1()), {"string_not_utf8.parquet", "column 'q', row 1", "byte 0xFF",
                                   "expected UTF-8"});
}

// ---------------------------------------------------------------- flag and model_args ranges

TEST_F(InputErrors, OutOfRangeFlagsNameFlagAndRange) {
  task("t1");
  struct Case {
    const char* args;
    const char* flag;
    const char* range;
  };
  for (const Case& c :
       {Case{"--batch_size 99999999999999999999", "--batch_size", "1 to 2147483647"},
        Case{"--batch_size 0", "--batch_size", "1 to 2147483647"},
        Case{"--batch_size auto:0", "--batch_size", "auto or auto:N"},
        Case{"--limit -1", "--limit", "between 0 and 1"},
        Case{"--limit nan", "--limit", "between 0 and 1"},
        Case{"--limit inf", "--limit", "between 0 and 1"},
        Case{"--limit 1e308", "--limit", "9223372036854775807"},
        Case{"--limit 0", "--limit", "between 0 and 1"},
        Case{"--num_fewshot -3", "--num_fewshot", "from 0 to"},
        Case{"--max_batch_size -3", "--max_batch_size", "from 1 to"},
        Case{"--bootstrap_iters -1", "--bootstrap_iters", "from 0 to"},
        Case{"--verbosity LOUD", "--verbosity", "DEBUG, INFO, WARNING, ERROR or CRITICAL"},
        Case{"--include_path /nonexistent_lmeval", "--include_path", "existing folder"}}) {
    SCOPED_TRACE(c.args);
    std::string args =
        std::string("run --model dummy --tasks t1 ") +
        (std::string(c.args).find("include_path") == std::string::npos ? "--include_path tasks "
                                                                       : "") +
        c.args;
    expect_user_error(lm(args), {c.flag, c.range});
  }
  // The same checks hold for values from --config.
  write("eval.yaml", "model: dummy\ntasks: t1\ninclude_path: tasks\nlimit: -2\n");
  expect_user_error(lm("run --config eval.yaml"), {"--limit", "between 0 and 1"});
  // And validate reports them.
  expect_user_error(lm("validate --model dummy --tasks t1 --include_path tasks --limit nan"),
                    {"--limit", "nan"});
}

TEST_F(InputErrors, ValidFlagValuesStayValid) {
  task("t1");
  // The reference's forms: a fraction below 1, a count, auto batch sizes, lower-case log levels.
  for (const char* args : {"--limit 0.5", "--limit 1", "--limit 10.7", "--batch_size auto",
                           "--batch_size auto:2", "--batch_size 8 --max_batch_size 16",
                           "--num_fewshot 0", "--bootstrap_iters 0", "--verbosity debug"}) {
    SCOPED_TRACE(args);
    auto r = lm(run_t1(args));
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
}

TEST_F(InputErrors, OutOfRangeModelArgsNameFieldAndRange) {
  task("t1");
  std::string model = (lmeval::testing::source_dir() / "models/stories260K").string();
  const std::string hf =
      "run --model hf --tasks t1 --include_path tasks --device cpu --model_args pretrained=" +
      model;
  expect_user_error(lm(hf + ",max_length=-5"), {"--model_args max_length", "from 1 to"});
  expect_user_error(lm(hf + ",batch_size=99999999999999999999"),
                    {"--model_args batch_size", "1 to 2147483647"});
  const std::string api =
      "run --model local-completions --tasks t1 --include_path tasks --model_args "
      "model=x,base_url=http://127.0.0.1:9/v1/completions,tokenizer_backend=none,";
  expect_user_error(lm(api + "max_length=-5"), {"--model_args max_length", "from 2 to"});
  expect_user_error(lm(api + "num_concurrent=0"), {"--model_args num_concurrent", "from 1 to"});
  expect_user_error(lm(api + "max_gen_toks=-1"), {"--model_args max_gen_toks", "from 1 to"});
  expect_user_error(lm(api + "timeout=nan"), {"--model_args timeout", "more than 0"});
}

// ---------------------------------------------------------------- weights, adapters, deltas

// pytorch_model.bin is read without running its pickle; an adapter or a delta that does not fit
// the model is refused naming the file and the module or tensor.
TEST_F(InputErrors, HostilePicklesAndMismatchedAdaptersExitTwo) {
  task("t1");
  const fs::path ckpt = lmeval::testing::source_dir() / "tests/fixtures/hf_ckpt";
  const std::string stories = (lmeval::testing::source_dir() / "models/stories260K").string();
  const std::string hf =
      "run --model hf --tasks t1 --include_path tasks --device cpu "
      "--model_args tokenizer=" +
      stories + ",pretrained=";
  fs::create_directories(dir_ / "evil");
  fs::copy_file(ckpt / "llama/config.json", dir_ / "evil/config.json");
  // torch's legacy layout: magic number, protocol 1001, system information, then a pickle that
  // calls os.system.
  using namespace std::string_literals;
  write("evil/pytorch_model.bin",
        "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19."s
        "\x80\x02M\xe9\x03."s
        "\x80\x02}X\x0d\x00\x00\x00little_endian\x88s."s
        "\x80\x02"
        "cposix\nsystem\nX\x0c\x00\x00\x00touch pwned!\x85R."s);
  expect_user_error(lm(hf + "evil"), {"evil/pytorch_model.bin", "the global posix.system"});
  EXPECT_FALSE(fs::exists(dir_ / "pwned!"));
  const std::string llama = (ckpt / "llama").string();
  expect_user_error(lm(hf + llama + ",peft=" + (ckpt / "lora_other_base").string()),
                    {"lora_other_base/adapter_model.safetensors",
                     "module model.layers.0.self_attn.q_proj", "do not fit"});
  expect_user_error(lm(hf + llama + ",delta=" + (ckpt / "gpt2_delta").string()),
                    {"gpt2_delta/config.json", "the delta model is a GPT2LMHeadModel"});
  expect_user_error(lm(hf + llama + ",peft=" + (ckpt / "lora_plain").string() +
                       ",delta=" + (ckpt / "llama_delta").string()),
                    {"Cannot use both 'peft' and 'delta'"});
  auto ok = lm(hf + llama + ",peft=" + (ckpt / "lora_plain").string());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// ---------------------------------------------------------------- secrets

TEST_F(InputErrors, SecretsNeverEchoedEvenInMalformedModelArgs) {
  task("t1");
  const std::string key = "sk-TESTSECRET0123456789";
  const std::string env = "OPENAI_API_KEY=" + key;
  // Invalid JSON (trailing comma) used to be echoed whole, key included.
  auto r =
      lm("run --model local-completions --tasks t1 --include_path tasks --model_args '{\"model\": "
         "\"x\", \"api_key\": \"" +
             key + "\", \"base_url\": \"http://127.0.0.1:9/v1/completions\",}'",
         env);
  expect_user_error(r, {"Invalid JSON", "--model_args"});
  // A k=v argument with a bad value, and one without '='.
  auto r2 =
      lm("run --model local-completions --tasks t1 --include_path tasks --model_args "
         "model=x,api_key=" +
             key + ",num_concurrent=many,base_url=http://127.0.0.1:9/v1/completions",
         env);
  expect_user_error(r2, {"num_concurrent"});
  auto r3 =
      lm("run --model local-completions --tasks t1 --include_path tasks --model_args "
         "model=x,api_key:" +
             key,
         env);
  expect_user_error(r3, {"key=value"});
  auto r4 =
      lm("validate --model local-completions --tasks t1 --include_path tasks --model_args "
         "model=x,token=" +
             key + ",header=" + key + ",nokey=1",
         env);
  EXPECT_EQ(r4.exit_code, 2);
  for (const auto* res : {&r, &r2, &r3, &r4}) {
    EXPECT_EQ((res->out + res->err).find(key), std::string::npos) << res->err;
    EXPECT_EQ((res->out + res->err).find("TESTSECRET"), std::string::npos) << res->err;
  }
}

// ---------------------------------------------------------------- run reports what validate
// reports

TEST_F(InputErrors, RunAndValidateNameTheSameCauseForBrokenTaskFiles) {
  struct Case {
    const char* name;
    std::vector<std::pair<std::string, std::string>> files;
    const char* cause;
  };
  const std::vector<Case> cases = {
      {"cyc",
       {{"tasks/cyc.yaml", "include: cyc2.yaml\ntask: cyc\n"},
        {"tasks/cyc2.yaml", "include: cyc.yaml\n"}},
       "Include cycle"},
      {"selfinc",
       {{"tasks/selfinc.yaml", "include: selfinc.yaml\ntask: selfinc\n"}},
       "Include cycle"},
      {"missinc",
       {{"tasks/missinc.yaml", "include: nothere.yaml\ntask: missinc\n"}},
       "nothere.yaml"},
      {"syntax", {{"tasks/syntax.yaml", "task: syntax\ndoc_to_text: [unclosed\n"}}, "invalid YAML"},
      {"quote",
       {{"tasks/quote.yaml",
         "task: quote\ndataset_path: json\ndoc_to_text: \"Q: {{q}}\noutput_type: multiple_choice\n"
         "doc_to_choice: choices\ndoc_to_target: label\n"}},
       "quoted scalar started at line 3"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    fs::remove_all(dir_ / "tasks");
    for (const auto& [path, text] : c.files) write(path, text);
    auto run = lm(std::string("run --model dummy --include_path tasks --tasks ") + c.name);
    auto val = lm(std::string("validate --model dummy --include_path tasks --tasks ") + c.name);
    expect_user_error(run, {c.cause});
    expect_user_error(val, {c.cause});
    EXPECT_EQ(run.err.find("has no doc_to_target"), std::string::npos) << run.err;
  }
}

// ---------------------------------------------------------------- unclear messages

TEST_F(InputErrors, EmptyDataFileNamesFileAndSplit) {
  write("data/empty.jsonl", "");
  task("t1", "", "data/empty.jsonl");
  auto r = lm(run_t1());
  expect_user_error(r, {"task t1 has no documents", "split 'test'", "empty.jsonl", "t1.yaml"});
  EXPECT_EQ(r.err.find("build_requests"), std::string::npos) << r.err;
  expect_user_error(lm("validate --model dummy --tasks t1 --include_path tasks"),
                    {"empty.jsonl", "is empty"});
}

TEST_F(InputErrors, FolderAsDataFileIsNamed) {
  fs::create_directories(dir_ / "data/folder");
  task("t1", "", "data/folder");
  expect_user_error(lm(run_t1()), {"folder", "is a folder, not a data file"});
}

TEST_F(InputErrors, DataFileErrorNamesTheSplitsRole) {
  // The few-shot pool (training_split) is read when the task is loaded even at 0 shots: say so.
  task("t1", "training_split: train\ndataset_kwargs:\n  data_files:\n    test: " +
                 (dir_ / "data/test.jsonl").string() +
                 "\n    train: " + (dir_ / "data/bad.jsonl").string() + "\n");
  write("data/bad.jsonl", "{broken\n");
  auto r = lm(run_t1("--num_fewshot 0"));
  expect_user_error(r, {"split 'train'", "few-shot pool", "also at 0 shots", "bad.jsonl:1"});
  // A bad evaluation split is named as such, not as a few-shot split.
  write("data/test.jsonl", "{broken\n");
  task("t1");
  auto r2 = lm(run_t1());
  expect_user_error(r2, {"split 'test'", "the documents it evaluates", "test.jsonl:1"});
  EXPECT_EQ(r2.err.find("few-shot"), std::string::npos) << r2.err;
}

TEST_F(InputErrors, FunctionErrorsPointToAListingThatExists) {
  // A function lm-eval cannot run is named with its YAML line and why (here: no module beside the
  // YAML); the listing the messages point to for built-in functions exists.
  task("t1", "process_docs: !function utils.nosuch\n");
  auto r = lm(run_t1());
  expect_user_error(r, {"t1.yaml:11", "utils.nosuch", "no utils.py next to the YAML"});
  auto ls = lm("ls functions");
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  // Built-in functions of the reference's folders are listed by folder and YAML name.
  EXPECT_NE(ls.out.find("|hellaswag "), std::string::npos) << ls.out.substr(0, 2000);
  EXPECT_NE(ls.out.find("utils.process_docs"), std::string::npos);
}

TEST_F(InputErrors, NegativeTargetIndexIsWarnedWithTaskAndDocId) {
  write("data/test.jsonl",
        "{\"q\": \"a\", \"choices\": [\"1\", \"2\"], \"label\": -1}\n"
        "{\"q\": \"b\", \"choices\": [\"1\", \"2\"], \"label\": 5}\n");
  task("t1");
  auto r = lm(run_t1());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string all = r.out + r.err;  // spdlog's warnings
  EXPECT_NE(all.find("task t1, doc_id 0: target -1 is a negative index"), std::string::npos) << all;
  EXPECT_NE(all.find("task t1, doc_id 1: target 5 names none of the 2 choices"), std::string::npos)
      << all;
}

// Issue 32: a float target scored 0 with a note claiming the reference does the same; the
// reference raises TypeError (is_greedy[1.0]), so does lm-eval, naming the task and the field.
TEST_F(InputErrors, FloatTargetIsAnError) {
  write("data/test.jsonl", "{\"q\": \"a\", \"choices\": [\"1\", \"2\"], \"label\": 1.0}\n");
  task("t1");
  auto r = lm(run_t1());
  expect_user_error(r, {"t1.yaml", "doc_to_target", "task t1: target 1.0 is a float",
                        "an integer index into doc_to_choice or a choice's text"});
  EXPECT_EQ((r.out + r.err).find("as the reference does"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------- half precision on the CPU

// float16 and bfloat16 run on the CPU as transformers runs them (torch 2.x's float32 arithmetic
// rounded to the dtype: src/models/hf/reduced_precision.hpp); their log-likelihoods stay within
// the dtype's precision of the float32 run. A float16 softmax runs too (it failed after loading
// with libtorch's raw message, issue 32).
TEST_F(InputErrors, HalfPrecisionOnCpuRuns) {
  std::string model = (lmeval::testing::source_dir() / "models/stories260K").string();
  auto run = [&](const std::string& dtype) {
    return lm(
        "run --model hf --device cpu --tasks demo_story_cloze --limit 6 --log_samples "
        "--output_path out_" +
        dtype + " --model_args pretrained=" + model + ",dtype=" + dtype);
  };
  auto rows_of = [&](const std::string& out) {
    std::vector<nlohmann::ordered_json> rows;
    std::istringstream in(lmeval::testing::samples_of(dir_ / out, "demo_story_cloze"));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) rows.push_back(nlohmann::ordered_json::parse(line));
    return rows;
  };
  auto f32 = run("float32");
  ASSERT_EQ(f32.exit_code, 0) << f32.err;
  auto rows32 = rows_of("out_float32");
  ASSERT_EQ(rows32.size(), 6u);
  for (const std::string dtype : {"bfloat16", "float16"}) {
    auto half = run(dtype);
    ASSERT_EQ(half.exit_code, 0) << half.err;
    EXPECT_NE(half.err.find("torch." + dtype + ", cpu"), std::string::npos) << half.err;
    auto rows = rows_of("out_" + dtype);
    ASSERT_EQ(rows.size(), rows32.size());
    for (size_t i = 0; i < rows32.size(); ++i) {
      for (size_t c = 0; c < rows32[i]["resps"].size(); ++c) {
        double a = std::stod(rows32[i]["resps"][c][0][0].get<std::string>());
        double b = std::stod(rows[i]["resps"][c][0][0].get<std::string>());
        // bfloat16 keeps 8 significant bits (~0.4% per rounding), float16 11: 3% of a sum over
        // the continuation's tokens bounds the accumulated difference (measured: at most 1.2%).
        EXPECT_NEAR(b, a, 0.03 * std::fabs(a) + 0.05) << dtype << " doc " << i << " choice " << c;
        EXPECT_NE(a, b) << dtype;  // really computed in the half dtype
      }
    }
  }
  auto sm16 =
      lm("run --model hf --device cpu --tasks demo_story_cloze --limit 2 --output_path out_sm "
         "--model_args pretrained=" +
         model + ",softmax_dtype=float16");
  EXPECT_EQ(sm16.exit_code, 0) << sm16.err;
}

// Issue 32: a model larger than memory ended with libtorch's allocator message as an internal
// error. A checkpoint of 1 GiB of float16 zeros (a sparse file: no disk used) loaded as float32
// under a 2.4 GiB address-space limit stands in for it.
TEST_F(InputErrors, ModelLargerThanMemoryIsSaidSo) {
  LMEVAL_REQUIRE_SHARED("fixtures/llama/tokenizer.json");
  if (lm("ls models").out.find("|hf ") == std::string::npos)
    GTEST_SKIP() << "lm-eval was built without libtorch (no hf backend)";
  const fs::path src = lmeval::testing::shared_dir() / "fixtures/llama";
  const fs::path m = dir_ / "big";
  fs::create_directories(m);
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "generation_config.json"})
    fs::copy_file(src / f, m / f);
  constexpr int64_t kVocab = int64_t{1} << 22;
  auto cfg = nlohmann::ordered_json::parse(lmeval::testing::read_file(src / "config.json"));
  cfg["vocab_size"] = kVocab;
  cfg["dtype"] = "float16";
  std::ofstream(m / "config.json") << cfg.dump();
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  int64_t off = 0;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    int64_t n = 2;
    for (int64_t d : shape) n *= d;
    header[name] = {{"dtype", "F16"}, {"shape", shape}, {"data_offsets", {off, off + n}}};
    off += n;
  };
  add("lm_head.weight", {kVocab, 64});
  add("model.embed_tokens.weight", {kVocab, 64});
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", {64});
    add(p + "post_attention_layernorm.weight", {64});
    add(p + "mlp.down_proj.weight", {64, 128});
    add(p + "mlp.gate_proj.weight", {128, 64});
    add(p + "mlp.up_proj.weight", {128, 64});
    add(p + "self_attn.k_proj.weight", {32, 64});
    add(p + "self_attn.v_proj.weight", {32, 64});
    add(p + "self_attn.q_proj.weight", {64, 64});
    add(p + "self_attn.o_proj.weight", {64, 64});
  }
  add("model.norm.weight", {64});
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  {
    std::ofstream st(m / "model.safetensors", std::ios::binary);
    const uint64_t n = h.size();
    for (int i = 0; i < 8; ++i) st.put(static_cast<char>((n >> (8 * i)) & 0xff));
    st << h;
  }
  fs::resize_file(m / "model.safetensors", 8 + h.size() + static_cast<uint64_t>(off));
  auto r = lmeval::testing::run_command(
      "cd '" + dir_.string() + "' && ulimit -v 2500000 && LMEVAL_NO_INDEX_CACHE=1 '" +
      lmeval::testing::lmeval_binary().string() +
      "' run --model hf --device cpu --tasks demo_story_cloze --limit 1 --model_args "
      "pretrained=big");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("the model in big does not fit in this machine's memory"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("address space limited to 2.4 GiB (ulimit -v)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("DefaultCPUAllocator"), std::string::npos) << r.err;
}

// A device given in model_args is the one used and named (it was overridden by --device's
// default cuda:0, and the warning named cuda:0).
TEST_F(InputErrors, ModelArgsDeviceIsTheOneNamed) {
  task("t1");
  std::string model = (lmeval::testing::source_dir() / "models/stories260K").string();
  auto r = lm("run --model hf --tasks t1 --include_path tasks --model_args pretrained=" + model +
              ",device=cuda:7");
  if (r.err.find("the CUDA hf backend") != std::string::npos) {  // no CUDA plugin built here
    expect_user_error(r, {"--model_args device", "device cuda:7",
                          "runs on CUDA: the CUDA hf backend", "--device cpu"});
  } else if (r.err.find("CUDA is not available") != std::string::npos) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("device cuda:7"), std::string::npos) << r.err;
  } else {  // a machine with CUDA but fewer than 8 GPUs
    expect_user_error(r, {"cuda:7", "does not exist"});
  }
  EXPECT_EQ(r.err.find("cuda:0"), std::string::npos) << r.err;
}
