// Hub client + HubDataSource against the loopback stand-in (tests/data/hub_fake_server.hpp).
#include "lmeval/data/hub_client.hpp"
#include "data/hub_fake_server.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/data/hub_data_source.hpp"
#include "lmeval/data/parquet_reader.hpp"
#include "support/test_support.hpp"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using lmeval::DatasetRef;
using lmeval::Doc;
using lmeval::HubDataSource;
using lmeval::hub::HubClient;
using lmeval::hub::HubConfig;
using lmeval::hub::RepoRef;
using lmeval::hub::RepoType;
using lmeval::testing::FakeHub;

namespace {

const std::string kC1 = "1111111111111111111111111111111111111111";
const std::string kC2 = "2222222222222222222222222222222222222222";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

fs::path fixture(const std::string& name) {
  return lmeval::testing::source_dir() / "tests/data/fixtures_parquet" / name;
}

std::string readme_arc() {
  return "---\nlicense: cc-by-sa-4.0\nconfigs:\n- config_name: ARC-Challenge\n  data_files:\n"
         "  - split: train\n    path: ARC-Challenge/train-*\n  - split: test\n    path: "
         "ARC-Challenge/test-*\n"
         "- config_name: ARC-Easy\n  data_files:\n  - split: test\n    path: ARC-Easy/test-*\n"
         "---\n# ai2_arc\n";
}

class HubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = fs::temp_directory_path() /
             ("lmeval-hub-test-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(cache_);
    parquet_ = slurp(fixture("nested_zstd_v2.parquet"));
    flat_ = slurp(fixture("flat_dict_snappy_v1.parquet"));
    hub_.add_commit("datasets", "allenai/ai2_arc", "main", kC2,
                    {{"README.md", {readme_arc()}},
                     {"ARC-Challenge/train-00000-of-00001.parquet", {flat_, true}},
                     {"ARC-Challenge/test-00000-of-00001.parquet", {parquet_, true}},
                     {"ARC-Easy/test-00000-of-00001.parquet", {flat_, true}}});
    hub_.start();
  }
  void TearDown() override {
    hub_.stop();
    fs::remove_all(cache_);
  }
  HubConfig config(bool offline = false) {
    HubConfig c;
    c.endpoint = hub_.endpoint();
    c.cache_dir = cache_;
    c.offline = offline;
    c.max_retries = 3;
    c.backoff_seconds = 0.01;
    c.low_speed_timeout_s = 5;
    return c;
  }
  std::shared_ptr<HubClient> client(bool offline = false) {
    return std::make_shared<HubClient>(config(offline));
  }

  FakeHub hub_;
  fs::path cache_;
  std::string parquet_, flat_;
};

DatasetRef arc(const std::string& config) {
  DatasetRef r;
  r.path = "allenai/ai2_arc";
  r.name = config;
  return r;
}

}  // namespace

TEST_F(HubTest, FirstDownloadFillsHuggingfaceHubCacheLayout) {
  HubDataSource src(client());
  auto rows = src.load_split(arc("ARC-Challenge"), "test");
  ASSERT_TRUE(rows);
  EXPECT_EQ(*rows, lmeval::parquet::read_parquet(fixture("nested_zstd_v2.parquet")));
  fs::path repo = cache_ / "datasets--allenai--ai2_arc";
  EXPECT_EQ(slurp(repo / "refs" / "main"), kC2);
  fs::path snap = repo / "snapshots" / kC2 / "ARC-Challenge/test-00000-of-00001.parquet";
  ASSERT_TRUE(fs::is_symlink(snap));
  EXPECT_EQ(fs::read_symlink(snap), fs::path("../../../blobs") / FakeHub::lfs_etag(parquet_));
  EXPECT_EQ(slurp(repo / "blobs" / FakeHub::lfs_etag(parquet_)), parquet_);
  EXPECT_TRUE(fs::is_symlink(repo / "snapshots" / kC2 / "README.md"));
  EXPECT_TRUE(fs::exists(repo / "blobs" / FakeHub::git_etag(readme_arc())));
  for (const auto& e : fs::directory_iterator(repo / "blobs"))
    EXPECT_EQ(e.path().extension(), "") << "left over: " << e.path();
  // An unknown split is nullopt; an unknown config lists what exists.
  EXPECT_FALSE(src.load_split(arc("ARC-Challenge"), "validation"));
  try {
    src.load_split(arc("ARC-Medium"), "test");
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("ARC-Challenge, ARC-Easy"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ARC-Medium"), std::string::npos) << e.what();
  }
}

TEST_F(HubTest, CacheHitWithoutNetwork) {
  HubDataSource(client()).load_split(arc("ARC-Easy"), "test");
  size_t before = hub_.request_count();
  // Offline: no request at all.
  auto rows = HubDataSource(client(true)).load_split(arc("ARC-Easy"), "test");
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->size(), 200u);
  EXPECT_EQ(hub_.request_count(), before);
  // Online but the Hub is gone: falls back to the cache.
  hub_.stop();
  auto again = HubDataSource(client()).load_split(arc("ARC-Easy"), "test");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *rows);
}

TEST_F(HubTest, OfflineListsExactlyWhatIsMissing) {
  try {
    HubDataSource(client(true)).load_split(arc("ARC-Easy"), "test");
    FAIL();
  } catch (const lmeval::UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("allenai/ai2_arc"), std::string::npos) << m;
    EXPECT_NE(m.find("'main'"), std::string::npos) << m;
  }
  // README cached (listing the repo), data file not: the message names the file.
  auto c = client();
  c->download(RepoRef{RepoType::kDataset, "allenai/ai2_arc", "main"}, kC2, "README.md");
  c->repo_info(RepoRef{RepoType::kDataset, "allenai/ai2_arc", "main"});
  try {
    HubDataSource(client(true)).fetch(arc("ARC-Challenge"), {});
    FAIL();
  } catch (const lmeval::UserError& e) {
    std::string m = e.what();
    // Offline the listing is the snapshot itself, so the README patterns match nothing there.
    EXPECT_NE(m.find("ARC-Challenge/train-*"), std::string::npos) << m;
    EXPECT_NE(m.find("ARC-Challenge/test-*"), std::string::npos) << m;
    EXPECT_NE(m.find(kC2), std::string::npos) << m;
  }
  // One file of the config cached, the other not: exactly that one is named.
  c->download(RepoRef{RepoType::kDataset, "allenai/ai2_arc", "main"}, kC2,
              "ARC-Challenge/test-00000-of-00001.parquet");
  EXPECT_TRUE(HubDataSource(client(true)).load_split(arc("ARC-Challenge"), "test"));
  try {
    HubDataSource(client(true)).load_split(arc("ARC-Challenge"), "train");
    FAIL();
  } catch (const lmeval::UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("ARC-Challenge/train-*"), std::string::npos) << m;
    EXPECT_EQ(m.find("ARC-Challenge/test-*"), std::string::npos) << m;
  }
  // Models: every missing file is listed in one message.
  hub_.add_commit(
      "models", "org/tiny", "main", kC1,
      {{"config.json", {"{}"}}, {"tokenizer.json", {"{}"}}, {"model.safetensors", {"xx", true}}});
  auto mc = client();
  mc->repo_info(RepoRef{RepoType::kModel, "org/tiny", "main"});
  mc->download(RepoRef{RepoType::kModel, "org/tiny", "main"}, kC1, "config.json");
  HubClient off(config(true));
  fs::path dir =
      lmeval::hub::resolve_model_dir(off, "org/tiny", "main");  // offline listing = cached files
  EXPECT_TRUE(fs::exists(dir / "config.json"));
}

TEST_F(HubTest, ResumeAfterConnectionCut) {
  FakeHub::Fault f;
  f.cut_times = 1;
  f.cut_after = 1000;
  hub_.add_fault("/cdn/", f);
  auto rows = HubDataSource(client()).load_split(arc("ARC-Challenge"), "test");
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->size(), 200u);
  bool resumed = false;
  for (const auto& r : hub_.log())
    if (r.headers.count("range") && r.headers.at("range") == "bytes=1000-") resumed = true;
  EXPECT_TRUE(resumed);
}

TEST_F(HubTest, ServerIgnoringRangeStillGivesIntactFile) {
  FakeHub::Fault f;
  f.cut_times = 1;
  f.cut_after = 500;
  f.ignore_range = true;
  hub_.add_fault("/cdn/", f);
  auto rows = HubDataSource(client()).load_split(arc("ARC-Challenge"), "test");
  ASSERT_TRUE(rows);
  EXPECT_EQ(slurp(cache_ / "datasets--allenai--ai2_arc/blobs" / FakeHub::lfs_etag(parquet_)),
            parquet_);
}

TEST_F(HubTest, RetriesOn429And5xx) {
  FakeHub::Fault f429;
  f429.fail_times = 2;
  f429.status = 429;
  hub_.add_fault("/api/", f429);
  FakeHub::Fault f500;
  f500.fail_times = 1;
  f500.status = 500;
  hub_.add_fault("/cdn/", f500);
  FakeHub::Fault slow;
  slow.delay_ms = 200;
  hub_.add_fault("README.md", slow);
  auto rows = HubDataSource(client()).load_split(arc("ARC-Challenge"), "test");
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->size(), 200u);

  FakeHub::Fault always;
  always.fail_times = 100;
  always.status = 503;
  hub_.add_fault("ARC-Easy/test", always);
  EXPECT_THROW(HubDataSource(client()).load_split(arc("ARC-Easy"), "test"), lmeval::RuntimeError);
}

TEST_F(HubTest, RevisionPinning) {
  std::string old_parquet = slurp(fixture("nested_gzip_v1.parquet"));
  hub_.add_commit("datasets", "allenai/ai2_arc", "v1.0", kC1,
                  {{"README.md", {readme_arc()}},
                   {"ARC-Easy/test-00000-of-00001.parquet", {old_parquet, true}}});
  auto want_old = lmeval::parquet::read_parquet(fixture("nested_gzip_v1.parquet"));
  for (const std::string& rev : {kC1, std::string("v1.0")}) {
    DatasetRef r = arc("ARC-Easy");
    r.kwargs["revision"] = rev;
    auto rows = HubDataSource(client()).load_split(r, "test");
    ASSERT_TRUE(rows);
    EXPECT_EQ(*rows, want_old) << rev;
  }
  EXPECT_EQ(slurp(cache_ / "datasets--allenai--ai2_arc/refs/v1.0"), kC1);
  EXPECT_FALSE(fs::exists(cache_ / "datasets--allenai--ai2_arc/refs" / kC1));
  auto main_rows = HubDataSource(client()).load_split(arc("ARC-Easy"), "test");
  EXPECT_TRUE(*main_rows != want_old);
  DatasetRef bad = arc("ARC-Easy");
  bad.kwargs["revision"] = "no-such-branch";
  try {
    HubDataSource(client()).load_split(bad, "test");
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no revision 'no-such-branch'"), std::string::npos)
        << e.what();
  }
}

TEST_F(HubTest, TokenSentButNeverLogged) {
  const std::string token = "hf_SuperSecretToken123";
  hub_.add_commit("datasets", "org/gated", "main", kC1,
                  {{"test.jsonl", {"{\"a\": 1}\n{\"a\": 2}\n"}}});
  hub_.set_gated("datasets", "org/gated", token);
  std::ostringstream logs;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(logs);
  auto prev = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  spdlog::set_level(spdlog::level::trace);
  DatasetRef ref;
  ref.path = "org/gated";
  std::string errors;
  try {
    HubDataSource(client()).load_split(ref, "test");  // no token
  } catch (const lmeval::UserError& e) {
    errors += e.what();
  }
  EXPECT_NE(errors.find("authentication"), std::string::npos) << errors;
  HubConfig wrong = config();
  wrong.token = "hf_wrong_" + token;
  try {
    HubDataSource(std::make_shared<HubClient>(wrong)).load_split(ref, "test");
  } catch (const lmeval::UserError& e) {
    errors += e.what();
  }
  HubConfig good = config();
  good.token = token;
  auto rows = HubDataSource(std::make_shared<HubClient>(good)).load_split(ref, "test");
  // Unreachable Hub with a token: the curl error path is scrubbed too.
  hub_.stop();
  try {
    HubDataSource(std::make_shared<HubClient>(good)).load_split(ref, "test");
  } catch (const std::exception& e) {
    errors += e.what();
  }
  spdlog::set_default_logger(prev);
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->size(), 2u);
  bool sent = false;
  for (const auto& r : hub_.log())
    if (r.headers.count("authorization") && r.headers.at("authorization") == "Bearer " + token)
      sent = true;
  EXPECT_TRUE(sent);
  EXPECT_EQ(errors.find("SuperSecret"), std::string::npos) << errors;
  EXPECT_EQ(logs.str().find("SuperSecret"), std::string::npos) << logs.str();
}

TEST_F(HubTest, MissingRepoIsAUserError) {
  DatasetRef ref;
  ref.path = "nobody/nothing";
  try {
    HubDataSource(client()).load_split(ref, "test");
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not found"), std::string::npos) << e.what();
  }
}

TEST_F(HubTest, ConventionalNamesJsonlAndCsv) {
  hub_.add_commit("datasets", "org/plain", "main", kC1,
                  {{"README.md", {"# no yaml\n"}},
                   {"train.jsonl", {"{\"q\": \"a\", \"n\": 1}\n"}},
                   {"dev.jsonl", {"{\"q\": \"b\", \"n\": 2}\n{\"q\": \"c\", \"n\": 3}\n"}},
                   {"notes.md", {"x"}}});
  DatasetRef ref;
  ref.path = "org/plain";
  HubDataSource src(client());
  auto val = src.load_split(ref, "validation");
  ASSERT_TRUE(val);
  ASSERT_EQ(val->size(), 2u);
  EXPECT_EQ((*val)[1]["q"], "c");
  EXPECT_FALSE(src.load_split(ref, "test"));
  // dataset_kwargs.data_files overrides the conventions.
  DatasetRef custom = ref;
  custom.kwargs["data_files"] = {{"test", "train.jsonl"}};
  auto t = HubDataSource(client()).load_split(custom, "test");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)[0]["n"], 1);
}

TEST_F(HubTest, ScriptDatasetUsesParquetConversionBranch) {
  hub_.add_commit("datasets", "org/scripted", "main", kC1,
                  {{"scripted.py", {"# builder"}}, {"README.md", {"---\nlicense: mit\n---\n"}}});
  hub_.add_commit("datasets", "org/scripted", "refs/convert/parquet", kC2,
                  {{"cfg/test/0000.parquet", {flat_, true}},
                   {"cfg/validation/0000.parquet", {parquet_, true}}});
  DatasetRef ref;
  ref.path = "org/scripted";
  ref.name = "cfg";
  auto rows = HubDataSource(client()).load_split(ref, "validation");
  ASSERT_TRUE(rows);
  EXPECT_EQ(*rows, lmeval::parquet::read_parquet(fixture("nested_zstd_v2.parquet")));
  EXPECT_EQ(slurp(cache_ / "datasets--org--scripted/refs/refs/convert/parquet"), kC2);
}

TEST_F(HubTest, ModelFilesShardedSafetensors) {
  std::string index =
      R"({"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}})";
  hub_.add_commit("models", "EleutherAI/pythia-mini", "main", kC1,
                  {{"config.json", {"{\"model_type\": \"gpt_neox\"}"}},
                   {"tokenizer.json", {"{}"}},
                   {"tokenizer_config.json", {"{}"}},
                   {"model.safetensors.index.json", {index}},
                   {"model-00001-of-00002.safetensors", {std::string(5000, 'a'), true}},
                   {"model-00002-of-00002.safetensors", {std::string(3000, 'b'), true}},
                   {"pytorch_model.bin", {"nope", true}},
                   {"flax_model.msgpack", {"nope", true}},
                   {"onnx/model.onnx", {"nope", true}}});
  HubClient c(config());
  fs::path dir = lmeval::hub::resolve_model_dir(c, "EleutherAI/pythia-mini", "main");
  EXPECT_EQ(dir, cache_ / "models--EleutherAI--pythia-mini/snapshots" / kC1);
  for (const char* f :
       {"config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors.index.json",
        "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_EQ(slurp(dir / "model-00002-of-00002.safetensors"), std::string(3000, 'b'));
  for (const char* f : {"pytorch_model.bin", "flax_model.msgpack", "onnx"})
    EXPECT_FALSE(fs::exists(dir / f)) << f;
  // A local folder passes through untouched, without any request.
  size_t before = hub_.request_count();
  EXPECT_EQ(lmeval::hub::resolve_model_dir(c, dir.string(), "main"), dir);
  EXPECT_EQ(hub_.request_count(), before);
  // Offline afterwards: same folder, no request.
  HubClient off(config(true));
  EXPECT_EQ(lmeval::hub::resolve_model_dir(off, "EleutherAI/pythia-mini", "main"), dir);
  EXPECT_EQ(hub_.request_count(), before);
}

// subfolder= (HFLM passes it to from_pretrained): the files directly inside it, shards of an
// index named relative to it; pytorch_model.bin only without safetensors.
TEST_F(HubTest, ModelFilesInASubfolderAndPytorchBin) {
  std::string index =
      R"({"weight_map": {"a": "pytorch_model-00001-of-00002.bin", "b": "pytorch_model-00002-of-00002.bin"}})";
  hub_.add_commit("models", "org/steps", "main", kC1,
                  {{"config.json", {"{}"}},
                   {"model.safetensors", {"top", true}},
                   {"step1000/config.json", {"{\"model_type\": \"llama\"}"}},
                   {"step1000/tokenizer.json", {"{}"}},
                   {"step1000/pytorch_model.bin.index.json", {index}},
                   {"step1000/pytorch_model-00001-of-00002.bin", {"one", true}},
                   {"step1000/pytorch_model-00002-of-00002.bin", {"two", true}},
                   {"step1000/deeper/model.safetensors", {"no", true}}});
  HubClient c(config());
  fs::path dir = lmeval::hub::resolve_model_dir(c, "org/steps", "main", "step1000");
  EXPECT_EQ(dir, cache_ / "models--org--steps/snapshots" / kC1 / "step1000");
  for (const char* f : {"config.json", "tokenizer.json", "pytorch_model.bin.index.json",
                        "pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_EQ(slurp(dir / "pytorch_model-00002-of-00002.bin"), "two");
  EXPECT_FALSE(fs::exists(dir / "deeper"));
  EXPECT_FALSE(fs::exists(dir.parent_path() / "model.safetensors"));
  EXPECT_THROW(lmeval::hub::resolve_model_dir(c, "org/steps", "main", "step2000"),
               lmeval::UserError);
  EXPECT_THROW(lmeval::hub::resolve_model_dir(c, "org/steps", "main", "../x"), lmeval::UserError);
  // Offline afterwards: the cached subfolder, no request.
  const size_t before = hub_.request_count();
  HubClient off(config(true));
  EXPECT_EQ(lmeval::hub::resolve_model_dir(off, "org/steps", "main", "step1000"), dir);
  EXPECT_EQ(hub_.request_count(), before);
}

// peft= of a Hub repo: adapter_config.json and the adapter's weights (safetensors first).
TEST_F(HubTest, AdapterRepo) {
  hub_.add_commit("models", "org/lora", "main", kC1,
                  {{"adapter_config.json", {"{}"}},
                   {"adapter_model.safetensors", {"st", true}},
                   {"adapter_model.bin", {"bin", true}},
                   {"README.md", {"card"}}});
  HubClient c(config());
  fs::path dir = lmeval::hub::resolve_adapter_dir(c, "org/lora", "main");
  EXPECT_TRUE(fs::exists(dir / "adapter_config.json"));
  EXPECT_EQ(slurp(dir / "adapter_model.safetensors"), "st");
  EXPECT_FALSE(fs::exists(dir / "adapter_model.bin"));
  EXPECT_FALSE(fs::exists(dir / "README.md"));
  hub_.add_commit("models", "org/not-lora", "main", kC2, {{"config.json", {"{}"}}});
  try {
    lmeval::hub::resolve_adapter_dir(c, "org/not-lora", "main");
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("has no adapter_config.json"), std::string::npos);
    EXPECT_EQ(e.where().field, "--model_args peft");
  }
}

TEST_F(HubTest, ConcurrentDownloadsOfOneFile) {
  std::string big(3 << 20, 'z');
  for (size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>('a' + i % 26);
  hub_.add_commit("models", "org/big", "main", kC1,
                  {{"config.json", {"{}"}}, {"model.safetensors", {big, true}}});
  FakeHub::Fault slow;
  slow.delay_ms = 100;
  hub_.add_fault("/cdn/", slow);
  std::vector<std::thread> ts;
  std::vector<std::string> got(4);
  for (int i = 0; i < 4; ++i)
    ts.emplace_back([&, i] {
      HubClient c(config());
      got[i] =
          slurp(c.download(RepoRef{RepoType::kModel, "org/big", "main"}, kC1, "model.safetensors"));
    });
  for (auto& t : ts) t.join();
  for (const auto& g : got) EXPECT_TRUE(g == big);
}

TEST(HubConfigEnv, CacheDirTokenEndpointOffline) {
  auto set = [](const char* k, const char* v) { v ? ::setenv(k, v, 1) : ::unsetenv(k); };
  const char* vars[] = {"HF_HUB_CACHE",   "HUGGINGFACE_HUB_CACHE",  "HF_HOME",       "HF_TOKEN",
                        "HF_HUB_TOKEN",   "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_ENDPOINT",
                        "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE",    "XDG_CACHE_HOME"};
  std::map<std::string, std::optional<std::string>> saved;
  for (const char* v : vars) {
    const char* x = std::getenv(v);
    saved[v] = x ? std::optional<std::string>(x) : std::nullopt;
    ::unsetenv(v);
  }
  fs::path home = fs::temp_directory_path() / ("lmeval-hfhome-" + std::to_string(::getpid()));
  fs::create_directories(home);
  std::ofstream(home / "token") << "hf_fromfile\n";
  set("HF_HOME", home.c_str());
  set("HF_ENDPOINT", "http://mirror.example/");
  auto c = HubConfig::from_env();
  EXPECT_EQ(c.cache_dir, home / "hub");
  EXPECT_EQ(c.endpoint, "http://mirror.example");
  EXPECT_EQ(c.token.value_or(""), "hf_fromfile");
  EXPECT_FALSE(c.offline);
  set("HF_HUB_CACHE", "/x/cache");
  set("HF_TOKEN", "hf_env");
  set("HF_DATASETS_OFFLINE", "1");
  c = HubConfig::from_env();
  EXPECT_EQ(c.cache_dir, "/x/cache");
  EXPECT_EQ(c.token.value_or(""), "hf_env");
  EXPECT_FALSE(c.offline);
  EXPECT_TRUE(HubConfig::from_env(true).offline);
  set("HF_HUB_OFFLINE", "true");
  EXPECT_TRUE(HubConfig::from_env().offline);
  for (const char* v : vars) set(v, saved[v] ? saved[v]->c_str() : nullptr);
  fs::remove_all(home);
  EXPECT_EQ(lmeval::hub::repo_folder_name(RepoRef{RepoType::kDataset, "allenai/ai2_arc", "main"}),
            "datasets--allenai--ai2_arc");
  EXPECT_EQ(lmeval::hub::repo_folder_name(RepoRef{RepoType::kModel, "gpt2", "main"}),
            "models--gpt2");
}

TEST(HubDataFiles, GlobMatchesLikeFsspec) {
  using lmeval::hub::glob_match;
  EXPECT_TRUE(glob_match("ARC-Challenge/train-*", "ARC-Challenge/train-00000-of-00001.parquet"));
  EXPECT_FALSE(glob_match("ARC-Challenge/train-*", "ARC-Challenge/x/train-0.parquet"));
  EXPECT_TRUE(glob_match("**/train[-._ 0-9]*", "train.jsonl"));
  EXPECT_TRUE(glob_match("**/train[-._ 0-9]*", "data/train-00000-of-00002.parquet"));
  EXPECT_FALSE(glob_match("**/train[-._ 0-9]*", "data/training.parquet"));
  EXPECT_TRUE(glob_match("**/test/**", "cfg/test/0000.parquet"));
  EXPECT_TRUE(glob_match("data/*.json?", "data/x.jsonl"));
  EXPECT_TRUE(glob_match("[!a]*", "b.csv"));
  EXPECT_FALSE(glob_match("[!a]*", "a.csv"));
  EXPECT_TRUE(glob_match("**", "a/b/c"));
}

TEST(HubDataFiles, ResolvesLikeTheDatasetsLibrary) {
  using lmeval::hub::resolve_data_files;
  auto splits_of = [](const lmeval::hub::ResolvedConfig& rc) {
    std::map<std::string, std::vector<std::string>> m(rc.splits.begin(), rc.splits.end());
    return m;
  };
  // Sharded names under data/ with any split name.
  auto rc = resolve_data_files(
      {"README.md", "data/test-00000-of-00002.parquet", "data/test-00001-of-00002.parquet",
       "data/murder_mysteries-00000-of-00001.parquet"},
      "", std::nullopt);
  auto m = splits_of(rc);
  EXPECT_EQ(m["test"].size(), 2u);
  EXPECT_EQ(m["murder_mysteries"].size(), 1u);
  EXPECT_EQ(rc.config, "default");
  // Keyword aliases in file names; most common format wins.
  m = splits_of(resolve_data_files({"train.csv", "valid.csv", "testing.csv", "extra.json"}, "",
                                   std::nullopt));
  EXPECT_EQ(m["validation"], std::vector<std::string>{"valid.csv"});
  EXPECT_EQ(m["test"], std::vector<std::string>{"testing.csv"});
  EXPECT_EQ(m.size(), 3u);
  // A config as a folder.
  m = splits_of(resolve_data_files({"main/train.jsonl", "main/test.jsonl", "socratic/test.jsonl"},
                                   "", "socratic"));
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m["test"], std::vector<std::string>{"socratic/test.jsonl"});
  EXPECT_THROW(resolve_data_files({"main/train.jsonl"}, "", "nope"), lmeval::UserError);
  // README configs: default config, list paths, data_dir.
  std::string readme =
      "---\nconfigs:\n- config_name: a\n  data_files: a/*.parquet\n- config_name: b\n  default: "
      "true\n"
      "  data_dir: bdir\n  data_files:\n  - split: test\n    path: [\"t1.parquet\", "
      "\"t2.parquet\"]\n---\n";
  rc = resolve_data_files({"a/x.parquet", "bdir/t1.parquet", "bdir/t2.parquet"}, readme,
                          std::nullopt);
  EXPECT_EQ(rc.config, "b");
  m = splits_of(rc);
  EXPECT_EQ(m["test"], (std::vector<std::string>{"bdir/t1.parquet", "bdir/t2.parquet"}));
  m = splits_of(resolve_data_files({"a/x.parquet"}, readme, "a"));
  EXPECT_EQ(m["train"], std::vector<std::string>{"a/x.parquet"});
}

// Goldens from the `datasets` library itself (scripts/gen_hub_datafiles_goldens.py).
TEST(HubDataFiles, SameChoiceAsDatasetsLibrary) {
  fs::path g = lmeval::testing::source_dir() / "tests/data/fixtures_hub/data_files_goldens.json";
  auto goldens = nlohmann::json::parse(slurp(g));
  int n = 0;
  for (const auto& c : goldens["cases"]) {
    std::vector<std::string> files = c["files"];
    if (!c["readme"].get<std::string>().empty()) files.emplace_back("README.md");
    std::optional<std::string> name;
    if (c["name"].is_string()) name = c["name"].get<std::string>();
    auto rc = lmeval::hub::resolve_data_files(files, c["readme"], name);
    EXPECT_EQ(rc.config, c["config"].get<std::string>()) << c.dump();
    std::map<std::string, std::vector<std::string>> got;
    for (const auto& [s, v] : rc.splits)
      if (!v.empty()) got[s] = v;
    std::map<std::string, std::vector<std::string>> want = c["splits"];
    EXPECT_EQ(got, want) << c["files"].dump();
    ++n;
  }
  EXPECT_EQ(n, 13);
}
