// IFEval scoring vs the reference's verdicts on google's GPT-4 responses, and the nltk/langdetect
// ports vs the real libraries (goldens from scripts/gen_ifeval_goldens.py).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>

#include "lmeval/core/error.hpp"
#include "lmeval/tasks/functions/ifeval.hpp"
#include "support/test_support.hpp"

namespace lmeval::ifeval {
namespace {

using lmeval::testing::read_file;
using lmeval::testing::read_jsonl;
using lmeval::testing::shared_dir;
using lmeval::testing::source_dir;

// The reference's loose variants (same construction as utils.test_instruction_following_loose).
std::vector<std::string> loose_variants(const std::string& response) {
  std::vector<std::string> r;
  size_t pos = 0;
  while (true) {
    size_t e = response.find('\n', pos);
    r.push_back(response.substr(pos, e == std::string::npos ? e : e - pos));
    if (e == std::string::npos) break;
    pos = e + 1;
  }
  auto join = [&](size_t b, size_t e) {
    std::string out;
    for (size_t i = b; i < e; ++i) out += (i > b ? "\n" : "") + r[i];
    size_t s = out.find_first_not_of(" \t\n\r\f\v");
    if (s == std::string::npos) return std::string();
    return out.substr(s, out.find_last_not_of(" \t\n\r\f\v") - s + 1);
  };
  auto no_star = [](std::string s) {
    s.erase(std::remove(s.begin(), s.end(), '*'), s.end());
    return s;
  };
  std::string first = join(std::min<size_t>(1, r.size()), r.size());
  std::string last = join(0, r.size() - 1);
  std::string both = r.size() >= 2 ? join(1, r.size() - 1) : std::string();
  return {response, no_star(response), first,         last,
          both,     no_star(first),    no_star(last), no_star(both)};
}

struct Verdicts {
  std::map<int64_t, Json> inputs;  // key -> input_data row
  std::vector<Json> golden;        // golden_gpt4_verdicts rows, in order
};

const Verdicts& verdicts() {
  static Verdicts* v = [] {
    auto* out = new Verdicts();
    for (Json& row : read_jsonl(shared_dir() / "data/ifeval/input_data.jsonl"))
      out->inputs[row["key"].get<int64_t>()] = row;
    out->golden = read_jsonl(shared_dir() / "data/ifeval/golden_gpt4_verdicts.jsonl");
    return out;
  }();
  return *v;
}

TEST(IfevalTest, SupportedInstructionIdsAreTheRegistry) {
  std::vector<std::string> ids = supported_instruction_ids();
  EXPECT_EQ(ids.size(), 25u);
  EXPECT_EQ(ids.front(), "keywords:existence");
  EXPECT_EQ(ids.back(), "startend:quotation");
}

// Every document of the dataset: our verdicts vs the reference's (lm-eval 0.4.13).
TEST(IfevalTest, MatchesReferenceVerdictsOnGpt4Responses) {
  LMEVAL_REQUIRE_SHARED("data/ifeval/golden_gpt4_verdicts.jsonl");
  const Verdicts& v = verdicts();
  ASSERT_EQ(v.golden.size(), 541u);
  PyRandom rng(0);
  size_t same[4] = {0, 0, 0, 0}, total_inst = 0;
  std::vector<Json> strict_items, loose_items;
  double prompt_strict = 0, prompt_loose = 0;
  const char* names[4] = {"prompt_level_strict_acc", "inst_level_strict_acc",
                          "prompt_level_loose_acc", "inst_level_loose_acc"};
  std::vector<std::string> mismatches;
  // Load the embedded models first, so the timing below is the scoring alone.
  (void)detect_language("warm up");
  (void)word_tokenize("Warm up.");
  auto t0 = std::chrono::steady_clock::now();
  for (const Json& g : v.golden) {
    int64_t key = g["key"].get<int64_t>();
    const Json& doc = v.inputs.at(key);
    ASSERT_EQ(doc["prompt"], g["prompt"]);
    Json got = process_results(doc, g["response"].get<std::string>(), rng);
    ASSERT_EQ(got.size(), 4u);
    auto it = got.begin();
    for (int k = 0; k < 4; ++k, ++it) ASSERT_EQ(it.key(), names[k]);
    bool unstable = g["langdetect_unstable"].get<bool>();
    for (int k = 0; k < 4; ++k) {
      const Json& want = g[names[k]];
      if (k == 1 || k == 3) {
        for (size_t i = 0; i < want.size(); ++i) {
          if (got[names[k]][i] == want[i]) {
            ++same[k];
          } else if (!unstable) {
            mismatches.push_back(std::to_string(key) + " " + names[k] + "[" + std::to_string(i) +
                                 "] " + g["instruction_id_list"][i].get<std::string>());
          }
        }
      } else {
        if (got[names[k]] == want) {
          ++same[k];
        } else if (!unstable) {
          mismatches.push_back(std::to_string(key) + " " + names[k]);
        }
      }
    }
    total_inst += g["inst_level_strict_acc"].size();
    strict_items.push_back(got["inst_level_strict_acc"]);
    loose_items.push_back(got["inst_level_loose_acc"]);
    prompt_strict += got["prompt_level_strict_acc"].get<bool>();
    prompt_loose += got["prompt_level_loose_acc"].get<bool>();
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[ifeval] scored 541 documents in " << secs << " s\n";
  std::cout << "[ifeval] identical: prompt_strict " << same[0] << "/541, inst_strict " << same[1]
            << "/" << total_inst << ", prompt_loose " << same[2] << "/541, inst_loose " << same[3]
            << "/" << total_inst << "\n";
  const Json summary =
      Json::parse(read_file(shared_dir() / "data/ifeval/golden_gpt4_summary.json"));
  std::cout.precision(17);
  std::cout << "[ifeval] ours: " << prompt_strict / 541 << " " << agg_inst_level_acc(strict_items)
            << " " << prompt_loose / 541 << " " << agg_inst_level_acc(loose_items) << "\n";
  std::cout << "[ifeval] reference: " << summary["prompt_level_strict_acc"] << " "
            << summary["inst_level_strict_acc"] << " " << summary["prompt_level_loose_acc"] << " "
            << summary["inst_level_loose_acc"] << "\n";
  for (const std::string& m : mismatches) ADD_FAILURE() << "verdict differs: " << m;
  EXPECT_EQ(total_inst, 834u);
}

// The nltk and langdetect ports vs the libraries on every text the checkers see.
TEST(IfevalTest, NlpHelpersMatchNltkAndLangdetect) {
  LMEVAL_REQUIRE_SHARED("data/ifeval/golden_gpt4_verdicts.jsonl");
  const Verdicts& v = verdicts();
  std::map<int64_t, std::string> responses;
  for (const Json& g : v.golden) responses[g["key"].get<int64_t>()] = g["response"];
  std::vector<Json> rows =
      read_jsonl(source_dir() / "tests/tasks/functions/ifeval_nlp_golden.jsonl");
  ASSERT_GT(rows.size(), 2000u);
  size_t ok_sent = 0, ok_words = 0, ok_upper = 0, ok_tokens = 0, ok_lang = 0, ok_probs = 0;
  for (const Json& row : rows) {
    std::string text =
        loose_variants(responses.at(row["key"].get<int64_t>())).at(row["variant"].get<size_t>());
    std::string where =
        std::to_string(row["key"].get<int64_t>()) + "/" + std::to_string(row["variant"].get<int>());
    size_t sentences = count_sentences(text);
    if (sentences == row["sentences"].get<size_t>())
      ++ok_sent;
    else
      ADD_FAILURE() << where << " sentences " << sentences << " vs " << row["sentences"];
    size_t words = count_words(text);
    if (words == row["words"].get<size_t>())
      ++ok_words;
    else
      ADD_FAILURE() << where << " words " << words << " vs " << row["words"];
    std::vector<std::string> toks = word_tokenize(text);
    size_t upper = 0;
    for (const std::string& t : toks) upper += py_isupper(t);
    if (upper == row["upper"].get<size_t>())
      ++ok_upper;
    else
      ADD_FAILURE() << where << " upper tokens " << upper << " vs " << row["upper"];
    if (toks.size() == row["tokens"].get<size_t>())
      ++ok_tokens;
    else
      ADD_FAILURE() << where << " tokens " << toks.size() << " vs " << row["tokens"];
    std::optional<std::string> lang = detect_language(text, 0);
    Json got_lang = lang ? Json(*lang) : Json(nullptr);
    if (got_lang == row["lang"])
      ++ok_lang;
    else
      ADD_FAILURE() << where << " lang " << got_lang << " vs " << row["lang"];
    Json probs = Json::array();
    for (const auto& [l, p] : detect_language_probabilities(text, 0)) probs.push_back({l, p});
    if (probs == row["langs"])
      ++ok_probs;
    else
      ADD_FAILURE() << where << " langs " << probs.dump() << " vs " << row["langs"].dump();
  }
  std::cout << "[ifeval-nlp] " << rows.size() << " texts: sentences " << ok_sent << ", words "
            << ok_words << ", upper " << ok_upper << ", tokens " << ok_tokens << ", lang "
            << ok_lang << ", probabilities (bit-exact) " << ok_probs << "\n";
}

std::string ascii_map(const std::string& s, bool upper) {
  std::string out = s;
  for (char& c : out) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

// The reference's process_results on responses that fail many instructions (cross-paired,
// truncated, case-changed; see scripts/gen_ifeval_reference_variants.py), global RNG seeded 0.
TEST(IfevalTest, MatchesReferenceOnPerturbedResponses) {
  LMEVAL_REQUIRE_SHARED("data/ifeval/golden_gpt4_verdicts.jsonl");
  const Verdicts& v = verdicts();
  std::vector<Json> rows =
      read_jsonl(source_dir() / "tests/tasks/functions/ifeval_reference_variants.jsonl");
  ASSERT_EQ(rows.size(), 4 * v.golden.size());
  std::vector<std::string> responses;
  for (const Json& g : v.golden) responses.push_back(g["response"].get<std::string>());
  PyRandom rng(0);
  size_t row = 0, same_docs = 0, same_inst = 0, total_inst = 0;
  for (size_t i = 0; i < v.golden.size(); ++i) {
    const Json& doc = v.inputs.at(v.golden[i]["key"].get<int64_t>());
    const std::string& own = responses[i];
    std::vector<std::string> lines;
    size_t pos = 0;
    while (true) {
      size_t e = own.find('\n', pos);
      lines.push_back(own.substr(pos, e == std::string::npos ? e : e - pos));
      if (e == std::string::npos) break;
      pos = e + 1;
    }
    std::string half;
    for (size_t k = 0; k < std::max<size_t>(1, lines.size() / 2); ++k)
      half += (k ? "\n" : "") + lines[k];
    std::vector<std::string> variants = {responses[(i + 1) % responses.size()], half,
                                         ascii_map(own, true), ascii_map(own, false)};
    for (size_t k = 0; k < variants.size(); ++k, ++row) {
      const Json& want = rows[row];
      ASSERT_EQ(want["key"], v.golden[i]["key"]);
      ASSERT_EQ(want["variant"].get<size_t>(), k);
      Json got = process_results(doc, variants[k], rng);
      Json want_res = want;
      want_res.erase("key");
      want_res.erase("variant");
      if (got == want_res)
        ++same_docs;
      else
        ADD_FAILURE() << "key " << want["key"] << " variant " << k << ": " << got.dump()
                      << " vs reference " << want_res.dump();
      for (const char* m : {"inst_level_strict_acc", "inst_level_loose_acc"}) {
        total_inst += want_res[m].size();
        for (size_t j = 0; j < want_res[m].size() && j < got[m].size(); ++j)
          same_inst += got[m][j] == want_res[m][j];
      }
    }
  }
  std::cout << "[ifeval-variants] documents identical " << same_docs << "/" << rows.size()
            << ", instruction verdicts identical " << same_inst << "/" << total_inst << "\n";
}

// The Hub rows (every kwargs object has all 24 keys, null where absent) score the same.
TEST(IfevalTest, HubRowsWithNullKwargsScoreTheSame) {
  LMEVAL_REQUIRE_SHARED("hf_data/wis-k/instruction-following-eval/default/train.jsonl");
  LMEVAL_REQUIRE_SHARED("data/ifeval/golden_gpt4_verdicts.jsonl");
  const Verdicts& v = verdicts();
  std::vector<Json> hub =
      read_jsonl(shared_dir() / "hf_data/wis-k/instruction-following-eval/default/train.jsonl");
  ASSERT_EQ(hub.size(), v.golden.size());
  PyRandom a(0), b(0);
  for (size_t i = 0; i < hub.size(); ++i) {
    ASSERT_EQ(hub[i]["key"], v.golden[i]["key"]);
    ASSERT_EQ(hub[i]["kwargs"][0].size(), 24u);
    const std::string response = v.golden[i]["response"].get<std::string>();
    EXPECT_EQ(process_results(hub[i], response, a),
              process_results(v.inputs.at(hub[i]["key"].get<int64_t>()), response, b))
        << "key " << hub[i]["key"];
  }
}

// The reference's per-document metrics in its samples file for the project's dummy model
// (goldens/samples/leaderboard_ifeval__default.jsonl: first 20 documents, Hub-format kwargs).
TEST(IfevalTest, MatchesReferenceSamplesOfDummyModelRun) {
  LMEVAL_REQUIRE_SHARED("goldens/samples/leaderboard_ifeval__default.jsonl");
  std::vector<Json> rows =
      read_jsonl(shared_dir() / "goldens/samples/leaderboard_ifeval__default.jsonl");
  ASSERT_EQ(rows.size(), 20u);
  PyRandom rng(0);
  for (const Json& row : rows) {
    Json got = process_results(row["doc"], row["filtered_resps"][0].get<std::string>(), rng);
    for (const char* m : {"prompt_level_strict_acc", "inst_level_strict_acc",
                          "prompt_level_loose_acc", "inst_level_loose_acc"})
      EXPECT_EQ(got[m], row[m]) << "doc_id " << row["doc_id"] << " " << m;
  }
}

// The reference on hand-made corner cases for every instruction id, with given and with missing
// arguments (drawn from the global random generator, seeded 0): scripts/gen_ifeval_edge_cases.py.
TEST(IfevalTest, MatchesReferenceOnEdgeCases) {
  Json g = Json::parse(read_file(source_dir() / "tests/tasks/functions/ifeval_edge_cases.json"));
  const Json& responses = g["responses"];
  PyRandom rng(0);
  size_t same = 0, total = 0;
  for (size_t d = 0; d < g["docs"].size(); ++d) {
    const Json& doc = g["docs"][d];
    for (size_t r = 0; r < responses.size(); ++r) {
      Json got = process_results(doc, responses[r].get<std::string>(), rng);
      Json want = g["results"][d][r];
      Json have = Json::array({got["inst_level_strict_acc"][0], got["inst_level_loose_acc"][0]});
      ++total;
      if (have == want)
        ++same;
      else
        ADD_FAILURE() << doc["instruction_id_list"][0] << " " << doc["kwargs"][0].dump()
                      << " on response " << r << ": " << have << " vs reference " << want;
    }
  }
  std::cout << "[ifeval-edge] identical " << same << "/" << total << "\n";
}

Json make_doc(const std::string& id, const Json& kwargs) {
  return Json{{"key", 7},
              {"prompt", "Say it."},
              {"instruction_id_list", Json::array({id})},
              {"kwargs", Json::array({kwargs})}};
}

TEST(IfevalTest, StrictAndLooseOnHandMadeResponses) {
  PyRandom rng(0);
  // An empty (or blank) response follows nothing, not even no_comma.
  Json r = process_results(make_doc("punctuation:no_comma", Json::object()), " \n ", rng);
  EXPECT_EQ(r.dump(), R"({"prompt_level_strict_acc":false,"inst_level_strict_acc":[false],)"
                      R"("prompt_level_loose_acc":false,"inst_level_loose_acc":[false]})");
  // Loose removes the first line ("Sure, here it is:") and then the comma is gone.
  r = process_results(make_doc("punctuation:no_comma", Json::object()),
                      "Sure, here it is:\nno commas here", rng);
  EXPECT_FALSE(r["prompt_level_strict_acc"].get<bool>());
  EXPECT_TRUE(r["prompt_level_loose_acc"].get<bool>());
  // Loose also strips '*': markdown bold around a quoted answer.
  Json q = make_doc("startend:quotation", Json::object());
  r = process_results(q, "**\"quoted\"**", rng);
  EXPECT_FALSE(r["inst_level_strict_acc"][0].get<bool>());
  EXPECT_TRUE(r["inst_level_loose_acc"][0].get<bool>());
  // json_format accepts fenced JSON.
  r = process_results(make_doc("detectable_format:json_format", Json::object()),
                      "```json\n{\"a\": [1, 2]}\n```", rng);
  EXPECT_TRUE(r["prompt_level_strict_acc"].get<bool>());
  // Falsy kwargs are dropped: num_highlights 0 -> random.randint(1, 4) from the generator.
  Json h = make_doc("detectable_format:number_highlighted_sections", Json{{"num_highlights", 0}});
  r = process_results(h, "*one* *two* *three* *four*", rng);
  EXPECT_TRUE(r["prompt_level_strict_acc"].get<bool>());
  // Highlights count single and double stars; "**" alone is empty, so "**bold**" counts once.
  Json h2 = make_doc("detectable_format:number_highlighted_sections", Json{{"num_highlights", 2}});
  EXPECT_FALSE(process_results(h2, "**bold** text", rng)["prompt_level_strict_acc"].get<bool>());
  EXPECT_TRUE(process_results(h2, "*a* **b** *c*", rng)["prompt_level_strict_acc"].get<bool>());
  EXPECT_FALSE(process_results(h2, "** ** *x*", rng)["prompt_level_strict_acc"].get<bool>());
  // Sentences (Punkt: "Dr." is an abbreviation) and words.
  Json s = make_doc("length_constraints:number_sentences",
                    Json{{"num_sentences", 3}, {"relation", "less than"}});
  EXPECT_TRUE(
      process_results(s, "Dr. Smith came. He left.", rng)["prompt_level_strict_acc"].get<bool>());
  EXPECT_EQ(count_sentences("Dr. Smith came. He left."), 2u);
  EXPECT_EQ(count_words("it's a well-known fact"), 6u);
  // Capital words: NLTK splits "DON'T" into "DO" and "N'T".
  std::vector<std::string> toks = word_tokenize("I DON'T KNOW.");
  EXPECT_EQ(toks, (std::vector<std::string>{"I", "DO", "N'T", "KNOW", "."}));
  // Bytes that are not UTF-8 are read as U+FFFD, as Python's errors="replace" would.
  Json w =
      make_doc("length_constraints:number_words", Json{{"num_words", 2}, {"relation", "at least"}});
  EXPECT_TRUE(
      process_results(w, "caf\xc3 ok \xff done", rng)["prompt_level_strict_acc"].get<bool>());
  // Language detection.
  EXPECT_EQ(detect_language("Das ist ein kurzer deutscher Satz über das Wetter."), "de");
  EXPECT_EQ(detect_language("12345 !!!"), std::nullopt);
  Json lc = make_doc("change_case:english_lowercase", Json::object());
  // No letters at all: islower() is false, so not followed (langdetect is not reached).
  EXPECT_FALSE(process_results(lc, "123", rng)["prompt_level_strict_acc"].get<bool>());
  EXPECT_TRUE(process_results(lc, "this is all lower case english text about the weather",
                              rng)["prompt_level_strict_acc"]
                  .get<bool>());
}

TEST(IfevalTest, AggregatesInstructionLevelAccuracy) {
  std::vector<Json> items = {Json::array({true, false}), Json::array({true}),
                             Json::array({false, false, true})};
  EXPECT_DOUBLE_EQ(agg_inst_level_acc(items), 3.0 / 6.0);
  EXPECT_THROW(agg_inst_level_acc({}), UserError);
  EXPECT_THROW(agg_inst_level_acc({Json::array({1})}), UserError);
}

TEST(IfevalTest, BadInstructionsAreUserErrors) {
  PyRandom rng(0);
  auto expect_error = [&](const Json& doc, const std::string& needle) {
    try {
      process_results(doc, "response", rng);
      ADD_FAILURE() << "no error for " << doc.dump();
    } catch (const UserError& e) {
      std::string all = std::string(e.what()) + " | " + e.where().to_string();
      EXPECT_NE(all.find(needle), std::string::npos) << all;
      EXPECT_NE(all.find("doc key 7"), std::string::npos) << all;
    }
  };
  expect_error(make_doc("keywords:nonexistent", Json::object()), "keywords:nonexistent");
  expect_error(make_doc("keywords:frequency",
                        Json{{"keyword", "x"}, {"frequency", 2}, {"relation", "at most"}}),
               "at most");
  expect_error(make_doc("punctuation:no_comma", Json{{"num_words", 3}}), "num_words");
  expect_error(make_doc("keywords:existence", Json::object()), "keywords");
  expect_error(make_doc("keywords:existence", Json{{"keywords", "notalist"}}), "keywords");
  expect_error(make_doc("length_constraints:number_words", Json{{"num_words", "ten"}}),
               "num_words");
  expect_error(make_doc("language:response_language", Json{{"language", "xx"}}), "xx");
  expect_error(make_doc("combination:repeat_prompt", Json::object()), "prompt_to_repeat");
  expect_error(make_doc("keywords:existence", Json{{"keywords", Json::array({"(unclosed"})}}),
               "keywords");
  Json doc = make_doc("punctuation:no_comma", Json::object());
  doc["kwargs"] = Json::array();
  expect_error(doc, "kwargs");
}

}  // namespace
}  // namespace lmeval::ifeval
