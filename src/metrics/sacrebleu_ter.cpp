// sacrebleu's corpus TER with its defaults (metrics/ter.py TER, metrics/lib_ter.py): the Tercom
// algorithm with sacrebleu's beam edit distance, greedy shifts and the same tie-breaking, so the
// edits counted are sacrebleu's even where Tercom's heuristics are arbitrary.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "lmeval/core/unicode.hpp"
#include "lmeval/metrics/sacrebleu.hpp"

namespace lmeval {

namespace {

constexpr int64_t kInf = 10000000000000000;  // lib_ter._INT_INFINITY
constexpr int kMaxShiftSize = 10;
constexpr int kMaxShiftDist = 50;
constexpr int kBeamWidth = 25;
constexpr int kMaxShiftCandidates = 1000;

// Words as ids into one vocabulary; `text` gives them back for the string comparison that breaks
// the last ties between shift candidates (Python compares the shifted word lists).
using Words = std::vector<int>;

struct Vocabulary {
  std::unordered_map<std::string, int> ids;
  std::vector<std::string> text;
  Words encode(const std::vector<std::string>& words) {
    Words out;
    out.reserve(words.size());
    for (const auto& w : words) {
      auto [it, added] = ids.emplace(w, static_cast<int>(text.size()));
      if (added) text.push_back(w);
      out.push_back(it->second);
    }
    return out;
  }
};

struct Cell {
  int64_t cost;
  char op;  // ' ' match, 's' substitution, 'd' hypothesis word dropped, 'i' reference word added,
            // 'x' unset
};

// BeamEditDistance._edit_distance without its row cache (the cache only saves work: every call of
// one TER computation has the same hypothesis length, so cached rows equal recomputed ones).
// Returns the distance and the trace of operations turning the hypothesis into the reference.
std::pair<int64_t, std::string> beam_edit_distance(const Words& h, const Words& r) {
  const size_t nh = h.size(), nr = r.size();
  std::vector<std::vector<Cell>> dist(nh + 1, std::vector<Cell>(nr + 1, Cell{kInf, 'x'}));
  for (size_t j = 0; j <= nr; ++j) dist[0][j] = {static_cast<int64_t>(j), 'i'};
  const double ratio = nh ? static_cast<double>(nr) / static_cast<double>(nh) : 1.0;
  const int64_t beam =
      kBeamWidth < ratio / 2 ? static_cast<int64_t>(std::ceil(ratio / 2 + kBeamWidth)) : kBeamWidth;
  for (size_t i = 1; i <= nh; ++i) {
    const auto diag = static_cast<int64_t>(std::floor(static_cast<double>(i) * ratio));
    const int64_t min_j = std::max<int64_t>(0, diag - beam);
    int64_t max_j = std::min<int64_t>(static_cast<int64_t>(nr) + 1, diag + beam);
    if (i == nh) max_j = static_cast<int64_t>(nr) + 1;
    for (int64_t jj = min_j; jj < max_j; ++jj) {
      const auto j = static_cast<size_t>(jj);
      if (j == 0) {
        dist[i][0] = {dist[i - 1][0].cost + 1, 'd'};
        continue;
      }
      const bool same = h[i - 1] == r[j - 1];
      // Strictly smaller wins, in this order: ties keep substitution/match, then deletion.
      const Cell ops[3] = {{dist[i - 1][j - 1].cost + (same ? 0 : 1), same ? ' ' : 's'},
                           {dist[i - 1][j].cost + 1, 'd'},
                           {dist[i][j - 1].cost + 1, 'i'}};
      for (const Cell& c : ops)
        if (dist[i][j].cost > c.cost) dist[i][j] = c;
    }
  }
  std::string trace;
  size_t i = nh, j = nr;
  while (i > 0 || j > 0) {
    const char op = dist[i][j].op;
    trace.push_back(op);
    if (op == ' ' || op == 's') {
      --i;
      --j;
    } else if (op == 'i') {
      --j;
    } else {  // 'd'; 'x' cannot be reached from the finite corner
      --i;
    }
  }
  return {dist[nh][nr].cost, std::string(trace.rbegin(), trace.rend())};
}

// Python slice words[a:b] with its clipping.
void append_slice(Words& out, const Words& w, int64_t a, int64_t b) {
  const auto n = static_cast<int64_t>(w.size());
  a = std::clamp<int64_t>(a, 0, n);
  b = std::clamp<int64_t>(b, 0, n);
  if (a < b) out.insert(out.end(), w.begin() + a, w.begin() + b);
}

// lib_ter._perform_shift, its three cases literally.
Words perform_shift(const Words& w, int64_t start, int64_t length, int64_t target) {
  Words out;
  out.reserve(w.size());
  const auto n = static_cast<int64_t>(w.size());
  if (target < start) {
    append_slice(out, w, 0, target);
    append_slice(out, w, start, start + length);
    append_slice(out, w, target, start);
    append_slice(out, w, start + length, n);
  } else if (target > start + length) {
    append_slice(out, w, 0, start);
    append_slice(out, w, start + length, target);
    append_slice(out, w, start, start + length);
    append_slice(out, w, target, n);
  } else {
    append_slice(out, w, 0, start);
    append_slice(out, w, start + length, length + target);
    append_slice(out, w, start, start + length);
    append_slice(out, w, length + target, n);
  }
  return out;
}

struct Candidate {
  int64_t gain, length, neg_start, neg_target;
  Words words;
};

// Python's tuple comparison of (gain, length, -start, -target, shifted words).
bool greater(const Candidate& a, const Candidate& b, const Vocabulary& vocab) {
  auto ka = std::tie(a.gain, a.length, a.neg_start, a.neg_target);
  auto kb = std::tie(b.gain, b.length, b.neg_start, b.neg_target);
  if (ka != kb) return ka > kb;
  for (size_t k = 0; k < a.words.size() && k < b.words.size(); ++k) {
    if (a.words[k] == b.words[k]) continue;
    return vocab.text[a.words[k]] > vocab.text[b.words[k]];  // byte order = code point order
  }
  return a.words.size() > b.words.size();
}

struct ShiftResult {
  int64_t gain;
  Words words;
};

// lib_ter._shift: the best single shift of a run of hypothesis words, or a gain of 0.
ShiftResult best_shift(const Words& h, const Words& r, int& checked, const Vocabulary& vocab) {
  auto [pre_score, trace] = beam_edit_distance(h, r);
  // trace_to_alignment over the flipped trace: reference position -> hypothesis position, and
  // which words of each side take part in an edit.
  std::vector<std::optional<int64_t>> align(r.size());
  std::vector<int> ref_err, hyp_err;
  int64_t ph = -1, pr = -1;
  for (char op : trace) {
    if (op == ' ' || op == 's') {
      align[static_cast<size_t>(++pr)] = ++ph;
      hyp_err.push_back(op == 's');
      ref_err.push_back(op == 's');
    } else if (op == 'd') {  // flipped: a hypothesis word inserted
      ++ph;
      hyp_err.push_back(1);
    } else {  // 'i', flipped: a reference word deleted
      align[static_cast<size_t>(++pr)] = ph;
      ref_err.push_back(1);
    }
  }
  auto any_error = [](const std::vector<int>& err, int64_t a, int64_t len) {
    for (int64_t k = a; k < a + len && k < static_cast<int64_t>(err.size()); ++k)
      if (err[static_cast<size_t>(k)]) return true;
    return false;
  };

  std::optional<Candidate> best;
  const auto nh = static_cast<int64_t>(h.size()), nr = static_cast<int64_t>(r.size());
  // lib_ter._find_shifted_pairs: every matching run up to kMaxShiftSize words, at most
  // kMaxShiftDist apart, in this order.
  for (int64_t sh = 0; sh < nh && checked < kMaxShiftCandidates; ++sh) {
    for (int64_t sr = 0; sr < nr && checked < kMaxShiftCandidates; ++sr) {
      if (std::abs(sr - sh) > kMaxShiftDist) continue;
      int64_t length = 0;
      while (h[static_cast<size_t>(sh + length)] == r[static_cast<size_t>(sr + length)] &&
             length < kMaxShiftSize) {
        ++length;
        const bool last = nh == sh + length || nr == sr + length;
        if (any_error(hyp_err, sh, length) && any_error(ref_err, sr, length)) {
          const int64_t at = *align[static_cast<size_t>(sr)];
          if (!(sh <= at && at < sh + length)) {
            int64_t prev_idx = -1;
            for (int64_t offset = -1; offset < length; ++offset) {
              int64_t idx;
              if (sr + offset == -1) {
                idx = 0;
              } else if (sr + offset < nr && align[static_cast<size_t>(sr + offset)]) {
                idx = *align[static_cast<size_t>(sr + offset)] + 1;
              } else {
                break;
              }
              if (idx == prev_idx) continue;
              prev_idx = idx;
              Words shifted = perform_shift(h, sh, length, idx);
              Candidate c{pre_score - beam_edit_distance(shifted, r).first, length, -sh, -idx,
                          std::move(shifted)};
              ++checked;
              if (!best || greater(c, *best, vocab)) best = std::move(c);
            }
          }
        }
        // The reference checks the candidate limit after each yielded pair.
        if (checked >= kMaxShiftCandidates || last) break;
      }
    }
  }
  if (!best) return {0, h};
  return {best->gain, std::move(best->words)};
}

// lib_ter.translation_edit_rate: (edits, reference length).
std::pair<int64_t, size_t> translation_edit_rate(const Words& h, const Words& r,
                                                 const Vocabulary& vocab) {
  if (r.empty()) return {static_cast<int64_t>(h.size()), 0};
  int64_t shifts = 0;
  Words input = h;
  int checked = 0;
  while (true) {
    ShiftResult s = best_shift(input, r, checked, vocab);
    if (checked >= kMaxShiftCandidates || s.gain <= 0) break;
    ++shifts;
    input = std::move(s.words);
  }
  return {shifts + beam_edit_distance(input, r).first, r.size()};
}

// TercomTokenizer with TER's defaults (not normalized, punctuation kept, case-insensitive), after
// TER._preprocess_segment's rstrip: lowercased words.
std::vector<std::string> tercom_words(const std::string& line) {
  return unicode::py_split(unicode::py_lower(unicode::py_rstrip(line)));
}

}  // namespace

double sacrebleu_corpus_ter(const std::vector<std::string>& hyps,
                            const std::vector<std::vector<std::string>>& ref_streams) {
  Vocabulary vocab;
  int64_t total_edits = 0;
  double ref_length = 0;  // sum_of_lists: int edits, float average reference lengths, in order
  for (size_t i = 0; i < hyps.size(); ++i) {
    const Words h = vocab.encode(tercom_words(hyps[i]));
    int64_t best = kInf;
    size_t lengths = 0;
    for (const auto& stream : ref_streams) {
      // The references are preprocessed twice (Metric._cache_references, then
      // TER._extract_reference_info); lowercasing twice can differ from once, so do it twice.
      std::string once;
      for (const auto& w : tercom_words(stream.at(i))) once += (once.empty() ? "" : " ") + w;
      auto [edits, len] = translation_edit_rate(h, vocab.encode(tercom_words(once)), vocab);
      lengths += len;
      best = std::min(best, edits);
    }
    total_edits += best;
    ref_length += static_cast<double>(lengths) / static_cast<double>(ref_streams.size());
  }
  double score;
  if (ref_length > 0)
    score = static_cast<double>(total_edits) / ref_length;
  else if (total_edits > 0)
    score = 1.0;
  else
    score = 0.0;
  return 100 * score;
}

}  // namespace lmeval
