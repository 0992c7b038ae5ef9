// Bad input never crashes: random bytes to encode, random ids to decode, truncated and
// byte-flipped tokenizer.json files (each must load or raise UserError).
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "lmeval/core/error.hpp"
#include "lmeval/tokenizer/tokenizer.hpp"
#include "support/test_support.hpp"
#include "tokenizer/cached_tokenizer.hpp"

namespace {

namespace fs = std::filesystem;

fs::path synthetic(const std::string& name) {
  return lmeval::testing::source_dir() / "tests/tokenizer/goldens/synthetic" / name /
         "tokenizer.json";
}

TEST(TokenizerRobustness, RandomBytesAndIds) {
  std::mt19937 rng(7);
  for (const char* name : {"syn-bert-wordpiece", "syn-unigram", "syn-wordlevel", "syn-bpe-suffix",
                           "syn-split-bytelevel", "syn-bytefallback"}) {
    const auto& tok = lmeval::testing::cached_tokenizer(synthetic(name));
    for (int i = 0; i < 300; ++i) {
      std::string s(rng() % 64, '\0');
      for (char& c : s) c = static_cast<char>(rng() % 256);
      std::vector<lmeval::TokenId> ids;
      ASSERT_NO_THROW(ids = tok.encode(s, true)) << name;
      ASSERT_NO_THROW(tok.decode(ids, false));
      std::vector<lmeval::TokenId> junk(rng() % 20);
      for (auto& id : junk) id = static_cast<lmeval::TokenId>(rng() % 2000) - 100;
      ASSERT_NO_THROW(tok.decode(junk, true));
    }
  }
}

TEST(TokenizerRobustness, TruncatedAndCorruptedFiles) {
  std::string full = lmeval::testing::read_file(synthetic("syn-bpe-suffix"));
  fs::path p =
      fs::temp_directory_path() / ("lmeval_tok_robust_" + std::to_string(::getpid()) + ".json");
  std::mt19937 rng(11);
  int loaded = 0, refused = 0;
  for (int i = 0; i < 300; ++i) {
    std::string s = full;
    if (i < 150) {
      s.resize(rng() % full.size());
    } else {
      for (int k = 0; k < 3; ++k) s[rng() % s.size()] = "{}[]\",:0a \\"[rng() % 11];
    }
    std::ofstream(p, std::ios::binary) << s;
    try {
      auto tok = lmeval::load_tokenizer(p);
      tok->encode("Hello world, [MASK] the end.", true);
      ++loaded;
    } catch (const lmeval::UserError& e) {
      EXPECT_FALSE(e.where().file.empty()) << e.what();
      ++refused;
    } catch (const lmeval::RuntimeError&) {
      ++loaded;  // loaded, but this corrupted vocabulary cannot encode the probe text
    }
  }
  fs::remove(p);
  EXPECT_GE(refused, 150);
  std::cout << "[ robustness ] corrupted tokenizer.json: " << refused << " refused, " << loaded
            << " loaded\n";
}

}  // namespace
