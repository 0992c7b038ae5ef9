// End to end: `lm-eval run --tasks arc_easy` with HF_ENDPOINT at the loopback stand-in serving
// ARC-Easy as the Hub does (parquet + README configs) must give what the local jsonl copy gives;
// then offline.
#include "data/hub_fake_server.hpp"
#include "lmeval/data/hub_data_source.hpp"
#include "lmeval/data/local_data_source.hpp"
#include "support/test_support.hpp"

#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using lmeval::testing::FakeHub;

namespace {

const char* kArcEasyYaml = R"(task: arc_easy
dataset_path: allenai/ai2_arc
dataset_name: ARC-Easy
output_type: multiple_choice
training_split: train
validation_split: validation
test_split: test
doc_to_text: "Question: {{question}}\nAnswer:"
doc_to_target: "{{choices.label.index(answerKey)}}"
doc_to_choice: "{{choices.text}}"
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
  - metric: acc_norm
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
)";

// stdout without log lines (they carry timestamps).
std::string results_of(const std::string& out) {
  std::string r, line;
  std::istringstream in(out);
  while (std::getline(in, line))
    if (!(line.size() > 1 && line[0] == '[' && std::isdigit(static_cast<unsigned char>(line[1]))))
      r += line + "\n";
  return r;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST(HubEndToEnd, ArcEasyThroughHfEndpointMatchesLocalData) {
  LMEVAL_REQUIRE_SHARED("hf_data/allenai/ai2_arc/ARC-Easy/test.jsonl");
  const fs::path bin = lmeval::testing::lmeval_binary();
  if (!fs::exists(bin)) GTEST_SKIP() << "lm-eval binary not built";
  // The Hub data source and `lm-eval download` are wired into the CLI together (src/cli/main.cpp,
  // evaluator's make_data_source); until then this test cannot run.
  auto help = lmeval::testing::run_command(bin.string() + " download --help");
  if (help.exit_code != 0 || help.out.find("Fetch the Hub datasets") == std::string::npos)
    GTEST_SKIP() << "`lm-eval download` is not wired into src/cli/main.cpp yet";
  const fs::path fixtures = lmeval::testing::source_dir() / "tests/data/fixtures_hub/ai2_arc";
  ASSERT_TRUE(fs::exists(fixtures / "README.md")) << "run scripts/gen_hub_arc_parquet.py";

  fs::path work = fs::temp_directory_path() / ("lmeval-hub-e2e-" + std::to_string(::getpid()));
  fs::remove_all(work);
  fs::create_directories(work / "tasks");
  std::ofstream(work / "tasks/arc_easy.yaml") << kArcEasyYaml;
  // The built-in arc_easy when the repo ships it, else the reference's YAML written above.
  bool builtin = fs::exists(lmeval::testing::source_dir() / "tasks/arc/arc_easy.yaml");
  std::string include = builtin ? "" : " --include_path " + (work / "tasks").string();

  FakeHub hub;
  FakeHub::Tree files;
  files["README.md"] = {slurp(fixtures / "README.md")};
  for (const char* s : {"train", "validation", "test"}) {
    std::string name = std::string("ARC-Easy/") + s + "-00000-of-00001.parquet";
    files[name] = {slurp(fixtures / name), true};
  }
  hub.add_commit("datasets", "allenai/ai2_arc", "main", "210d026faf9955653af8916fad021475a3f00453",
                 files);
  hub.start();

  const std::string run = bin.string() +
                          " run --model dummy --model_args pretrained=hub-e2e --tasks arc_easy" +
                          include + " --limit 40";
  const std::string shared = lmeval::testing::shared_dir().string();
  auto local = lmeval::testing::run_command("env -u HF_ENDPOINT LMEVAL_DATA_DIR=" + shared +
                                            "/hf_data " + run);
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ASSERT_NE(local.out.find("arc_easy"), std::string::npos) << local.out;

  const std::string hub_env = "env -u LMEVAL_DATA_DIR HF_ENDPOINT=" + hub.endpoint() +
                              " HF_HUB_CACHE=" + (work / "cache").string() +
                              " HF_TOKEN=hf_e2eSecret ";
  auto online = lmeval::testing::run_command(hub_env + run);
  ASSERT_EQ(online.exit_code, 0) << online.err;
  EXPECT_EQ(results_of(online.out), results_of(local.out));
  EXPECT_GT(hub.request_count(), 0u);
  EXPECT_EQ(online.err.find("hf_e2eSecret"), std::string::npos);
  EXPECT_TRUE(fs::exists(work / "cache/datasets--allenai--ai2_arc/refs/main"));

  hub.stop();
  auto offline = lmeval::testing::run_command(hub_env + "HF_HUB_OFFLINE=1 " + run);
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_EQ(results_of(offline.out), results_of(local.out));

  // Offline with an empty cache: exit 2 and a message naming the repo and revision.
  auto missing = lmeval::testing::run_command(
      "env -u LMEVAL_DATA_DIR HF_ENDPOINT=" + hub.endpoint() +
      " HF_HUB_CACHE=" + (work / "empty").string() + " HF_HUB_OFFLINE=1 " + run);
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("allenai/ai2_arc"), std::string::npos) << missing.err;

  // `lm-eval download` fills a fresh cache; an offline run from it matches too.
  hub.start();
  const std::string dl_env = "env -u LMEVAL_DATA_DIR HF_ENDPOINT=" + hub.endpoint() +
                             " HF_HUB_CACHE=" + (work / "dl").string() + " ";
  auto dl =
      lmeval::testing::run_command(dl_env + bin.string() + " download --tasks arc_easy" + include);
  ASSERT_EQ(dl.exit_code, 0) << dl.err;
  EXPECT_TRUE(
      fs::exists(work /
                 "dl/datasets--allenai--ai2_arc/snapshots/210d026faf9955653af8916fad021475a3f00453/"
                 "ARC-Easy/test-00000-of-00001.parquet"));
  hub.stop();
  auto after = lmeval::testing::run_command(dl_env + "HF_HUB_OFFLINE=1 " + run);
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(results_of(after.out), results_of(local.out));
  fs::remove_all(work);
}

// The same data path without the CLI: ARC-Easy through the stand-in Hub (README configs + parquet)
// gives exactly the rows of ../shared's jsonl copy.
TEST(HubEndToEnd, ArcEasySplitsThroughHubEqualLocalJsonl) {
  LMEVAL_REQUIRE_SHARED("hf_data/allenai/ai2_arc/ARC-Easy/test.jsonl");
  const fs::path fixtures = lmeval::testing::source_dir() / "tests/data/fixtures_hub/ai2_arc";
  FakeHub hub;
  FakeHub::Tree files;
  files["README.md"] = {slurp(fixtures / "README.md")};
  for (const char* s : {"train", "validation", "test"}) {
    std::string name = std::string("ARC-Easy/") + s + "-00000-of-00001.parquet";
    files[name] = {slurp(fixtures / name), true};
  }
  hub.add_commit("datasets", "allenai/ai2_arc", "main", "210d026faf9955653af8916fad021475a3f00453",
                 files);
  hub.start();
  fs::path cache = fs::temp_directory_path() / ("lmeval-hub-arc-" + std::to_string(::getpid()));
  lmeval::hub::HubConfig cfg;
  cfg.endpoint = hub.endpoint();
  cfg.cache_dir = cache;
  lmeval::HubDataSource src(std::make_shared<lmeval::hub::HubClient>(cfg));
  lmeval::DatasetRef ref;
  ref.path = "allenai/ai2_arc";
  ref.name = "ARC-Easy";
  size_t total = 0;
  for (const char* s : {"train", "validation", "test"}) {
    auto rows = src.load_split(ref, s);
    ASSERT_TRUE(rows) << s;
    auto want = lmeval::read_rows(lmeval::testing::shared_dir() /
                                  "hf_data/allenai/ai2_arc/ARC-Easy" / (std::string(s) + ".jsonl"));
    ASSERT_EQ(rows->size(), want.size()) << s;
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ((*rows)[i].dump(), want[i].dump()) << s << " row " << i;
    total += want.size();
  }
  EXPECT_EQ(total, 2251u + 570u + 2376u);
  hub.stop();
  fs::remove_all(cache);
}

// `data_files: hf://datasets/ORG/NAME/PATH` (13 of the reference's task files: tmmluplus, wnli_es,
// arithmetic, prost) is that file of the Hub dataset repo, as `datasets` reads it through
// HfFileSystem: the run gives what the same file named by a local path gives; offline with an empty
// cache, run stops with exit 1 and validate notes the data as unavailable (exit 0).
TEST(HubEndToEnd, HfUrlDataFilesComeFromTheHub) {
  const fs::path bin = lmeval::testing::lmeval_binary();
  if (!fs::exists(bin)) GTEST_SKIP() << "lm-eval binary not built";
  fs::path work = fs::temp_directory_path() / ("lmeval-hf-url-" + std::to_string(::getpid()));
  fs::remove_all(work);
  fs::create_directories(work / "tasks");
  const std::string rows =
      "{\"q\": \"one plus one\", \"a\": \"two\"}\n{\"q\": \"two plus two\", \"a\": \"four\"}\n";
  std::ofstream(work / "tasks/rows.jsonl") << rows;
  const std::string body =
      "dataset_path: json\noutput_type: generate_until\ntest_split: test\n"
      "doc_to_text: '{{q}} ='\ndoc_to_target: a\ngeneration_kwargs: {until: ['\\n']}\n";
  std::ofstream(work / "tasks/hub.yaml")
      << "task: hf_url_rows\n"
      << body
      << "dataset_kwargs:\n  data_files:\n    test: hf://datasets/org-x/sums/data/rows.jsonl\n";
  std::ofstream(work / "tasks/local.yaml")
      << "task: local_rows\n"
      << body << "dataset_kwargs:\n  data_files:\n    test: rows.jsonl\n";

  FakeHub hub;
  FakeHub::Tree files;
  files["data/rows.jsonl"] = {rows};
  hub.add_commit("datasets", "org-x/sums", "main", "1111111111111111111111111111111111111111",
                 files);
  hub.start();
  const std::string tasks = " --include_path " + (work / "tasks").string();
  const std::string run = bin.string() + " run --model dummy --log_samples" + tasks;
  auto local = lmeval::testing::run_command(run + " --tasks local_rows --output_path " +
                                            (work / "local").string());
  ASSERT_EQ(local.exit_code, 0) << local.err;
  auto online = lmeval::testing::run_command(
      "env HF_ENDPOINT=" + hub.endpoint() + " HF_HUB_CACHE=" + (work / "cache").string() + " " +
      run + " --tasks hf_url_rows --output_path " + (work / "hub").string());
  ASSERT_EQ(online.exit_code, 0) << online.err;
  auto samples = [&](const std::string& dir, const std::string& task) {
    for (const auto& e : fs::recursive_directory_iterator(work / dir))
      if (e.path().filename().string().rfind("samples_" + task, 0) == 0) return slurp(e.path());
    return std::string();
  };
  const std::string want = samples("local", "local_rows");
  ASSERT_NE(want.find("one plus one"), std::string::npos) << want;
  EXPECT_EQ(samples("hub", "hf_url_rows"), want);

  const std::string offline =
      "env HF_HUB_OFFLINE=1 HF_HUB_CACHE=" + (work / "empty").string() + " ";
  auto r = lmeval::testing::run_command(offline + bin.string() + " run --model dummy --tasks " +
                                        "hf_url_rows" + tasks);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("hf://datasets/org-x/sums/data/rows.jsonl"), std::string::npos) << r.err;
  r = lmeval::testing::run_command(offline + bin.string() + " validate --tasks hf_url_rows" +
                                   tasks);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("data not available here"), std::string::npos) << r.out << r.err;
  fs::remove_all(work);
}

// The hf backend's weights from the Hub: a model in a repo's subfolder saved as pytorch_model.bin,
// and a LoRA adapter repo. `lm-eval download` with those model_args fills the cache, and an
// offline run from it gives what the local folders give.
TEST(HubEndToEnd, ModelSubfolderAndAdapterThroughTheCache) {
  const fs::path bin = lmeval::testing::lmeval_binary();
  if (!fs::exists(bin)) GTEST_SKIP() << "lm-eval binary not built";
  const fs::path ckpt = lmeval::testing::source_dir() / "tests/fixtures/hf_ckpt";
  const fs::path stories = lmeval::testing::source_dir() / "models/stories260K";
  if (lmeval::testing::run_command(bin.string() + " ls models").out.find("hf") == std::string::npos)
    GTEST_SKIP() << "lm-eval built without the hf backend";
  fs::path work = fs::temp_directory_path() / ("lmeval-hub-hf-" + std::to_string(::getpid()));
  fs::remove_all(work);
  fs::create_directories(work / "model" / "step1");
  std::ofstream(work / "data.jsonl")
      << "{\"q\": \"Once upon a time\", \"choices\": [\" there was a girl.\", \" the end.\"], "
         "\"label\": 0}\n";
  std::ofstream(work / "t.yaml") << "task: t\ndataset_path: json\ndataset_kwargs:\n  data_files:\n"
                                    "    test: "
                                 << (work / "data.jsonl").string()
                                 << "\noutput_type: multiple_choice\ntest_split: test\n"
                                    "doc_to_text: \"{{q}}\"\ndoc_to_choice: choices\n"
                                    "doc_to_target: label\n";
  FakeHub hub;
  FakeHub::Tree model = {{"config.json", {"{}"}}, {"README.md", {"top"}}};
  for (const char* f : {"config.json", "pytorch_model.bin"})
    model[std::string("step1/") + f] = {slurp(ckpt / "llama_bin" / f),
                                        std::string(f) != "config.json"};
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
    model[std::string("step1/") + f] = {slurp(stories / f)};
  for (const auto& [name, file] : model)
    if (name.rfind("step1/", 0) == 0) std::ofstream(work / "model" / name) << file.content;
  hub.add_commit("models", "org/tiny", "main", "1111111111111111111111111111111111111111", model);
  hub.add_commit("models", "org/tiny-lora", "main", "2222222222222222222222222222222222222222",
                 {{"adapter_config.json", {slurp(ckpt / "lora_plain/adapter_config.json")}},
                  {"adapter_model.safetensors",
                   {slurp(ckpt / "lora_plain/adapter_model.safetensors"), true}}});
  hub.start();
  const std::string run_tail = " --tasks t --include_path " + work.string() + " --device cpu";
  auto local = lmeval::testing::run_command(
      bin.string() + " run --model hf --model_args pretrained=" + (work / "model").string() +
      ",subfolder=step1,peft=" + (ckpt / "lora_plain").string() + run_tail);
  ASSERT_EQ(local.exit_code, 0) << local.err;
  const std::string hub_args =
      " --model_args pretrained=org/tiny,subfolder=step1,peft=org/tiny-lora";
  const std::string env =
      "env HF_ENDPOINT=" + hub.endpoint() + " HF_HUB_CACHE=" + (work / "cache").string() + " ";
  auto dl = lmeval::testing::run_command(env + bin.string() + " download" + hub_args);
  ASSERT_EQ(dl.exit_code, 0) << dl.err;
  EXPECT_TRUE(
      fs::exists(work / "cache/models--org--tiny/snapshots/"
                        "1111111111111111111111111111111111111111/step1/pytorch_model.bin"));
  EXPECT_FALSE(fs::exists(work / "cache/models--org--tiny/snapshots/"
                                 "1111111111111111111111111111111111111111/README.md"));
  hub.stop();
  auto offline = lmeval::testing::run_command(env + "HF_HUB_OFFLINE=1 " + bin.string() +
                                              " run --model hf" + hub_args + run_tail);
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  // The tables (the lines above them name the model_args, which differ).
  auto table = [](const std::string& out) {
    std::string t, line;
    std::istringstream in(out);
    while (std::getline(in, line))
      if (line.rfind('|', 0) == 0) t += line + "\n";
    return t;
  };
  EXPECT_NE(table(local.out).find("acc"), std::string::npos) << local.out;
  EXPECT_EQ(table(offline.out), table(local.out));
  fs::remove_all(work);
}
