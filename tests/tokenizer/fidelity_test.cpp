// Token ids and decoded text compared with Hugging Face `tokenizers` (and PyPI sentencepiece)
// goldens made by scripts/tokenizer/gen_goldens.py, for every corpus string.
#include <gtest/gtest.h>
#include <zlib.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <fstream>
#include <sstream>

#include "lmeval/core/error.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"
#include "support/test_support.hpp"
#include "tokenizer/cached_tokenizer.hpp"

namespace {

using lmeval::TokenId;
using nlohmann::json;
namespace fs = std::filesystem;

fs::path goldens() { return lmeval::testing::source_dir() / "tests/tokenizer/goldens"; }

std::vector<std::string> read_lines(const fs::path& p) {
  std::string data;
  if (p.extension() == ".gz") {
    gzFile f = gzopen(p.string().c_str(), "rb");
    if (!f) return {};
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof(buf))) > 0) data.append(buf, static_cast<size_t>(n));
    gzclose(f);
  } else {
    data = lmeval::testing::read_file(p);
  }
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < data.size()) {
    size_t nl = data.find('\n', start);
    if (nl == std::string::npos) nl = data.size();
    lines.push_back(data.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

const std::vector<std::string>& corpus() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> t;
    for (const auto& line : read_lines(goldens() / "corpus.jsonl")) {
      t.push_back(json::parse(line)["text"].get<std::string>());
    }
    return t;
  }();
  return texts;
}

// Expands a golden decoded field: null = the text, [p] = p + text, a string = itself.
std::string expand(const json& field, const std::string& text) {
  if (field.is_null()) return text;
  if (field.is_array()) return field[0].get<std::string>() + text;
  return field.get<std::string>();
}

std::string show(const std::vector<TokenId>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size() && i < 40; ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s + (ids.size() > 40 ? ",...]" : "]");
}

struct Case {
  std::string name;
  std::string path;  // relative to ../shared, or to the goldens folder when synthetic
  bool synthetic;
  std::string golden = {};  // goldens file stem when not `name`
  std::string config = {};  // tokenizer_config.json to put beside a copy of `path`
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class HfFidelity : public ::testing::TestWithParam<Case> {};

TEST_P(HfFidelity, IdsAndDecodeMatchHuggingFace) {
  const Case& c = GetParam();
  fs::path path;
  if (c.synthetic) {
    path = goldens() / c.path;
  } else {
    LMEVAL_REQUIRE_SHARED(c.path);
    path = lmeval::testing::shared_dir() / c.path;
  }
  if (!c.config.empty()) {
    fs::path dir =
        fs::temp_directory_path() / ("lmeval_tok_" + c.name + std::to_string(::getpid()));
    fs::create_directories(dir);
    fs::copy_file(path, dir / path.filename(), fs::copy_options::overwrite_existing);
    std::ofstream(dir / "tokenizer_config.json") << c.config;
    path = dir / path.filename();
  }
  const lmeval::Tokenizer* tok = &lmeval::testing::cached_tokenizer(path);
  auto rows = read_lines(goldens() / ((c.golden.empty() ? c.name : c.golden) + ".jsonl.gz"));
  const auto& texts = corpus();
  ASSERT_EQ(rows.size(), texts.size())
      << "goldens out of date: rerun scripts/tokenizer/gen_goldens.py";
  size_t ok_ids = 0, ok_ns = 0, ok_dec = 0, ok_skip = 0, shown = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    json row = json::parse(rows[i]);
    auto want = row[0].get<std::vector<TokenId>>();
    auto want_ns = row[1].is_null() ? want : row[1].get<std::vector<TokenId>>();
    auto got = tok->encode(texts[i], true);
    auto got_ns = tok->encode(texts[i], false);
    std::string dec = tok->decode(want, false), skip = tok->decode(want, true);
    // The goldens are the `tokenizers` decode; decode() adds transformers' clean-up when the
    // folder's tokenizer_config.json asks for it (GPT-2).
    auto hf = [&](const json& f) {
      std::string t = expand(f, texts[i]);
      return tok->clean_up_tokenization_spaces() ? lmeval::clean_up_tokenization(t) : t;
    };
    bool a = got == want, b = got_ns == want_ns, d = dec == hf(row[2]), e = skip == hf(row[3]);
    ok_ids += a;
    ok_ns += b;
    ok_dec += d;
    ok_skip += e;
    if ((!a || !b || !d || !e) && shown++ < 5) {
      ADD_FAILURE() << c.name << " string " << i << " " << json(texts[i]).dump() << "\n  ids  got "
                    << show(got) << "\n       want " << show(want) << "\n  no-special got "
                    << show(got_ns) << "\n       want " << show(want_ns) << "\n  decode got "
                    << json(dec).dump() << " want " << json(hf(row[2])).dump();
    }
  }
  size_t n = rows.size();
  std::cout << "[ fidelity ] " << c.name << ": ids " << ok_ids << "/" << n << ", ids_no_special "
            << ok_ns << "/" << n << ", decode " << ok_dec << "/" << n << ", decode_skip_special "
            << ok_skip << "/" << n << "\n";
  EXPECT_EQ(ok_ids, n);
  EXPECT_EQ(ok_ns, n);
  EXPECT_EQ(ok_dec, n);
  EXPECT_EQ(ok_skip, n);
}

INSTANTIATE_TEST_SUITE_P(
    Tokenizers, HfFidelity,
    ::testing::Values(
        Case{"gpt2", "tokenizers/gpt2/tokenizer.json", false},
        Case{"gpt-neox-20b", "tokenizers/gpt-neox-20b/tokenizer.json", false},
        Case{"llama-3", "tokenizers/llama-3/tokenizer.json", false},
        Case{"qwen3", "tokenizers/qwen3/tokenizer.json", false},
        Case{"mistral", "tokenizers/mistral/tokenizer.json", false},
        Case{"mistral-legacy", "tokenizers/mistral-legacy/tokenizer.json", false},
        Case{"stories260K", "models/stories260K/tokenizer.json", false},
        Case{"syn-bert-wordpiece", "synthetic/syn-bert-wordpiece/tokenizer.json", true},
        Case{"syn-unigram", "synthetic/syn-unigram/tokenizer.json", true},
        Case{"syn-wordlevel", "synthetic/syn-wordlevel/tokenizer.json", true},
        Case{"syn-bpe-suffix", "synthetic/syn-bpe-suffix/tokenizer.json", true},
        Case{"syn-split-bytelevel", "synthetic/syn-split-bytelevel/tokenizer.json", true},
        Case{"syn-bytefallback", "synthetic/syn-bytefallback/tokenizer.json", true},
        Case{"syn-unigram-bytefallback", "synthetic/syn-unigram-bytefallback/tokenizer.json", true},
        // tokenizer.model alone (read natively), against the HF fast tokenizers
        // transformers converts it to: Metaspace "first" (legacy false) ...
        Case{"sp-mistral", "tokenizers/mistral/tokenizer.model", false, "mistral"},
        Case{"sp-stories260K", "models/stories260K/tokenizer.model", false, "stories260K"},
        // ... and the legacy layout (Prepend + Replace normalizer).
        Case{"sp-mistral-legacy", "tokenizers/mistral/tokenizer.model", false, "mistral-legacy",
             R"({"legacy": true, "bos_token": "<s>",
                           "eos_token": "</s>", "unk_token": "<unk>"})"}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string n = info.param.name;
      for (char& ch : n) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

// The vectors shipped in ../shared (620 strings each, made there with tokenizers 0.23.3).
TEST(HfSharedVectors, AllSixTokenizers) {
  LMEVAL_REQUIRE_SHARED("tokenizers/hf_reference_tokenizations");
  for (std::string name :
       {"gpt2", "gpt-neox-20b", "llama-3", "qwen3", "mistral", "mistral-legacy"}) {
    const lmeval::Tokenizer* tok = &lmeval::testing::cached_tokenizer(
        lmeval::testing::shared_dir() / "tokenizers" / name / "tokenizer.json");
    size_t n = 0, ok = 0;
    for (const auto& line :
         read_lines(lmeval::testing::shared_dir() / "tokenizers/hf_reference_tokenizations" /
                    (name + ".jsonl"))) {
      json r = json::parse(line);
      std::string text = r["text"];
      auto ids = r["ids"].get<std::vector<TokenId>>();
      auto hf = [&](const std::string& t) {
        return tok->clean_up_tokenization_spaces() ? lmeval::clean_up_tokenization(t) : t;
      };
      bool same = tok->encode(text, true) == ids &&
                  tok->encode(text, false) == r["ids_no_special"].get<std::vector<TokenId>>() &&
                  tok->decode(ids, false) == hf(r["decoded"].get<std::string>()) &&
                  tok->decode(ids, true) == hf(r["decoded_skip_special"].get<std::string>());
      ++n;
      ok += same;
      if (!same) ADD_FAILURE() << name << " id " << r["id"] << " " << json(text).dump();
    }
    std::cout << "[ fidelity ] shared " << name << ": " << ok << "/" << n << " identical\n";
    EXPECT_EQ(ok, n);
  }
}

TEST(SentencePieceFidelity, Stories260KReference) {
  LMEVAL_REQUIRE_SHARED("models/stories260K/reference/tokenizer_reference.json");
  auto dir = lmeval::testing::shared_dir() / "models/stories260K";
  json ref = json::parse(lmeval::testing::read_file(dir / "reference/tokenizer_reference.json"));
  auto sp = lmeval::load_tokenizer(dir / "tokenizer.model");
  auto hf = lmeval::load_tokenizer(dir);
  for (const auto& s : ref["strings"]) {
    std::string text = s["text"];
    EXPECT_EQ(hf->encode(text, true), s["hf_ids_add_special_tokens"].get<std::vector<TokenId>>())
        << text;
    EXPECT_EQ(hf->encode(text, false), s["hf_ids_no_special"].get<std::vector<TokenId>>()) << text;
    EXPECT_EQ(sp->encode(text, true), s["hf_ids_add_special_tokens"].get<std::vector<TokenId>>())
        << text;
    EXPECT_EQ(sp->decode(s["hf_ids_add_special_tokens"].get<std::vector<TokenId>>(), true),
              s["hf_decode"].get<std::string>())
        << text;
  }
  EXPECT_EQ(sp->bos_token().id, 1);
  EXPECT_EQ(sp->encode("Once upon a time", true).front(), 1);
}

}  // namespace
