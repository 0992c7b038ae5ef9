// Continuous batching (src/models/hf/continuous_batching.cpp): every row gets the tokens
// transformers' greedy generate gives it alone, whatever the slots, the admission order and
// prefix sharing, with rows that end at different steps. Goldens: the fixtures' own (made by
// transformers) and tests/fixtures/continuous_batching/stories260K.json
// (scripts/gen_continuous_batching_goldens.py). A row ended by EOS or a stop at step k is the
// golden cut after k tokens: greedy decoding does not look ahead.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "models/hf/transformer.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

json read_json(const fs::path& p) { return json::parse(lmeval::testing::read_file(p)); }

struct Row {
  std::vector<Token> prompt, want;  // want: the golden, cut where the row must end
  size_t limit = 0;                 // a stop after this many tokens (0: none)
};

// The runs each row set goes through: slots, admission order reversed, prefix sharing.
struct Run {
  int64_t slots;
  bool reversed;
  bool share;
};
const std::vector<Run> kRuns = {{1, false, true}, {2, true, false}, {3, false, false},
                                {3, true, true},  {8, false, true}, {8, true, false}};

void check_runs(Transformer& model, const std::vector<Row>& rows, const SamplingOptions& so,
                const std::string& name) {
  for (const Run& run : kRuns) {
    std::vector<size_t> order(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) order[i] = run.reversed ? rows.size() - 1 - i : i;
    std::vector<std::vector<Token>> prompts;
    for (size_t i : order) prompts.push_back(rows[i].prompt);
    Batching b;
    b.slots = run.slots;
    b.share_prefixes = run.share;
    std::vector<int> finished(rows.size(), 0);
    b.finished = [&](size_t r, const std::vector<Token>&) { ++finished[r]; };
    const StopFn stop = [&](size_t r, const std::vector<Token>& gen) {
      return rows[order[r]].limit > 0 && gen.size() >= rows[order[r]].limit;
    };
    const auto got = model.generate_continuous(prompts, so, stop, b);
    ASSERT_EQ(got.size(), rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
      EXPECT_EQ(got[r], rows[order[r]].want)
          << name << " row " << order[r] << " slots " << run.slots
          << (run.reversed ? " reversed" : "") << (run.share ? " sharing" : " no sharing");
      EXPECT_EQ(finished[r], 1) << name << " row " << order[r];
    }
  }
}

// Each fixture's two golden generations (20 tokens), as rows that end after 20, 5, 13, 1, 20
// and 9 tokens (stops) or at an EOS chosen from the golden.
void check_fixture(const fs::path& dir, const std::string& name) {
  const json golden = read_json(dir / "golden.json");
  LoadOptions f32;
  f32.dtype = "float32";  // the goldens' float32 model of a float16 checkpoint
  auto model = Transformer::load(dir, f32);
  std::vector<std::vector<Token>> prompts, gens;
  for (const auto& g : golden["generate"]) {
    prompts.push_back(g["prompt_ids"].get<std::vector<Token>>());
    gens.push_back(g["new_ids"].get<std::vector<Token>>());
  }
  SamplingOptions so;
  so.max_new_tokens = 20;
  so.eos_ids = {2};
  std::vector<Row> rows;
  const size_t limits[] = {20, 5, 13, 1, 20, 9};
  for (size_t i = 0; i < 6; ++i) {
    const auto& full = gens[i % gens.size()];
    const size_t n = std::min(full.size(), limits[i]);
    rows.push_back({prompts[i % prompts.size()], {full.begin(), full.begin() + n}, limits[i]});
  }
  check_runs(*model, rows, so, name);
  // A second EOS, the first golden's 7th token, ends every row at its first EOS.
  so.eos_ids = {2, gens[0][6]};
  rows.clear();
  for (size_t i = 0; i < 4; ++i) {
    const auto& full = gens[i % gens.size()];
    auto end =
        std::find_if(full.begin(), full.end(), [&](Token t) { return t == 2 || t == gens[0][6]; });
    rows.push_back(
        {prompts[i % prompts.size()], {full.begin(), end == full.end() ? end : end + 1}, 0});
  }
  check_runs(*model, rows, so, name + " eos");
}

TEST(ContinuousBatching, EveryFixtureRowMatchesTransformersWhateverTheBatch) {
  std::vector<fs::path> dirs;
  for (const auto& e :
       fs::directory_iterator(lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_arch"))
    if (fs::exists(e.path() / "golden.json")) dirs.push_back(e.path());
  const fs::path shared = lmeval::testing::shared_dir() / "fixtures";
  if (fs::exists(shared))
    for (const auto& e : fs::directory_iterator(shared))
      if (fs::exists(e.path() / "golden.json") && fs::exists(e.path() / "config.json"))
        dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  ASSERT_GE(dirs.size(), 30u);
  for (const auto& d : dirs) {
    // Encoder-decoders (the seq2seq backend) generate elsewhere.
    if (read_json(d / "config.json").dump().find("ConditionalGeneration") != std::string::npos)
      continue;
    SCOPED_TRACE(d.filename().string());
    check_fixture(d, d.filename().string());
  }
}

// stories260K (a trained model): ten prompts, three of them sharing a 30-token header, ended at
// their first "." (rows of 5 to 60 tokens) or after 160 tokens.
TEST(ContinuousBatching, Stories260KRowsMatchTransformersWhateverTheBatch) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/config.json");
  const json golden = read_json(lmeval::testing::source_dir() / "tests" / "fixtures" /
                                "continuous_batching" / "stories260K.json");
  auto model = Transformer::load(lmeval::testing::shared_dir() / "models" / "stories260K", {});
  SamplingOptions so;
  so.max_new_tokens = golden["max_new_tokens"].get<int64_t>();
  // "." as the row's end (a stop token as EOS): the stories have several sentences.
  const Token dot = golden["dot_id"].get<Token>();
  so.eos_ids = {2, dot};
  std::vector<Row> rows;
  std::vector<size_t> ends;
  for (const auto& r : golden["rows"]) {
    auto full = r["new_ids"].get<std::vector<Token>>();
    auto end = std::find_if(full.begin(), full.end(), [&](Token t) { return t == 2 || t == dot; });
    rows.push_back({r["prompt_ids"].get<std::vector<Token>>(),
                    {full.begin(), end == full.end() ? end : end + 1},
                    0});
    ends.push_back(rows.back().want.size());
  }
  // The rows do end at different steps.
  EXPECT_GT(*std::max_element(ends.begin(), ends.end()),
            *std::min_element(ends.begin(), ends.end()));
  check_runs(*model, rows, so, "stories260K");
  // Whole 160-token rows as well (no "." end), in 3 slots.
  so.eos_ids = {2};
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = golden["rows"][i];
    // Near ties (a top-2 margin under 1e-3) may go either way in other kernels: compared up to
    // the golden's first "." only, above.
    if (r["min_top2_margin"].get<double>() < 1e-3) continue;
    rows[i].want = r["new_ids"].get<std::vector<Token>>();
  }
  std::vector<Row> whole;
  for (size_t i = 0; i < rows.size(); ++i)
    if (golden["rows"][i]["min_top2_margin"].get<double>() >= 1e-3) whole.push_back(rows[i]);
  Batching b;
  b.slots = 3;
  std::vector<std::vector<Token>> prompts;
  for (const auto& r : whole) prompts.push_back(r.prompt);
  const auto got = model->generate_continuous(prompts, so, {}, b);
  for (size_t i = 0; i < whole.size(); ++i) EXPECT_EQ(got[i], whole[i].want) << "whole row " << i;
}

// stories260K's generations of `prompts` in two slots with prefix sharing and without: the same
// tokens, every prefill token either computed or copied, none copied without sharing. Returns
// the tokens copied with sharing.
int64_t copied_with_and_without_sharing(const std::vector<std::vector<Token>>& prompts,
                                        const SamplingOptions& so) {
  auto on = Transformer::load(lmeval::testing::shared_dir() / "models" / "stories260K", {});
  auto off = Transformer::load(lmeval::testing::shared_dir() / "models" / "stories260K", {});
  Batching b;
  b.slots = 2;
  const auto shared = on->generate_continuous(prompts, so, {}, b);
  b.share_prefixes = false;
  EXPECT_EQ(shared, off->generate_continuous(prompts, so, {}, b));
  const auto [computed_on, copied_on] = on->prefill_tokens();
  const auto [computed_off, copied_off] = off->prefill_tokens();
  EXPECT_EQ(copied_off, 0);
  EXPECT_EQ(computed_on + copied_on, computed_off);
  return copied_on;
}

// Prompts sharing a header copy its keys and values (counted), with the same tokens as without.
TEST(ContinuousBatching, SharedPrefixesAreComputedOnce) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/config.json");
  const json golden = read_json(lmeval::testing::source_dir() / "tests" / "fixtures" /
                                "continuous_batching" / "stories260K.json");
  std::vector<std::vector<Token>> prompts;
  for (size_t i = 0; i < 3; ++i)
    prompts.push_back(golden["rows"][i]["prompt_ids"].get<std::vector<Token>>());
  SamplingOptions so;
  so.max_new_tokens = 8;
  so.eos_ids = {2};
  EXPECT_GE(copied_with_and_without_sharing(prompts, so), 2 * 25);  // the ~27-token header, twice
}

// Six headers interleaved by the admission order, two slots: every header is computed once (the
// planned entries outlive the slots' turnover), with the same tokens as without sharing. The
// prompts' own tails are long enough for the kept-token bound (four of the longest prompts) to
// hold all six headers.
TEST(ContinuousBatching, InterleavedHeadersAreComputedOnce) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/config.json");
  constexpr int kGroups = 6, kMembers = 3, kHeader = 21;
  std::vector<std::vector<Token>> prompts;
  for (int member = 0; member < kMembers; ++member)
    for (int g = 0; g < kGroups; ++g) {
      std::vector<Token> p{1};  // BOS, then the group's header, then the prompt's own tokens
      for (int k = 1; k < kHeader; ++k) p.push_back(3 + (g * 37 + k * 11) % 500);
      for (int k = 0; k < 12; ++k) p.push_back(3 + (200 + member * 53 + g * 7 + k * 13) % 500);
      prompts.push_back(p);
    }
  SamplingOptions so;
  so.max_new_tokens = 6;
  EXPECT_EQ(copied_with_and_without_sharing(prompts, so), kGroups * (kMembers - 1) * kHeader);
}

// The CPU's automatic slot count (hf_lm.cpp) divides memory by generation_slot_bytes: it must
// cover a slot's keys and values, counted here from config.json (float32, K and V per layer and
// key/value head), and not much more for a long generation (a step's activations of one row).
TEST(ContinuousBatching, SlotBytesCoverTheKeysAndValues) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/config.json");
  const fs::path dir = lmeval::testing::shared_dir() / "models" / "stories260K";
  const json cfg = read_json(dir / "config.json");
  auto model = Transformer::load(dir, {});
  for (const int64_t cap : {64, 512}) {
    const double kv = static_cast<double>(cap) * cfg["num_hidden_layers"].get<double>() *
                      cfg["num_key_value_heads"].get<double>() * 2.0 *
                      cfg["head_dim"].get<double>() * 4.0;
    const double got = model->generation_slot_bytes(cap);
    EXPECT_GE(got, kv) << "cap " << cap;
    EXPECT_LE(got, 2.0 * kv) << "cap " << cap;
  }
}

}  // namespace
}  // namespace lmeval::hf
