// The cache is shared with Python tools: huggingface_hub (PyPI, in .venv-hub) fills a cache from
// the loopback stand-in that our client then reads offline, and reads offline a cache our client
// filled.
#include "data/hub_fake_server.hpp"
#include "lmeval/data/hub_client.hpp"
#include "lmeval/data/hub_data_source.hpp"
#include "lmeval/data/parquet_reader.hpp"
#include "support/test_support.hpp"

#include <fstream>

namespace fs = std::filesystem;
using lmeval::testing::FakeHub;

namespace {

const std::string kCommit = "abcdefabcdefabcdefabcdefabcdefabcdefabcd";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

fs::path venv_python() { return lmeval::testing::source_dir() / ".venv-hub/bin/python"; }

}  // namespace

TEST(HubInterop, CacheSharedWithHuggingfaceHub) {
  if (!fs::exists(venv_python()) ||
      lmeval::testing::run_command(venv_python().string() + " -c 'import huggingface_hub'")
              .exit_code != 0)
    GTEST_SKIP() << "needs .venv-hub with huggingface_hub (python3 -m venv .venv-hub && "
                    ".venv-hub/bin/pip install pyarrow huggingface_hub)";
  const fs::path fx = lmeval::testing::source_dir() / "tests/data/fixtures_parquet";
  std::string readme =
      "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: "
      "data/test-*\n---\n";
  std::string pq = slurp(fx / "nested_snappy_v1.parquet");
  FakeHub hub;
  hub.add_commit("datasets", "org/shared", "main", kCommit,
                 {{"README.md", {readme}}, {"data/test-00000-of-00001.parquet", {pq, true}}});
  hub.start();
  fs::path work = fs::temp_directory_path() / ("lmeval-hub-interop-" + std::to_string(::getpid()));
  fs::remove_all(work);
  const std::string env =
      "env HF_ENDPOINT=" + hub.endpoint() + " HF_HUB_DISABLE_TELEMETRY=1 HF_HUB_DISABLE_XET=1 ";
  const std::string py = venv_python().string();

  // 1. Python fills cache A; we read it offline without any request.
  auto r = lmeval::testing::run_command(env + "HF_HUB_CACHE=" + (work / "a").string() + " " + py +
                                        " -c \"from huggingface_hub import hf_hub_download as d; "
                                        "[print(d('org/shared', f, repo_type='dataset')) for f in "
                                        "['README.md', 'data/test-00000-of-00001.parquet']]\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t before = hub.request_count();
  lmeval::hub::HubConfig cfg;
  cfg.endpoint = hub.endpoint();
  cfg.cache_dir = work / "a";
  cfg.offline = true;
  lmeval::HubDataSource ours(std::make_shared<lmeval::hub::HubClient>(cfg));
  lmeval::DatasetRef ref;
  ref.path = "org/shared";
  auto rows = ours.load_split(ref, "test");
  ASSERT_TRUE(rows);
  EXPECT_EQ(*rows, lmeval::parquet::read_parquet(fx / "nested_snappy_v1.parquet"));
  EXPECT_EQ(hub.request_count(), before);

  // 2. We fill cache B; Python reads it offline and finds nothing odd in it.
  cfg.cache_dir = work / "b";
  cfg.offline = false;
  lmeval::HubDataSource(std::make_shared<lmeval::hub::HubClient>(cfg)).load_split(ref, "test");
  before = hub.request_count();
  r = lmeval::testing::run_command(
      env + "HF_HUB_OFFLINE=1 HF_HUB_CACHE=" + (work / "b").string() + " " + py +
      " -c \"import huggingface_hub as h; "
      "p = h.hf_hub_download('org/shared', 'data/test-00000-of-00001.parquet', "
      "repo_type='dataset'); "
      "print(open(p, 'rb').read() == open('" +
      (fx / "nested_snappy_v1.parquet").string() +
      "', 'rb').read()); "
      "info = h.scan_cache_dir('" +
      (work / "b").string() +
      "'); "
      "print(len(info.warnings), [(x.repo_id, x.repo_type, sorted(r.commit_hash for r in "
      "x.revisions)) for x in info.repos])\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "True\n0 [('org/shared', 'dataset', ['" + kCommit + "'])]\n");
  EXPECT_EQ(hub.request_count(), before);
  hub.stop();
  fs::remove_all(work);
}
