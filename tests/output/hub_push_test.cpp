// The results push (--hf_hub_log_args) against a loopback Hub: what the reference's
// EvaluationTracker uploads (goldens/hub_push, made by scripts/gen_hub_push_goldens.py), the LFS
// path, the errors, and the token kept out of every message.
#include "lmeval/output/hub_push.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "lmeval/core/error.hpp"
#include "lmeval/core/sha256.hpp"
#include "lmeval/data/hub_upload.hpp"
#include "support/fake_hub_writer.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using lmeval::Json;
using lmeval::testing::FakeHubWriter;

namespace {

const char* kToken = "hf_secretTOKEN123";

fs::path golden_dir() { return lmeval::testing::source_dir() / "tests/output/goldens/hub_push"; }

Json golden() { return Json::parse(lmeval::testing::read_file(golden_dir() / "golden.json")); }

lmeval::hub::HubClient client_for(const std::string& endpoint, bool with_token = true) {
  lmeval::hub::HubConfig c;
  c.endpoint = endpoint;
  if (with_token) c.token = kToken;
  c.max_retries = 0;
  c.cache_dir = fs::temp_directory_path() / "lmeval_hub_push_cache";
  return lmeval::hub::HubClient(c);
}

// YAML (PyYAML's folded quoting or lm-eval's JSON-style quoting alike) as JSON, scalars as text.
Json yaml_to_json(const YAML::Node& n) {
  if (n.IsMap()) {
    Json j = Json::object();
    for (const auto& kv : n) j[kv.first.as<std::string>()] = yaml_to_json(kv.second);
    return j;
  }
  if (n.IsSequence()) {
    Json j = Json::array();
    for (const auto& x : n) j.push_back(yaml_to_json(x));
    return j;
  }
  return n.IsNull() ? Json() : Json(n.as<std::string>());
}

Json front_matter(const std::string& card) {
  EXPECT_EQ(card.rfind("---\n", 0), 0u) << card;
  size_t end = card.find("\n---\n", 4);
  return yaml_to_json(YAML::Load(card.substr(4, end - 4)));
}

struct Pushed {
  std::unique_ptr<FakeHubWriter> hub;
  lmeval::HubPushReport report;
  lmeval::WrittenFiles files;
};

// The golden run's files, pushed as the golden's tracker pushed them.
Pushed push_golden_run(const fs::path& scratch, size_t lfs_from = size_t(10) << 20) {
  Pushed p;
  p.hub = std::make_unique<FakeHubWriter>(kToken, lfs_from);
  fs::copy(golden_dir() / "run", scratch / "run", fs::copy_options::recursive);
  fs::path folder = scratch / "run/org__tiny-model";
  const std::string date = golden()["date_id"];
  p.files.results = folder / ("results_" + date + ".json");
  p.files.samples = {folder / ("samples_arc_easy_" + date + ".jsonl"),
                     folder / ("samples_gsm8k_" + date + ".jsonl")};
  Json results = Json::parse(lmeval::testing::read_file(p.files.results));
  auto args = lmeval::parse_hub_log_args(Json{{"details_repo_name", "details"},
                                              {"results_repo_name", "scores"},
                                              {"push_results_to_hub", true},
                                              {"push_samples_to_hub", true},
                                              {"leaderboard_url", "https://lb.example"},
                                              {"point_of_contact", "me@example.com"}});
  auto client = client_for(p.hub->endpoint());
  lmeval::prepare_hub_push(client, args);
  p.report = lmeval::push_run_to_hub(client, args, results, p.files);
  return p;
}

}  // namespace

TEST(HubPush, RepoLayoutAndCommitsMatchTheReference) {
  lmeval::testing::ScratchDir dir("lmeval_hub_push");
  Pushed p = push_golden_run(dir.path());
  EXPECT_TRUE(p.report.failures.empty()) << p.report.failures.front();
  Json g = golden();

  // Every create_repo and commit of the reference's tracker, in its order; then the card.
  std::vector<std::pair<std::string, std::string>> want_created;
  std::vector<FakeHubWriter::Commit> want_commits;
  for (const auto& c : g["calls"]) {
    if (c["call"] == "create_repo")
      want_created.emplace_back(c["repo_id"], c["private"].get<bool>() ? "private" : "public");
    if (c["call"] == "commit")
      want_commits.push_back(
          {c["repo_id"], c["message"], c["files"].get<std::vector<std::string>>()});
  }
  EXPECT_EQ(p.hub->created(), want_created);
  auto commits = p.hub->commits();
  ASSERT_EQ(commits.size(), want_commits.size() + 1);
  for (size_t i = 0; i < want_commits.size(); ++i) {
    EXPECT_EQ(commits[i].repo, want_commits[i].repo) << i;
    EXPECT_EQ(commits[i].summary, want_commits[i].summary) << i;
    EXPECT_EQ(commits[i].files, want_commits[i].files) << i;
  }
  EXPECT_EQ(commits.back().files, std::vector<std::string>{"README.md"});
  EXPECT_EQ(commits.back().summary, "Upload README.md with huggingface_hub");

  // The repos hold the run's files byte for byte.
  for (const auto& [repo, names] : g["repos"].items()) {
    auto files = p.hub->files(repo);
    for (const auto& name : names) {
      std::string base = name.get<std::string>().substr(name.get<std::string>().rfind('/') + 1);
      ASSERT_TRUE(files.count(name)) << repo << " lacks " << name;
      EXPECT_EQ(files[name], lmeval::testing::read_file(p.files.results.parent_path() / base));
    }
  }

  // The card's front matter says what the reference's says (its links on this fake Hub).
  std::string want_card = g["cards"][0]["text"];
  for (size_t at; (at = want_card.find("http://hub.invalid")) != std::string::npos;)
    want_card.replace(at, 18, p.hub->endpoint());
  std::string card = p.hub->files("tester/details-private")["README.md"];
  EXPECT_EQ(front_matter(card), front_matter(want_card));
  Json fm = front_matter(card);
  EXPECT_NE(card.find(fm["dataset_summary"].get<std::string>()), std::string::npos);

  // Every Hub API request carried the token; none went without it or elsewhere.
  for (const auto& r : p.hub->requests())
    EXPECT_EQ(r.authorization, std::string("Bearer ") + kToken) << r.path;
}

TEST(HubPush, LargeFilesGoThroughLfsWithoutTheToken) {
  lmeval::testing::ScratchDir dir("lmeval_hub_push");
  Pushed p = push_golden_run(dir.path(), 300);  // the results file (1 KB) is "large" here
  EXPECT_TRUE(p.report.failures.empty()) << p.report.failures.front();
  std::string results_name = "org/tiny-model/" + p.files.results.filename().string();
  EXPECT_EQ(p.hub->files("tester/scores-private")[results_name],
            lmeval::testing::read_file(p.files.results));
  bool stored = false;
  for (const auto& r : p.hub->requests())
    if (r.path.rfind("/lfs-store/", 0) == 0) {
      stored = true;
      EXPECT_EQ(r.authorization, "") << "the token went to the LFS storage URL";
      EXPECT_EQ(r.path, "/lfs-store/" + lmeval::sha256_hex(r.body));
    }
  EXPECT_TRUE(stored);
}

TEST(HubPush, RefusedStepsAreReportedAndTheOthersStillRun) {
  lmeval::testing::ScratchDir dir("lmeval_hub_push");
  auto hub = std::make_unique<FakeHubWriter>(kToken);
  hub->fail("/api/datasets/tester/scores-private/commit", 403);
  fs::copy(golden_dir() / "run", dir.path() / "run", fs::copy_options::recursive);
  fs::path folder = dir.path() / "run/org__tiny-model";
  const std::string date = golden()["date_id"];
  lmeval::WrittenFiles files{folder / ("results_" + date + ".json"),
                             {folder / ("samples_arc_easy_" + date + ".jsonl")}};
  Json results = Json::parse(lmeval::testing::read_file(files.results));
  auto args = lmeval::parse_hub_log_args(Json{{"hub_results_org", "tester"},
                                              {"push_results_to_hub", true},
                                              {"push_samples_to_hub", true},
                                              {"details_repo_name", "details"},
                                              {"results_repo_name", "scores"}});
  auto client = client_for(hub->endpoint());
  auto report = lmeval::push_run_to_hub(client, args, results, files);
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_NE(report.failures[0].find("HTTP 403"), std::string::npos) << report.failures[0];
  EXPECT_NE(report.failures[0].find("tester/scores-private"), std::string::npos);
  // The server echoed the Authorization header; the message must not carry the token.
  EXPECT_EQ(report.failures[0].find(kToken), std::string::npos) << report.failures[0];
  EXPECT_EQ(report.done.size(), 2u);  // the samples and the card
  EXPECT_TRUE(hub->files("tester/details-private").count("README.md"));
}

TEST(HubPush, BadTokenUnreachableHubAndMissingToken) {
  FakeHubWriter hub("another-token");
  auto client = client_for(hub.endpoint());
  auto args = lmeval::parse_hub_log_args(Json{{"push_results_to_hub", true}});
  try {
    lmeval::prepare_hub_push(client, args);
    FAIL() << "a refused token must stop the run before the model";
  } catch (const lmeval::RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("HTTP 401"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find(kToken), std::string::npos);
  }

  auto nobody = client_for("http://127.0.0.1:1");  // nothing listens on port 1
  try {
    lmeval::hub::whoami(nobody);
    FAIL();
  } catch (const lmeval::RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot reach the Hub"), std::string::npos) << e.what();
  }

  auto tokenless = client_for(hub.endpoint(), false);
  try {
    lmeval::prepare_hub_push(tokenless, args);
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("HF_TOKEN"), std::string::npos) << e.what();
  }
}

TEST(HubPush, ArgumentsAsTheTrackerTakesThem) {
  auto a = lmeval::parse_hub_log_args(Json{{"hub_results_org", "org"}, {"public_repo", true}});
  EXPECT_EQ(a.details_repo(), "org/lm-eval-results");
  EXPECT_EQ(a.results_repo(), "org/lm-eval-results");
  auto b = lmeval::parse_hub_log_args(Json{{"hub_results_org", "org"}, {"details_repo_name", "d"}});
  EXPECT_EQ(b.details_repo(), "org/d-private");
  EXPECT_EQ(b.results_repo(), "org/d-private");  // results_repo_name defaults to details'
  auto c = lmeval::parse_hub_log_args(
      Json{{"hub_results_org", "org"}, {"hub_repo_name", "same"}, {"details_repo_name", "d"}});
  EXPECT_EQ(c.details_repo(), "org/same-private");
  EXPECT_EQ(c.results_repo(), "org/same-private");
  EXPECT_THROW(lmeval::parse_hub_log_args(Json{{"push_results", true}}), lmeval::UserError);
  EXPECT_THROW(lmeval::parse_hub_log_args(Json{{"public_repo", "yes"}}), lmeval::UserError);
  try {
    lmeval::parse_hub_log_args(Json{{"token", kToken}});
    FAIL();
  } catch (const lmeval::UserError& e) {
    EXPECT_EQ(std::string(e.what()).find(kToken), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("HF_TOKEN"), std::string::npos) << e.what();
  }
}

TEST(HubPush, CardPlanKeepsOnlyTheNewestRunPerTask) {
  // Two runs of arc_easy, one of gsm8k: the card lists the newest file of each task.
  auto plan = lmeval::plan_dataset_card(
      {"m/results_2026-01-01T00-00-00.1.json", "m/samples_arc_easy_2026-01-01T00-00-00.1.jsonl",
       "m/results_2026-02-01T00-00-00.1.json", "m/samples_arc_easy_2026-02-01T00-00-00.1.jsonl",
       "m/samples_gsm8k_2026-01-01T00-00-00.1.jsonl", "README.md"});
  ASSERT_EQ(plan.configs.size(), 2u);
  EXPECT_EQ(plan.configs[0]["config_name"], "m__arc_easy");
  EXPECT_EQ(plan.configs[0]["data_files"][0]["split"], "2026_02_01T00_00_00.1");
  EXPECT_EQ(plan.configs[1]["config_name"], "m__gsm8k");
  EXPECT_EQ(plan.latest_results_file, "m/results_2026-02-01T00-00-00.1.json");
  EXPECT_EQ(plan.results_files, 2u);
  EXPECT_THROW(lmeval::plan_dataset_card({"m/results_2026-01-01T00-00-00.1.json"}),
               lmeval::RuntimeError);
}
