// BLEU, chrF, chrF++ and TER against sacrebleu itself (goldens: scripts/gen_sacrebleu_goldens.py).
#include "lmeval/metrics/sacrebleu.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lmeval/metrics/metrics.hpp"
#include "lmeval/metrics/registry.hpp"
#include "support/test_support.hpp"

namespace {

nlohmann::json goldens() {
  return nlohmann::json::parse(lmeval::testing::read_file(
      lmeval::testing::source_dir() / "tests/metrics/goldens/sacrebleu.json"))["cases"];
}

// The reference compares floats computed the same way; allow only the last bits to differ.
void expect_close(double got, double want) {
  EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, std::abs(want)));
}

}  // namespace

TEST(Metrics_Sacrebleu, Tokenizer13aMatchesSacrebleu) {
  for (const auto& c : goldens())
    for (size_t i = 0; i < c["hyps"].size(); ++i)
      EXPECT_EQ(lmeval::sacrebleu_tokenize_13a(c["hyps"][i].get<std::string>()),
                c["tokens_13a"][i].get<std::vector<std::string>>())
          << c["hyps"][i];
}

TEST(Metrics_Sacrebleu, CorpusBleuChrfChrfppMatchSacrebleu) {
  auto cases = goldens();
  ASSERT_GE(cases.size(), 10u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c["hyps"].dump());
    auto hyps = c["hyps"].get<std::vector<std::string>>();
    auto refs = c["refs"].get<std::vector<std::vector<std::string>>>();
    expect_close(lmeval::sacrebleu_corpus_bleu(hyps, refs), c["bleu"].get<double>());
    expect_close(lmeval::sacrebleu_corpus_chrf(hyps, refs, 0), c["chrf"].get<double>());
    expect_close(lmeval::sacrebleu_corpus_chrf(hyps, refs, 2), c["chrfpp"].get<double>());
    expect_close(lmeval::sacrebleu_corpus_ter(hyps, refs), c["ter"].get<double>());
  }
}

// The reference's bleu/chrf/chrf++ aggregations over [gold, prediction] items (_sacreformat):
// a string gold is one reference, a list gold holds several.
TEST(Metrics_Sacrebleu, AggregationsOverDocumentItems) {
  for (const auto& c : goldens()) {
    SCOPED_TRACE(c["hyps"].dump());
    std::vector<lmeval::Json> items;
    size_t streams = c["refs"].size();
    for (size_t i = 0; i < c["hyps"].size(); ++i) {
      lmeval::Json gold = lmeval::Json::array();
      for (size_t k = 0; k < streams; ++k) gold.push_back(c["refs"][k][i].get<std::string>());
      items.push_back(
          lmeval::Json::array({streams == 1 ? gold[0] : gold, c["hyps"][i].get<std::string>()}));
    }
    expect_close(lmeval::aggregate("bleu", items), c["bleu"].get<double>());
    expect_close(lmeval::aggregate("chrf", items), c["chrf"].get<double>());
    expect_close(lmeval::aggregate("chrf++", items), c["chrfpp"].get<double>());
    expect_close(lmeval::aggregate("ter", items), c["ter"].get<double>());
  }
  for (const char* name : {"bleu", "chrf", "chrf++", "ter"}) {
    const auto* m = lmeval::metrics::find(name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->aggregation, name);
    // lm_eval/api/metrics.py registers ter with higher_is_better=False, the others True.
    EXPECT_EQ(m->higher_is_better, std::string(name) != "ter") << name;
    EXPECT_TRUE(m->generate_until);
    EXPECT_TRUE(lmeval::has_bootstrap_stderr(name));
  }
}
