// --shard I/N parsing, the weighted split, and merge's checks that the parts fit together.
#include "lmeval/models/shard.hpp"

#include <gtest/gtest.h>

#include "lmeval/core/error.hpp"

using namespace lmeval;

TEST(Models_Shard, ParsesIOverN) {
  EXPECT_EQ(parse_shard_spec("1/4").index, 1);
  EXPECT_EQ(parse_shard_spec("4/4").count, 4);
  for (const char* bad : {"0/4", "5/4", "1/0", "4", "/4", "1/", "a/b", "-1/2", "1/2/3", " 1/2"})
    EXPECT_THROW(parse_shard_spec(bad), UserError) << bad;
}

TEST(Models_Shard, SplitsContiguouslyByWeight) {
  // Equal weights: halves.
  EXPECT_EQ(assign_parts({1, 1, 1, 1}, 2), (std::vector<int>{0, 0, 1, 1}));
  // One heavy request (10 of 20) fills the first half alone.
  EXPECT_EQ(assign_parts({10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 2),
            (std::vector<int>{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
  // Midpoints 1.5, 4.5, 7.5 of 9 with three parts: one each.
  EXPECT_EQ(assign_parts({3, 3, 3}, 3), (std::vector<int>{0, 1, 2}));
  // More parts than requests: some parts are empty, none out of range.
  EXPECT_EQ(assign_parts({5, 5}, 4), (std::vector<int>{1, 3}));
  // No weight at all: by position.
  EXPECT_EQ(assign_parts({0, 0, 0, 0}, 2), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_TRUE(assign_parts({}, 3).empty());
}

namespace {

Json part(int i, int n, Json config = {{"tasks", {"t"}}}) {
  config["shard_index"] = i;
  config["shard_count"] = n;
  return {{"lm_eval_partial", 1},
          {"shard", {i, n}},
          {"config", config},
          {"model", Json::object()},
          {"calls", Json::array()}};
}

std::string merge_error(const std::vector<Json>& parts) {
  std::vector<std::string> names;
  for (size_t i = 0; i < parts.size(); ++i) names.push_back("part" + std::to_string(i) + ".json");
  try {
    make_replay_lm(parts, names);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Models_Shard, MergeRefusesPartsThatDoNotFit) {
  EXPECT_EQ(merge_error({part(2, 2), part(1, 2)}), "");
  EXPECT_NE(merge_error({part(1, 3), part(3, 3)}).find("parts missing: 2/3"), std::string::npos);
  EXPECT_NE(merge_error({part(1, 2), part(1, 2)}).find("given twice"), std::string::npos);
  EXPECT_NE(merge_error({part(1, 2), part(2, 3)}).find("does not belong"), std::string::npos);
  EXPECT_NE(
      merge_error({part(1, 2), part(2, 2, {{"tasks", {"other"}}})}).find("another configuration"),
      std::string::npos);
  EXPECT_NE(merge_error({part(1, 1), Json{{"results", {}}}}).find("not a partial results file"),
            std::string::npos);
}

TEST(Models_Shard, MergeRefusesUnansweredRequests) {
  Json a = part(1, 2), b = part(2, 2);
  Json call = {{"type", "loglikelihood"}, {"requests", 2}, {"answers", Json::array()}};
  a["calls"].push_back(call);
  b["calls"].push_back(call);
  a["calls"][0]["answers"].push_back(Json::array({0, "k", Json::array({-1.0, true})}));
  EXPECT_NE(merge_error({a, b}).find("no part answered loglikelihood request 1"),
            std::string::npos);
}
