// The manifest's tokenizer hash when the tokenizer is a Hub id: the files of its snapshot in a
// Hugging Face cache laid out as huggingface_hub lays it out (refs/<revision> holding the commit,
// snapshots/<commit>/<file> linking to ../../blobs/<etag>). Expected hashes from CPython:
//   hashlib.sha256(b"tokenizer.json\0" + TJ + b"tokenizer_config.json\0" + TC).hexdigest()
// with TJ, TC the file contents below (TJ_B for the second commit).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "evaluator/run_manifest.hpp"

namespace fs = std::filesystem;
using lmeval::Json;

namespace {

const char* kTJ = R"({"model": {"type": "WordLevel", "vocab": {"a": 0}}})";
const char* kTJ_B = R"({"model": {"type": "WordLevel", "vocab": {"b": 0}}})";
const char* kTC = R"({"bos_token": "<s>"})";
const char* kHashA = "cc8db6598affb42f20a0adae476c4d01ed83bc0dbb263e61a7df67385e13466c";
const char* kHashB = "4c15efcfcb155174d02ad0c9cb421924eef09d1aa0000140d379b9fe93d233ce";
const std::string kCommitA(40, 'a'), kCommitB(40, 'b');

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

class Evaluator_RunManifest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("lmeval_manifest_hub_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    const fs::path repo = root_ / "hub" / "models--org--tiny";
    // Commit A, named by refs/main; its files are links into blobs/ (huggingface_hub's layout).
    write(repo / "blobs" / "etag-tj-a", kTJ);
    write(repo / "blobs" / "etag-tc", kTC);
    fs::create_directories(repo / "snapshots" / kCommitA);
    fs::create_symlink("../../blobs/etag-tj-a", repo / "snapshots" / kCommitA / "tokenizer.json");
    fs::create_symlink("../../blobs/etag-tc",
                       repo / "snapshots" / kCommitA / "tokenizer_config.json");
    write(repo / "snapshots" / kCommitA / "config.json", "{}");  // not a tokenizer file
    write(repo / "refs" / "main", kCommitA);
    // Commit B, named by refs/v2, with another tokenizer.json.
    write(repo / "blobs" / "etag-tj-b", kTJ_B);
    fs::create_directories(repo / "snapshots" / kCommitB);
    fs::create_symlink("../../blobs/etag-tj-b", repo / "snapshots" / kCommitB / "tokenizer.json");
    fs::create_symlink("../../blobs/etag-tc",
                       repo / "snapshots" / kCommitB / "tokenizer_config.json");
    write(repo / "refs" / "v2", kCommitB);
    // A repo in the cache with no tokenizer files.
    write(root_ / "hub" / "models--org--weights-only" / "refs" / "main", kCommitA);
    write(root_ / "hub" / "models--org--weights-only" / "snapshots" / kCommitA / "config.json",
          "{}");
    // The same two files as a local folder.
    write(root_ / "local" / "tokenizer.json", kTJ);
    write(root_ / "local" / "tokenizer_config.json", kTC);
    ::setenv("HF_HUB_CACHE", (root_ / "hub").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("HF_HUB_CACHE");
    fs::remove_all(root_);
  }

  static Json tokenizer(const Json& model_args) {
    lmeval::EvalConfig cfg;
    cfg.model_args = model_args;
    Json results = {{"configs", Json::object()}};
    return lmeval::run_manifest({}, results, cfg)["tokenizer"];
  }

  fs::path root_;
};

TEST_F(Evaluator_RunManifest, HubIdHashesItsSnapshotInTheCache) {
  Json t = tokenizer({{"pretrained", "org/tiny"}});
  EXPECT_EQ(t["source"], "org/tiny");
  EXPECT_EQ(t["files_sha256"], kHashA) << t.dump();
  EXPECT_EQ(t["hub_commit"], kCommitA);
}

TEST_F(Evaluator_RunManifest, RevisionPicksItsOwnSnapshot) {
  Json t = tokenizer({{"pretrained", "org/tiny"}, {"revision", "v2"}});
  EXPECT_EQ(t["files_sha256"], kHashB) << t.dump();
  EXPECT_EQ(t["hub_commit"], kCommitB);
  // A commit id as the revision: its snapshot directly.
  t = tokenizer({{"pretrained", "org/tiny"}, {"revision", kCommitA}});
  EXPECT_EQ(t["files_sha256"], kHashA);
}

TEST_F(Evaluator_RunManifest, TokenizerArgumentWinsOverPretrained) {
  Json t = tokenizer({{"pretrained", "org/weights-only"}, {"tokenizer", "org/tiny"}});
  EXPECT_EQ(t["source"], "org/tiny");
  EXPECT_EQ(t["files_sha256"], kHashA);
}

TEST_F(Evaluator_RunManifest, LocalFolderAndHubSnapshotOfTheSameFilesAgree) {
  Json t = tokenizer({{"pretrained", (root_ / "local").string()}});
  EXPECT_EQ(t["files_sha256"], kHashA);
  EXPECT_TRUE(t["hub_commit"].is_null());
}

TEST_F(Evaluator_RunManifest, NullWhenNoFilesExistLocally) {
  EXPECT_TRUE(tokenizer({{"pretrained", "org/not-cached"}})["files_sha256"].is_null());
  EXPECT_TRUE(
      tokenizer({{"pretrained", "org/tiny"}, {"revision", "no-such-branch"}})["files_sha256"]
          .is_null());
  Json w = tokenizer({{"pretrained", "org/weights-only"}});
  EXPECT_TRUE(w["files_sha256"].is_null());
  EXPECT_EQ(w["hub_commit"], kCommitA);  // the snapshot is there, without tokenizer files
  EXPECT_TRUE(
      tokenizer(Json::object())["files_sha256"].is_null());  // the dummy model: no tokenizer
}

}  // namespace
