// langdetect 1.0.9's detector (a port of Shuyo Nakatani's language-detection): text cleaning,
// n-gram extraction and the randomised naive-Bayes trials, with its 55 language profiles.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <unordered_map>

#include "lmeval/core/py_random.hpp"
#include "lmeval/core/unicode.hpp"
#include "lmeval/tasks/functions/ifeval.hpp"
#include "tasks/functions/ifeval/pcre.hpp"

namespace lmeval::ifeval {

namespace data {
extern const char* const kLangdetectProfiles;
extern const char* const kLangdetectKanji;
extern const char* const kLangdetectVietnamese;
}  // namespace data

namespace langdetect {

constexpr double kAlphaDefault = 0.5;
constexpr double kAlphaWidth = 0.05;
constexpr int kIterationLimit = 1000;
constexpr double kProbThreshold = 0.1;
constexpr double kConvThreshold = 0.99999;
constexpr double kBaseFreq = 10000;
constexpr int kTrials = 7;
constexpr size_t kMaxTextLength = 10000;

struct Model {
  std::vector<std::string> langs;
  // word_lang_prob_map, sparse: for each n-gram the (language, freq / n_words[len-1]) pairs.
  std::unordered_map<std::u32string, uint32_t> index;
  std::vector<std::vector<std::pair<uint32_t, double>>> probs;
  std::unordered_map<char32_t, char32_t> cjk_map;
  std::u32string vi_alphabet, vi_dmarks;
  std::vector<std::u32string> vi_normalized;  // by diacritical mark
};

int b64_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 36;
  if (c == '+') return 62;
  return 63;
}

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t e = s.find('\n', pos);
    if (e == std::string_view::npos) e = s.size();
    out.push_back(s.substr(pos, e - pos));
    pos = e + 1;
  }
  return out;
}

const Model& model() {
  static const Model* m = [] {
    auto* q = new Model();
    std::vector<std::string_view> lines = split_lines(data::kLangdetectProfiles);
    size_t i = 0;
    std::vector<std::array<double, 3>> n_words;
    for (; i < lines.size() && !lines[i].empty(); ++i) {
      std::string line(lines[i]);
      size_t a = line.find(' ');
      q->langs.push_back(line.substr(0, a));
      std::array<double, 3> n{};
      size_t pos = a + 1;
      for (int k = 0; k < 3; ++k) {
        size_t e = line.find(' ', pos);
        n[k] = static_cast<double>(std::stoll(line.substr(pos, e - pos)));
        pos = e + 1;
      }
      n_words.push_back(n);
    }
    q->index.reserve(lines.size());
    q->probs.reserve(lines.size());
    for (++i; i < lines.size(); ++i) {
      std::string_view line = lines[i];
      if (line.empty()) continue;
      size_t tab = line.find('\t');
      std::u32string gram = unicode::decode(line.substr(0, tab));
      std::vector<std::pair<uint32_t, double>> entries;
      size_t pos = tab + 1;
      while (pos < line.size()) {
        size_t e = line.find(' ', pos);
        if (e == std::string_view::npos) e = line.size();
        uint32_t lang = static_cast<uint32_t>(b64_digit(line[pos]));
        uint64_t count = 0;
        for (size_t k = pos + 1; k < e; ++k) count = count * 64 + b64_digit(line[k]);
        size_t len = gram.size();
        // add_profile: only 1..3-grams get a probability (others stay 0.0 but are "present").
        double p =
            (len >= 1 && len <= 3) ? static_cast<double>(count) / n_words[lang][len - 1] : 0.0;
        entries.emplace_back(lang, p);
        pos = e + 1;
      }
      q->index.emplace(gram, static_cast<uint32_t>(q->probs.size()));
      q->probs.push_back(std::move(entries));
    }
    for (std::string_view cls : split_lines(data::kLangdetectKanji)) {
      std::u32string c = unicode::decode(cls);
      if (c.empty()) continue;
      for (char32_t ch : c) q->cjk_map[ch] = c[0];
    }
    std::vector<std::string_view> vi = split_lines(data::kLangdetectVietnamese);
    q->vi_alphabet = unicode::decode(vi.at(0));
    q->vi_dmarks = unicode::decode(vi.at(1));
    for (size_t k = 2; k < 7; ++k) q->vi_normalized.push_back(unicode::decode(vi.at(k)));
    return q;
  }();
  return *m;
}

// NGram.normalize (by the Unicode block of ch).
char32_t normalize(char32_t ch, const Model& m) {
  if (ch <= 0x7f) {
    if (ch < 'A' || (ch > 'Z' && ch < 'a') || ch > 'z') return ' ';
    return ch;
  }
  if (ch <= 0xff) {
    if (ch == 0xa0 || ch == 0xab || ch == 0xb0 || ch == 0xbb) return ' ';
    return ch;
  }
  if (ch >= 0x180 && ch <= 0x24f) {  // Latin Extended-B (Romanian comma -> cedilla)
    if (ch == 0x219) return 0x15f;
    if (ch == 0x21b) return 0x163;
    return ch;
  }
  if (ch >= 0x2000 && ch <= 0x206f) return ' ';                         // General Punctuation
  if (ch >= 0x600 && ch <= 0x6ff) return ch == 0x6cc ? 0x64a : ch;      // Arabic
  if (ch >= 0x1e00 && ch <= 0x1eff) return ch >= 0x1ea0 ? 0x1ec3 : ch;  // Latin Ext. Additional
  if (ch >= 0x3040 && ch <= 0x309f) return 0x3042;                      // Hiragana
  if (ch >= 0x30a0 && ch <= 0x30ff) return 0x30a2;                      // Katakana
  if ((ch >= 0x3100 && ch <= 0x312f) || (ch >= 0x31a0 && ch <= 0x31bf)) return 0x3105;  // Bopomofo
  if (ch >= 0x4e00 && ch <= 0x9fff) {  // CJK Unified Ideographs
    auto it = m.cjk_map.find(ch);
    return it == m.cjk_map.end() ? ch : it->second;
  }
  if (ch >= 0xac00 && ch <= 0xd7af) return 0xac00;  // Hangul Syllables
  return ch;
}

// NGram.normalize_vi: a letter followed by a combining mark -> the precomposed letter.
std::u32string normalize_vi(const std::u32string& text, const Model& m) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (i + 1 < text.size()) {
      size_t a = m.vi_alphabet.find(text[i]);
      size_t d = m.vi_dmarks.find(text[i + 1]);
      if (a != std::u32string::npos && d != std::u32string::npos) {
        out += m.vi_normalized[d][a];
        ++i;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

bool is_upper(char32_t c) { return detail::py_char_isupper(c); }

std::vector<double> detect_block(std::string_view input, int64_t seed, bool& no_features) {
  const Model& m = model();
  // Detector.append
  static const detail::Pcre* url_re = new detail::Pcre("https?://[-_.?&~;+=/#0-9A-Za-z]{1,2076}");
  static const detail::Pcre* mail_re =
      new detail::Pcre("[-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}");
  // Neither pattern can match without "http" / "@"; skip the scans then.
  std::string cleaned(input);
  if (cleaned.find("http") != std::string::npos) cleaned = url_re->sub(cleaned, " ");
  if (cleaned.find('@') != std::string::npos) cleaned = mail_re->sub(cleaned, " ");
  std::u32string t = normalize_vi(unicode::decode(cleaned), m);
  std::u32string text;
  char32_t pre = 0;
  for (size_t i = 0; i < std::min(t.size(), kMaxTextLength); ++i) {
    char32_t ch = t[i];
    if (ch != ' ' || pre != ' ') text += ch;
    pre = ch;
  }
  // cleaning_text (its Latin-Extended-Additional test compares a block number with a name, so
  // every character from U+0300 on counts as non-Latin).
  size_t latin = 0, non_latin = 0;
  for (char32_t ch : text) {
    if (ch >= 'A' && ch <= 'z') {
      ++latin;
    } else if (ch >= 0x300) {
      ++non_latin;
    }
  }
  if (latin * 2 < non_latin) {
    std::u32string kept;
    for (char32_t ch : text)
      if (ch < 'A' || ch > 'z') kept += ch;
    text = std::move(kept);
  }
  // _extract_ngrams
  std::vector<uint32_t> ngrams;
  // NGram.grams: at most 3 characters, starting as " ".
  char32_t grams[3] = {' ', 0, 0};
  size_t len = 1;
  bool capitalword = false;
  std::u32string w;
  for (char32_t raw : text) {
    char32_t ch = normalize(raw, m);
    char32_t last = grams[len - 1];
    bool skip = false;
    if (last == ' ') {
      grams[0] = ' ';
      len = 1;
      capitalword = false;
      if (ch == ' ') skip = true;
    } else if (len >= 3) {
      grams[0] = grams[1];
      grams[1] = grams[2];
      len = 2;
    }
    if (!skip) {
      grams[len++] = ch;
      if (is_upper(ch)) {
        if (is_upper(last)) capitalword = true;
      } else {
        capitalword = false;
      }
    }
    if (capitalword) continue;
    for (size_t n = 1; n <= 3; ++n) {
      if (len < n) break;
      w.assign(grams + (len - n), n);
      if (n == 1 && w[0] == ' ') continue;
      auto it = m.index.find(w);
      if (it != m.index.end()) ngrams.push_back(it->second);
    }
  }
  size_t nl = m.langs.size();
  std::vector<double> langprob(nl, 0.0);
  if (ngrams.empty()) {
    no_features = true;
    return langprob;
  }
  no_features = false;
  PyRandom rng(seed);
  std::optional<double> gauss_next;
  auto gauss = [&]() {
    double z;
    if (gauss_next) {
      z = *gauss_next;
      gauss_next.reset();
    } else {
      double x2pi = rng.random() * (2.0 * M_PI);
      double g2rad = std::sqrt(-2.0 * std::log(1.0 - rng.random()));
      z = std::cos(x2pi) * g2rad;
      gauss_next = std::sin(x2pi) * g2rad;
    }
    return 0.0 + z * 1.0;
  };
  std::vector<double> prob(nl), mult(nl);
  for (int trial = 0; trial < kTrials; ++trial) {
    std::fill(prob.begin(), prob.end(), 1.0 / static_cast<double>(nl));
    double alpha = kAlphaDefault + gauss() * kAlphaWidth;
    double weight = alpha / kBaseFreq;
    for (int i = 0;; ++i) {
      uint32_t word = ngrams[rng.randbelow(ngrams.size())];
      std::fill(mult.begin(), mult.end(), weight + 0.0);
      for (const auto& [lang, p] : m.probs[word]) mult[lang] = weight + p;
      for (size_t k = 0; k < nl; ++k) prob[k] *= mult[k];
      if (i % 5 == 0) {
        double sum = 0.0;
        for (double p : prob) sum += p;
        double maxp = 0.0;
        for (double& p : prob) {
          p = p / sum;
          if (maxp < p) maxp = p;
        }
        if (maxp > kConvThreshold || i >= kIterationLimit) break;
      }
    }
    for (size_t j = 0; j < nl; ++j) langprob[j] += prob[j] / kTrials;
  }
  return langprob;
}

}  // namespace langdetect

std::vector<std::pair<std::string, double>> detect_language_probabilities(std::string_view text,
                                                                          int64_t seed) {
  bool no_features = false;
  std::vector<double> p = langdetect::detect_block(text, seed, no_features);
  std::vector<std::pair<std::string, double>> out;
  if (no_features) return out;
  const auto& langs = langdetect::model().langs;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] > langdetect::kProbThreshold) out.emplace_back(langs[i], p[i]);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::optional<std::string> detect_language(std::string_view text, int64_t seed) {
  bool no_features = false;
  std::vector<double> p = langdetect::detect_block(text, seed, no_features);
  if (no_features) return std::nullopt;
  const auto& langs = langdetect::model().langs;
  std::string best = "unknown";
  double best_p = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] > langdetect::kProbThreshold && p[i] > best_p) {
      best = langs[i];
      best_p = p[i];
    }
  }
  return best;
}

}  // namespace lmeval::ifeval
