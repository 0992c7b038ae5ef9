// --fewshot_seeds against plain runs of the same binary with each seed (--seed 0,1234,1234,<s>):
// the multi-seed run must reproduce every plain run's results and samples, and send the model
// the multiset union of the plain runs' requests (each request as often as the seed that needs
// it most), no more.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "support/scratch_dir.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using lmeval::testing::lmeval_binary;
using lmeval::testing::read_jsonl;
using lmeval::testing::run_command;
using lmeval::testing::shared_dir;

namespace {

struct RunOutput {
  int exit_code = -1;
  std::string out, err;
  Json results;
  std::map<std::string, std::vector<Json>> samples;  // task -> records
  std::vector<Json> requests;                        // LMEVAL_RECORD_REQUESTS
};

class FewshotSeeds : public ::testing::Test {
 protected:
  RunOutput run(const std::string& name, const std::string& args) {
    fs::path out = dir_ / name, rec = dir_ / (name + ".requests.jsonl");
    auto r =
        run_command("LMEVAL_RECORD_REQUESTS='" + rec.string() + "' '" + lmeval_binary().string() +
                    "' run --model dummy --model_args pretrained=hashfake --data_dir '" +
                    (shared_dir() / "hf_data").string() + "' --output_path '" + out.string() +
                    "' --log_samples " + args);
    RunOutput res{r.exit_code, r.out, r.err, {}, {}, {}};
    if (r.exit_code != 0) return res;
    for (const auto& f : fs::recursive_directory_iterator(out)) {
      std::string n = f.path().filename().string();
      if (n.rfind("results_", 0) == 0)
        res.results = Json::parse(lmeval::testing::read_file(f.path()));
      if (n.rfind("samples_", 0) == 0) {
        std::string task = n.substr(8, n.rfind('_') - 8);
        res.samples[task] = read_jsonl(f.path());
      }
    }
    res.requests = read_jsonl(rec);
    return res;
  }

  lmeval::testing::ScratchDir scratch_{"lmeval_seeds"};
  const fs::path dir_ = scratch_.path();
};

const std::vector<int64_t> kSeeds = {1234, 1, 2};
const std::string kTasks = "--tasks arc_easy,mmlu_stem --limit 4";

// (type, arguments, repeats) of a recorded request.
std::string request_key(const Json& r) {
  return r["request_type"].dump() + r["arguments"].dump() + r["repeats"].dump();
}

}  // namespace

TEST_F(FewshotSeeds, EachSeedIsAPlainRunWithThatSeed) {
  LMEVAL_REQUIRE_SHARED("hf_data/allenai/ai2_arc");
  RunOutput multi = run("multi", kTasks + " --num_fewshot 2 --fewshot_seeds 1234,1,2");
  ASSERT_EQ(multi.exit_code, 0) << multi.err;
  std::map<int64_t, RunOutput> plain;
  for (int64_t s : kSeeds) {
    plain[s] = run("plain" + std::to_string(s),
                   kTasks + " --num_fewshot 2 --seed 0,1234,1234," + std::to_string(s));
    ASSERT_EQ(plain[s].exit_code, 0) << plain[s].err;
  }
  // The default seed's plain run is the reference-compatible default run (no --seed).
  RunOutput dflt = run("default", kTasks + " --num_fewshot 2");
  ASSERT_EQ(dflt.exit_code, 0) << dflt.err;

  // `results` and everything beside it: the first seed's plain run, byte for byte.
  for (const char* key :
       {"results", "groups", "group_subtasks", "configs", "versions", "n-shot", "higher_is_better",
        "n-samples", "config", "task_hashes", "leaderboard_normalized"}) {
    EXPECT_EQ(multi.results[key].dump(), dflt.results[key].dump()) << key;
    EXPECT_EQ(plain[1234].results[key].dump(), dflt.results[key].dump()) << key;
  }
  EXPECT_FALSE(dflt.results.contains("fewshot_seed_variance"));
  EXPECT_FALSE(dflt.results.contains("results_by_fewshot_seed"));

  // Every seed's own results: its plain run's.
  ASSERT_EQ(multi.results["results_by_fewshot_seed"].size(), kSeeds.size());
  for (int64_t s : kSeeds)
    EXPECT_EQ(multi.results["results_by_fewshot_seed"][std::to_string(s)].dump(),
              plain[s].results["results"].dump())
        << "seed " << s;
  // arc_easy's prompts change with the seed; mmlu's first_n few-shot examples do not.
  EXPECT_NE(plain[1].results["task_hashes"]["arc_easy"],
            plain[2].results["task_hashes"]["arc_easy"]);
  EXPECT_EQ(plain[1].results["task_hashes"]["mmlu_anatomy"],
            plain[2].results["task_hashes"]["mmlu_anatomy"]);

  // The spread is over exactly those values, in seed order, for tasks and groups alike.
  const Json& spread = multi.results["fewshot_seed_variance"];
  for (const char* name : {"arc_easy", "mmlu_stem", "mmlu_anatomy"}) {
    ASSERT_TRUE(spread.contains(name)) << name;
    EXPECT_EQ(spread[name]["seeds"], Json(kSeeds));
    Json values = Json::array();
    for (int64_t s : kSeeds) values.push_back(plain[s].results["results"][name]["acc,none"]);
    EXPECT_EQ(spread[name]["acc,none"]["values"], values) << name;
  }
  EXPECT_EQ(spread["mmlu_stem"]["acc,none"]["std"].get<double>(), 0.0);

  // Samples: one file per task with every seed's records, in seed order, each a plain run's
  // record plus its seed; the default run's records carry no seed.
  ASSERT_EQ(multi.samples.size(), dflt.samples.size());
  for (const auto& [task, records] : multi.samples) {
    size_t k = 0;
    for (int64_t s : kSeeds)
      for (const Json& want : plain[s].samples[task]) {
        ASSERT_LT(k, records.size()) << task;
        Json got = records[k++];
        EXPECT_EQ(got["fewshot_seed"], s) << task;
        got.erase("fewshot_seed");
        EXPECT_EQ(got.dump(), want.dump()) << task << " seed " << s;
        EXPECT_FALSE(want.contains("fewshot_seed"));
      }
    EXPECT_EQ(k, records.size()) << task;
  }

  // Requests: the multiset union of the plain runs'.
  std::map<std::string, size_t> want;
  for (int64_t s : kSeeds) {
    std::map<std::string, size_t> mine;
    for (const Json& r : plain[s].requests) ++mine[request_key(r)];
    for (const auto& [k, n] : mine) want[k] = std::max(want[k], n);
  }
  std::map<std::string, size_t> got;
  for (const Json& r : multi.requests) ++got[request_key(r)];
  EXPECT_EQ(got, want);
  size_t total = 0;
  for (const auto& [k, n] : want) total += n;
  EXPECT_EQ(multi.requests.size(), total);
  EXPECT_LT(multi.requests.size(), 3 * plain[1234].requests.size());
  // The first seed's requests go first, in a plain run's order.
  for (size_t i = 0; i < plain[1234].requests.size(); ++i) {
    Json r = multi.requests[i];
    EXPECT_EQ(r["fewshot_seed"], 1234);
    r.erase("fewshot_seed");
    ASSERT_EQ(r.dump(), plain[1234].requests[i].dump()) << "seq " << i;
  }
  EXPECT_EQ(multi.results["performance"]["loglikelihood"]["requests"], total);
  EXPECT_EQ(multi.results["performance"]["loglikelihood"]["requests_before_dedup"],
            3 * plain[1234].results["performance"]["loglikelihood"]["requests"].get<size_t>());

  // Console: the spread table after the usual ones.
  EXPECT_NE(multi.out.find("Across few-shot seeds 1234,1,2"), std::string::npos) << multi.out;
  // The usual tables say they are the first seed's score, not the seed mean compare uses.
  EXPECT_NE(multi.out.find("The tables above are few-shot seed 1234 only"), std::string::npos)
      << multi.out;
  EXPECT_NE(multi.out.find("|arc_easy"), std::string::npos);
  EXPECT_EQ(dflt.out.find("Across few-shot seeds"), std::string::npos);
}

TEST_F(FewshotSeeds, ZeroShotCostsOnePass) {
  LMEVAL_REQUIRE_SHARED("hf_data/allenai/ai2_arc");
  RunOutput plain = run("plain", "--tasks arc_easy,arc_challenge --limit 5 --num_fewshot 0");
  RunOutput multi =
      run("multi",
          "--tasks arc_easy,arc_challenge --limit 5 --num_fewshot 0 --fewshot_seeds 1234,1,2,3,4");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(multi.exit_code, 0) << multi.err;
  ASSERT_FALSE(plain.requests.empty());
  ASSERT_EQ(multi.requests.size(), plain.requests.size());
  for (const auto& name : {"arc_easy", "arc_challenge"}) {
    EXPECT_EQ(multi.samples[name].size(), 5 * plain.samples[name].size());
    EXPECT_EQ(multi.results["fewshot_seed_variance"][name]["acc,none"]["std"].get<double>(), 0.0);
  }
}

TEST_F(FewshotSeeds, ConfigFileAndUsageErrors) {
  LMEVAL_REQUIRE_SHARED("hf_data/allenai/ai2_arc");
  fs::path yaml = dir_ / "eval.yaml";
  std::ofstream(yaml) << "tasks: arc_easy\nlimit: 3\nnum_fewshot: 1\nfewshot_seeds: [7, 1234]\n";
  RunOutput y = run("yaml", "--config '" + yaml.string() + "'");
  ASSERT_EQ(y.exit_code, 0) << y.err;
  EXPECT_EQ(y.results["fewshot_seed_variance"]["arc_easy"]["seeds"], Json::parse("[7,1234]"));
  EXPECT_EQ(y.results["config"]["fewshot_seed"], 7);

  std::ofstream(yaml) << "tasks: arc_easy\nlimit: 3\nfewshot_seeds: {a: 1}\n";
  RunOutput bad_yaml = run("bad_yaml", "--config '" + yaml.string() + "'");
  EXPECT_EQ(bad_yaml.exit_code, 2);
  EXPECT_NE(bad_yaml.err.find("eval.yaml:3"), std::string::npos) << bad_yaml.err;

  RunOutput twice = run("twice", "--tasks arc_easy --limit 3 --fewshot_seeds 1,2,1");
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("--fewshot_seeds"), std::string::npos) << twice.err;
  RunOutput word = run("word", "--tasks arc_easy --limit 3 --fewshot_seeds 1,two");
  EXPECT_EQ(word.exit_code, 2);
  EXPECT_NE(word.err.find("'two'"), std::string::npos) << word.err;
}
