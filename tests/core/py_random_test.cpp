// PyRandom against CPython's random module (goldens from scripts/gen_random_goldens.py).
#include "lmeval/core/py_random.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

using lmeval::PyRandom;

TEST(Core_PyRandom, MatchesCPython) {
  auto golden = nlohmann::json::parse(lmeval::testing::read_file(
      lmeval::testing::source_dir() / "tests/core/goldens/py_random.json"));
  ASSERT_FALSE(golden["cases"].empty());
  for (const auto& c : golden["cases"]) {
    PyRandom r(c["seed"].get<int64_t>());
    SCOPED_TRACE("seed " + c["seed"].dump());
    for (const auto& v : c["genrand"]) EXPECT_EQ(r.genrand_uint32(), v.get<uint32_t>());
    for (const auto& v : c["getrandbits_40"]) EXPECT_EQ(r.getrandbits(40), v.get<uint64_t>());
    for (const auto& v : c["random"]) EXPECT_EQ(r.random(), v.get<double>());
    for (const auto& s : c["sample"]) {
      auto got = r.sample_indices(s["n"].get<size_t>(), s["k"].get<size_t>());
      EXPECT_EQ(nlohmann::json(got), s["out"]) << "n=" << s["n"] << " k=" << s["k"];
    }
    for (const auto& s : c["choices"]) {
      auto got = r.choices_indices(s["n"].get<size_t>(), s["k"].get<size_t>());
      EXPECT_EQ(nlohmann::json(got), s["out"]);
    }
    std::vector<int> xs(12);
    for (int i = 0; i < 12; ++i) xs[i] = i;
    r.shuffle(xs);
    EXPECT_EQ(nlohmann::json(xs), c["shuffle12"]);
    std::vector<uint64_t> ns = {1, 2, 3, 1000, (1ull << 33) + 1};
    for (size_t i = 0; i < ns.size(); ++i)
      EXPECT_EQ(r.randbelow(ns[i]), c["randbelow"][i].get<uint64_t>());
  }
}

TEST(Core_PyRandom, SpecExampleSeed1234) {
  // spec §5.2: Random(1234).sample(range(5), 2) four times gives [3,0], [0,4], [4,0], [0,4].
  PyRandom r(1234);
  std::vector<std::vector<size_t>> want = {{3, 0}, {0, 4}, {4, 0}, {0, 4}};
  for (const auto& w : want) EXPECT_EQ(r.sample_indices(5, 2), w);
}

TEST(Core_PyRandom, SampleLargerThanPopulationThrows) {
  PyRandom r(0);
  EXPECT_THROW(r.sample_indices(3, 4), std::invalid_argument);
}
