// tests/fixtures/hf_ckpt (scripts/gen_ckpt_fixtures.py, scripts/gen_peft_fixtures.py): its folders,
// its goldens and the next-token log-probs they are compared with.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "models/hf/transformer.hpp"
#include "support/test_support.hpp"

namespace lmeval::hf::testing {

inline std::filesystem::path ckpt_fixtures() {
  return lmeval::testing::source_dir() / "tests" / "fixtures" / "hf_ckpt";
}

inline nlohmann::json ckpt_goldens() {
  return nlohmann::json::parse(lmeval::testing::read_file(ckpt_fixtures() / "goldens.json"));
}

// The adapters of scripts/gen_peft_fixtures.py (DoRA, IA3, LoHa) over the same base models.
inline nlohmann::json peft_goldens() {
  return nlohmann::json::parse(lmeval::testing::read_file(ckpt_fixtures() / "peft_goldens.json"));
}

// float32 on the CPU whatever the checkpoint's dtype, as the goldens were made.
inline LoadOptions f32() {
  LoadOptions o;
  o.dtype = "float32";
  o.device = "cpu";
  return o;
}

// Next-token log-probs of the golden inputs, [input][position].
inline std::vector<std::vector<double>> next_token_logprobs(Transformer& model,
                                                            const nlohmann::json& inputs) {
  std::vector<std::vector<double>> out;
  const int64_t V = model.config().vocab_size;
  for (const auto& in : inputs) {
    const auto ids = in.get<std::vector<Token>>();
    const std::vector<float> lp = model.full_logprobs({ids}, {}, {});
    auto& row = out.emplace_back();
    for (size_t i = 0; i + 1 < ids.size(); ++i) row.push_back(lp[i * V + ids[i + 1]]);
  }
  return out;
}

inline double max_diff(const std::vector<std::vector<double>>& got, const nlohmann::json& want) {
  double d = 0;
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    EXPECT_EQ(got[i].size(), want[i].size());
    for (size_t j = 0; j < got[i].size() && j < want[i].size(); ++j)
      d = std::max(d, std::abs(got[i][j] - want[i][j].get<double>()));
  }
  return d;
}

// Writes `from` (a safetensors file) to `to` with each tensor renamed by `rename`.
inline void rename_safetensors(const std::filesystem::path& from, const std::filesystem::path& to,
                               const std::function<std::string(const std::string&)>& rename) {
  const std::string bytes = lmeval::testing::read_file(from);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  const auto header = nlohmann::ordered_json::parse(bytes.substr(8, n));
  nlohmann::ordered_json renamed = nlohmann::ordered_json::object();
  for (const auto& [k, v] : header.items()) renamed[k == "__metadata__" ? k : rename(k)] = v;
  const std::string h = renamed.dump();
  std::string out(8, '\0');
  const uint64_t len = h.size();
  std::memcpy(out.data(), &len, 8);
  std::ofstream(to, std::ios::binary | std::ios::trunc) << out << h << bytes.substr(8 + n);
}

}  // namespace lmeval::hf::testing
