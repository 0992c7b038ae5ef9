// plan_prefixes (prefix_plan.hpp): which prompt copies which earlier prompt's first tokens.
#include "models/hf/prefix_plan.hpp"

#include <gtest/gtest.h>

#include <map>

namespace lmeval::hf {
namespace {

constexpr int64_t kMin = 8;

// `header` tokens of group g, then `tail` tokens unique to the prompt.
std::vector<Token> prompt(int g, int header, int id, int tail) {
  std::vector<Token> t;
  for (int k = 0; k < header; ++k) t.push_back(1000 * (g + 1) + k);
  for (int k = 0; k < tail; ++k) t.push_back(100000 + 100 * id + k);
  return t;
}

std::vector<int64_t> full_lengths(const std::vector<std::vector<Token>>& ps) {
  std::vector<int64_t> n;
  for (const auto& p : ps) n.push_back(static_cast<int64_t>(p.size()));
  return n;
}

// Replays a plan: each prompt copies only from a live entry holding at least what it copies,
// entries are released once, and the live entries' tokens stay under the bound. Returns the
// tokens the plan computes.
int64_t replay(const std::vector<std::vector<Token>>& ps, const std::vector<int64_t>& n,
               const std::vector<PrefixStep>& plan, int64_t bound) {
  std::map<int64_t, int64_t> live;  // entry -> kept tokens
  int64_t computed = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const PrefixStep& s = plan[i];
    if (s.source >= 0) {
      EXPECT_LT(s.source, static_cast<int64_t>(i));
      EXPECT_TRUE(live.count(s.source)) << "prompt " << i << " copies a released entry";
      EXPECT_LE(s.copy, live[s.source]);
      EXPECT_LE(s.copy, n[i]);
      for (int64_t t = 0; t < s.copy; ++t)
        EXPECT_EQ(ps[i][t], ps[s.source][t]) << "prompt " << i << " token " << t;
    }
    computed += n[i] - s.copy;
    for (const int64_t e : s.release) EXPECT_EQ(live.erase(e), 1u) << "entry " << e;
    if (s.keep > 0) {
      EXPECT_LE(s.keep, n[i]);
      live[static_cast<int64_t>(i)] = s.keep;
    }
    int64_t held = 0;
    for (const auto& [e, k] : live) held += k;
    EXPECT_LE(held, bound) << "after prompt " << i;
  }
  EXPECT_TRUE(live.empty()) << live.size() << " entries never released";
  return computed;
}

// Seven few-shot headers interleaved by the admission order (as length-sorted subtasks are):
// each header is computed once, however many are in use at a time.
TEST(PrefixPlan, InterleavedHeadersAreEachComputedOnce) {
  std::vector<std::vector<Token>> ps;
  for (int round = 0; round < 4; ++round)
    for (int g = 0; g < 7; ++g) ps.push_back(prompt(g, 40, round * 7 + g, 10));
  const auto n = full_lengths(ps);
  const auto plan = plan_prefixes(ps, n, kMin, 1 << 20);
  EXPECT_EQ(replay(ps, n, plan, 1 << 20), 7 * 40 + 28 * 10);
  for (size_t i = 0; i < ps.size(); ++i) {
    if (i < 7) {
      EXPECT_EQ(plan[i].source, -1);
      EXPECT_EQ(plan[i].keep, 40);
    } else {
      EXPECT_EQ(plan[i].source, static_cast<int64_t>(i % 7));
      EXPECT_EQ(plan[i].copy, 40);
      EXPECT_EQ(plan[i].keep, 0);
    }
  }
  // Each header's entry goes with its group's last prompt.
  for (int g = 0; g < 7; ++g) EXPECT_EQ(plan[21 + g].release, std::vector<int64_t>{g});
}

// Entries past the bound are not kept: the prompts they would have served compute their own.
TEST(PrefixPlan, KeptTokensStayUnderTheBound) {
  std::vector<std::vector<Token>> ps;
  for (int round = 0; round < 3; ++round)
    for (int g = 0; g < 3; ++g) ps.push_back(prompt(g, 40, round * 3 + g, 10));
  const auto n = full_lengths(ps);
  const auto plan = plan_prefixes(ps, n, kMin, 90);  // two 40-token entries fit, not three
  EXPECT_EQ(replay(ps, n, plan, 90), 2 * 40 + 3 * 40 + 9 * 10);
  EXPECT_EQ(plan[2].keep, 0);
  EXPECT_EQ(plan[5].source, -1);
}

// A prompt that shares more with a later prompt than the entry it copied from keeps its own
// (longer) entry for it; the shorter entry goes when nobody is left for it.
TEST(PrefixPlan, ALongerCommonPrefixTakesOver) {
  std::vector<Token> h = prompt(0, 40, 0, 0);
  auto with = [&](std::vector<Token> mid, int id) {
    std::vector<Token> t = h;
    t.insert(t.end(), mid.begin(), mid.end());
    for (int k = 0; k < 5; ++k) t.push_back(50000 + 10 * id + k);
    return t;
  };
  const std::vector<Token> mid(20, 7), other(20, 9);
  // C shares the header only; A and B share header + mid (60 tokens).
  const std::vector<std::vector<Token>> ps = {with(other, 0), with(mid, 1), with(mid, 2)};
  const auto n = full_lengths(ps);
  const auto plan = plan_prefixes(ps, n, kMin, 1 << 20);
  EXPECT_EQ(replay(ps, n, plan, 1 << 20), 65 + 25 + 5);
  EXPECT_EQ(plan[0].keep, 40);
  EXPECT_EQ(plan[1].source, 0);
  EXPECT_EQ(plan[1].copy, 40);
  EXPECT_EQ(plan[1].keep, 60);
  EXPECT_EQ(plan[1].release, std::vector<int64_t>{0});  // B moved to prompt 1's entry
  EXPECT_EQ(plan[2].source, 1);
  EXPECT_EQ(plan[2].copy, 60);
}

// Fewer than min_shared common tokens, or a gain under it, are computed again; the copy never
// passes the prompt's prefill length (its last token is fed with the decoding step).
TEST(PrefixPlan, ShortCommonPrefixesAndLengthsBoundTheCopies) {
  const std::vector<std::vector<Token>> few = {prompt(0, 7, 0, 5), prompt(0, 7, 1, 5)};
  for (const auto& s : plan_prefixes(few, full_lengths(few), kMin, 1 << 20)) {
    EXPECT_EQ(s.source, -1);
    EXPECT_EQ(s.keep, 0);
  }
  // The same 30 tokens, prefilled to 29, 20 and 29: the copies are 20 and 29.
  const std::vector<std::vector<Token>> same(3, prompt(1, 30, 0, 0));
  const std::vector<int64_t> n = {29, 20, 29};
  const auto plan = plan_prefixes(same, n, kMin, 1 << 20);
  EXPECT_EQ(replay(same, n, plan, 1 << 20), 29);
  EXPECT_EQ(plan[1].copy, 20);
  EXPECT_EQ(plan[2].copy, 29);
  EXPECT_TRUE(plan_prefixes({}, {}, kMin, 100).empty());
}

}  // namespace
}  // namespace lmeval::hf
