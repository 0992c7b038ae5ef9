// tokenizer.json pre-tokenizers: ByteLevel, Split, Metaspace, Digits, Punctuation, Whitespace,
// WhitespaceSplit, BertPreTokenizer, CharDelimiterSplit, Sequence.
#include <functional>
#include <memory>

#include "tokenizer/pipeline.hpp"
#include "tokenizer/regex.hpp"
#include "tokenizer/text.hpp"

namespace lmeval::tok {

namespace {

// One piece of a string after a pattern search: [b, e) and whether it was a match.
struct Seg {
  size_t b, e;
  bool match;
};
using Segs = std::vector<Seg>;

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

Behavior parse_behavior(const std::string& s, const Where& w) {
  if (s == "Removed") return Behavior::kRemoved;
  if (s == "Isolated") return Behavior::kIsolated;
  if (s == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (s == "MergedWithNext") return Behavior::kMergedWithNext;
  if (s == "Contiguous") return Behavior::kContiguous;
  fail(w, "unknown split behavior '" + s + "'",
       "Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

// Covers `text` with matched and unmatched segments, in order.
void regex_segs(const Regex& re, std::string_view text, Segs& out) {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, false});
    return;
  }
  thread_local std::vector<std::pair<size_t, size_t>> m;
  m.clear();
  re.find_all(text, m);
  size_t prev = 0;
  for (auto [b, e] : m) {
    if (prev != b) out.push_back({prev, b, false});
    out.push_back({b, e, true});
    prev = e;
  }
  if (prev != text.size()) out.push_back({prev, text.size(), false});
}

// Each character satisfying `pred` is a one-character match.
template <typename Pred>
void char_segs(Pred pred, std::string_view text, Segs& out) {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, false});
    return;
  }
  size_t last = 0, i = 0;
  while (i < text.size()) {
    size_t start = i;
    char32_t c = next_cp(text, i);
    if (pred(c)) {
      if (last < start) out.push_back({last, start, false});
      out.push_back({start, i, true});
      last = i;
    }
  }
  if (i > last) out.push_back({last, i, false});
}

// Appends the pieces of `s` that `behavior` keeps (empty ones dropped).
void emit(const Split& s, Segs& segs, Behavior behavior, bool invert, Splits& out) {
  if (invert) {
    for (auto& g : segs) g.match = !g.match;
  }
  auto push = [&](size_t b, size_t e) {
    if (e > b) out.push_back(Split{s.text.substr(b, e - b), s.at_start && b == 0});
  };
  switch (behavior) {
    case Behavior::kIsolated:
      for (const auto& g : segs) push(g.b, g.e);
      break;
    case Behavior::kRemoved:
      for (const auto& g : segs) {
        if (!g.match) push(g.b, g.e);
      }
      break;
    case Behavior::kContiguous: {
      std::vector<std::pair<size_t, size_t>> acc;
      bool prev = false;
      for (const auto& g : segs) {
        if (g.match == prev && !acc.empty()) {
          acc.back().second = g.e;
        } else {
          acc.emplace_back(g.b, g.e);
        }
        prev = g.match;
      }
      for (auto [b, e] : acc) push(b, e);
      break;
    }
    case Behavior::kMergedWithPrevious: {
      std::vector<std::pair<size_t, size_t>> acc;
      bool prev = false;
      for (const auto& g : segs) {
        if (g.match && !prev && !acc.empty()) {
          acc.back().second = g.e;
        } else {
          acc.emplace_back(g.b, g.e);
        }
        prev = g.match;
      }
      for (auto [b, e] : acc) push(b, e);
      break;
    }
    case Behavior::kMergedWithNext: {
      std::vector<std::pair<size_t, size_t>> acc;
      bool prev = false;
      for (auto it = segs.rbegin(); it != segs.rend(); ++it) {
        if (it->match && !prev && !acc.empty()) {
          acc.back().first = it->b;
        } else {
          acc.emplace_back(it->b, it->e);
        }
        prev = it->match;
      }
      for (auto it = acc.rbegin(); it != acc.rend(); ++it) push(it->first, it->second);
      break;
    }
  }
}

// Replaces each split by the pieces fn produces.
template <typename Fn>
void split_each(Splits& splits, Fn&& fn) {
  Splits out;
  out.reserve(splits.size() * 2);
  for (const auto& s : splits) fn(s, out);
  splits.swap(out);
}

const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

const Regex& gpt2_regex() {
  static const Regex re(kGpt2Pattern);
  return re;
}

class ByteLevelPre : public PreTokenizer {
 public:
  ByteLevelPre(bool prefix, bool use_regex) : prefix_(prefix), use_regex_(use_regex) {}
  void pre_tokenize(Splits& splits) const override {
    if (prefix_ || use_regex_) {
      split_each(splits, [&](const Split& s, Splits& out) {
        Split src = s;
        if (prefix_ && (src.text.empty() || src.text[0] != ' ')) src.text.insert(0, " ");
        if (!use_regex_) {
          if (!src.text.empty()) out.push_back(std::move(src));
          return;
        }
        thread_local Segs segs;
        regex_segs(gpt2_regex(), src.text, segs);
        emit(src, segs, Behavior::kIsolated, false, out);
      });
    }
    for (auto& s : splits) {
      std::string mapped;
      mapped.reserve(s.text.size() * 2);
      for (char c : s.text) mapped += byte_to_char(static_cast<unsigned char>(c));
      s.text = std::move(mapped);
    }
  }

 private:
  bool prefix_, use_regex_;
};

class SplitPre : public PreTokenizer {
 public:
  SplitPre(std::unique_ptr<Regex> re, Behavior b, bool invert)
      : re_(std::move(re)), behavior_(b), invert_(invert) {}
  void pre_tokenize(Splits& splits) const override {
    split_each(splits, [&](const Split& s, Splits& out) {
      thread_local Segs segs;
      if (re_) {
        regex_segs(*re_, s.text, segs);
      } else {
        segs.clear();
        segs.push_back({0, s.text.size(), false});
      }
      emit(s, segs, behavior_, invert_, out);
    });
  }

 private:
  std::unique_ptr<Regex> re_;  // null: an empty literal pattern, which never matches
  Behavior behavior_;
  bool invert_;
};

class CharPre : public PreTokenizer {
 public:
  CharPre(std::function<bool(char32_t)> pred, Behavior b) : pred_(std::move(pred)), behavior_(b) {}
  void pre_tokenize(Splits& splits) const override {
    split_each(splits, [&](const Split& s, Splits& out) {
      thread_local Segs segs;
      char_segs(pred_, s.text, segs);
      emit(s, segs, behavior_, false, out);
    });
  }

 private:
  std::function<bool(char32_t)> pred_;
  Behavior behavior_;
};

enum class PrependScheme { kAlways, kNever, kFirst };

class MetaspacePre : public PreTokenizer {
 public:
  MetaspacePre(char32_t replacement, PrependScheme scheme, bool split)
      : replacement_(replacement), scheme_(scheme), split_(split) {
    append_utf8(rep_, replacement);
  }
  void pre_tokenize(Splits& splits) const override {
    split_each(splits, [&](const Split& s, Splits& out) {
      Split n{std::string(), s.at_start};
      n.text.reserve(s.text.size() + 8);
      for (char c : s.text) {
        if (c == ' ') {
          n.text += rep_;
        } else {
          n.text += c;
        }
      }
      bool starts = n.text.compare(0, rep_.size(), rep_) == 0;
      if (!starts &&
          (scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && s.at_start))) {
        n.text.insert(0, rep_);
      }
      if (!split_) {
        if (!n.text.empty()) out.push_back(std::move(n));
        return;
      }
      thread_local Segs segs;
      char32_t r = replacement_;
      char_segs([r](char32_t c) { return c == r; }, n.text, segs);
      emit(n, segs, Behavior::kMergedWithNext, false, out);
    });
  }

 private:
  char32_t replacement_;
  std::string rep_;
  PrependScheme scheme_;
  bool split_;
};

// `\w+|[^\w\s]+` kept, whitespace removed (regex \w and \s semantics).
class WhitespacePre : public PreTokenizer {
 public:
  void pre_tokenize(Splits& splits) const override {
    split_each(splits, [&](const Split& s, Splits& out) {
      const std::string& t = s.text;
      size_t i = 0;
      int cur = 0;  // 0 none, 1 word run, 2 other run
      size_t run_start = 0;
      auto flush = [&](size_t end) {
        if (cur != 0 && end > run_start) {
          out.push_back(Split{t.substr(run_start, end - run_start), s.at_start && run_start == 0});
        }
      };
      while (i < t.size()) {
        size_t start = i;
        char32_t c = next_cp(t, i);
        int kind = is_word_char(c) ? 1 : is_whitespace(c) ? 0 : 2;
        if (kind != cur) {
          flush(start);
          cur = kind;
          run_start = start;
        }
      }
      flush(t.size());
    });
  }
};

class SequencePre : public PreTokenizer {
 public:
  explicit SequencePre(std::vector<std::unique_ptr<PreTokenizer>> items)
      : items_(std::move(items)) {}
  void pre_tokenize(Splits& splits) const override {
    for (const auto& p : items_) p->pre_tokenize(splits);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> items_;
};

bool is_punct(char32_t c) { return is_rust_punctuation(c); }

}  // namespace

void read_pattern(const Json& j, const Where& w, std::string& literal, std::unique_ptr<Regex>& re);

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Json& j, const Where& w) {
  if (j.is_null()) return nullptr;
  std::string type = req_string(j, w, "type");
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevelPre>(opt_bool(j, w, "add_prefix_space", true),
                                          opt_bool(j, w, "use_regex", true));
  }
  if (type == "Split") {
    std::string literal;
    std::unique_ptr<Regex> re;
    read_pattern(j, w, literal, re);
    if (!re && !literal.empty()) re = std::make_unique<Regex>(regex_escape(literal));
    return std::make_unique<SplitPre>(std::move(re),
                                      parse_behavior(req_string(j, w, "behavior"), w / "behavior"),
                                      opt_bool(j, w, "invert", false));
  }
  if (type == "Metaspace") {
    std::string rep = opt_string(j, w, "replacement", "\xe2\x96\x81");
    size_t i = 0;
    if (rep.empty()) fail(w / "replacement", "replacement must be one character");
    char32_t rc = next_cp(rep, i);
    PrependScheme scheme = PrependScheme::kAlways;
    if (j.contains("prepend_scheme") && !j["prepend_scheme"].is_null()) {
      std::string ps = req_string(j, w, "prepend_scheme");
      if (ps == "always")
        scheme = PrependScheme::kAlways;
      else if (ps == "never")
        scheme = PrependScheme::kNever;
      else if (ps == "first")
        scheme = PrependScheme::kFirst;
      else
        fail(w / "prepend_scheme", "unknown prepend_scheme '" + ps + "'", "always, never, first");
    } else if (j.contains("add_prefix_space")) {
      scheme =
          opt_bool(j, w, "add_prefix_space", true) ? PrependScheme::kAlways : PrependScheme::kNever;
    }
    return std::make_unique<MetaspacePre>(rc, scheme, opt_bool(j, w, "split", true));
  }
  if (type == "Digits") {
    bool individual = opt_bool(j, w, "individual_digits", false);
    return std::make_unique<CharPre>([](char32_t c) { return is_numeric(c); },
                                     individual ? Behavior::kIsolated : Behavior::kContiguous);
  }
  if (type == "Punctuation") {
    Behavior b = Behavior::kIsolated;
    if (j.contains("behavior")) b = parse_behavior(req_string(j, w, "behavior"), w / "behavior");
    return std::make_unique<CharPre>(is_punct, b);
  }
  if (type == "Whitespace") return std::make_unique<WhitespacePre>();
  if (type == "WhitespaceSplit") {
    return std::make_unique<CharPre>([](char32_t c) { return is_whitespace(c); },
                                     Behavior::kRemoved);
  }
  if (type == "BertPreTokenizer") {
    std::vector<std::unique_ptr<PreTokenizer>> v;
    v.push_back(
        std::make_unique<CharPre>([](char32_t c) { return is_whitespace(c); }, Behavior::kRemoved));
    v.push_back(std::make_unique<CharPre>(is_punct, Behavior::kIsolated));
    return std::make_unique<SequencePre>(std::move(v));
  }
  if (type == "CharDelimiterSplit") {
    std::string d = req_string(j, w, "delimiter");
    size_t i = 0;
    if (d.empty()) fail(w / "delimiter", "delimiter must be one character");
    char32_t dc = next_cp(d, i);
    return std::make_unique<CharPre>([dc](char32_t c) { return c == dc; }, Behavior::kRemoved);
  }
  if (type == "Sequence") {
    const Json& items = req(j, w, "pretokenizers");
    Where iw = w / "pretokenizers";
    if (!items.is_array()) fail(iw, "expected an array");
    std::vector<std::unique_ptr<PreTokenizer>> v;
    for (size_t i = 0; i < items.size(); ++i) {
      auto p = make_pre_tokenizer(items[i], iw[i]);
      if (p) v.push_back(std::move(p));
    }
    return std::make_unique<SequencePre>(std::move(v));
  }
  fail(w / "type", "unsupported pre-tokenizer '" + type + "'",
       "ByteLevel, Split, Metaspace, Digits, Punctuation, Whitespace, WhitespaceSplit, "
       "BertPreTokenizer, CharDelimiterSplit, Sequence");
}

}  // namespace lmeval::tok
