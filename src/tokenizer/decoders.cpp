// tokenizer.json post-processors (TemplateProcessing, ByteLevel, Roberta/Bert, Sequence) and
// decoders (ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, WordPiece, BPEDecoder,
// Sequence).
#include <memory>

#include "tokenizer/pipeline.hpp"
#include "tokenizer/regex.hpp"
#include "tokenizer/text.hpp"

namespace lmeval::tok {

namespace {

class WrapProcessor : public PostProcessor {
 public:
  WrapProcessor(std::vector<TokenId> prefix, std::vector<TokenId> suffix)
      : prefix_(std::move(prefix)), suffix_(std::move(suffix)) {}
  void process(std::vector<TokenId>& ids) const override {
    if (!prefix_.empty()) ids.insert(ids.begin(), prefix_.begin(), prefix_.end());
    ids.insert(ids.end(), suffix_.begin(), suffix_.end());
  }

 private:
  std::vector<TokenId> prefix_, suffix_;
};

class SequenceProcessor : public PostProcessor {
 public:
  explicit SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> items)
      : items_(std::move(items)) {}
  void process(std::vector<TokenId>& ids) const override {
    for (const auto& p : items_) p->process(ids);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> items_;
};

TokenId pair_id(const Json& j, const Where& w, const char* key) {
  const Json& v = req(j, w, key);
  if (!v.is_array() || v.size() != 2 || !v[1].is_number_integer()) {
    fail(w / key, "expected [token, id]");
  }
  return v[1].get<TokenId>();
}

std::unique_ptr<PostProcessor> make_template(const Json& j, const Where& w) {
  const Json& single = req(j, w, "single");
  Where sw = w / "single";
  if (!single.is_array()) fail(sw, "expected an array of template pieces");
  const Json* specials = j.contains("special_tokens") ? &j["special_tokens"] : nullptr;
  std::vector<TokenId> prefix, suffix;
  bool seen_a = false;
  for (size_t i = 0; i < single.size(); ++i) {
    const Json& piece = single[i];
    Where pw = sw[i];
    expect_object(piece, pw);
    if (piece.contains("Sequence")) {
      std::string id = req_string(piece["Sequence"], pw / "Sequence", "id");
      if (id != "A") fail(pw / "Sequence" / "id", "a single-sequence template may only use $A");
      seen_a = true;
    } else if (piece.contains("SpecialToken")) {
      std::string id = req_string(piece["SpecialToken"], pw / "SpecialToken", "id");
      if (!specials || !specials->contains(id)) {
        fail(pw / "SpecialToken" / "id", "special token '" + id + "' is not in special_tokens");
      }
      const Json& st = (*specials)[id];
      Where stw = w / "special_tokens" / id;
      const Json& ids = req(st, stw, "ids");
      if (!ids.is_array()) fail(stw / "ids", "expected an array of ids");
      for (size_t k = 0; k < ids.size(); ++k) {
        if (!ids[k].is_number_integer()) fail((stw / "ids")[k], "expected an integer id");
        (seen_a ? suffix : prefix).push_back(ids[k].get<TokenId>());
      }
    } else {
      fail(pw, "a template piece must be {\"Sequence\": ...} or {\"SpecialToken\": ...}");
    }
  }
  return std::make_unique<WrapProcessor>(std::move(prefix), std::move(suffix));
}

// ---- decoders ----

class ByteLevelDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const auto& t : tokens) {
      size_t start = bytes.size();
      bool ok = true;
      size_t i = 0;
      while (i < t.size()) {
        int b = char_to_byte(next_cp(t, i));
        if (b < 0) {
          ok = false;
          break;
        }
        bytes += static_cast<char>(b);
      }
      if (!ok) {
        bytes.resize(start);
        bytes += t;
      }
    }
    tokens.assign(1, utf8_lossy(bytes));
  }
};

class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(char32_t rep, bool prepend) : rep_(rep), prepend_(prepend) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t k = 0; k < tokens.size(); ++k) {
      const std::string& t = tokens[k];
      std::string out;
      out.reserve(t.size());
      size_t i = 0;
      while (i < t.size()) {
        size_t start = i;
        char32_t c = next_cp(t, i);
        if (c == rep_) {
          if (!(k == 0 && prepend_)) out += ' ';
        } else {
          out.append(t, start, i - start);
        }
      }
      tokens[k] = std::move(out);
    }
  }

 private:
  char32_t rep_;
  bool prepend_;
};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class ByteFallbackDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    auto flush = [&] {
      if (pending.empty()) return;
      if (is_valid_utf8(pending)) {
        out.push_back(pending);
      } else {
        for (size_t i = 0; i < pending.size(); ++i) out.emplace_back("\xef\xbf\xbd");
      }
      pending.clear();
    };
    for (auto& t : tokens) {
      int byte = -1;
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
        // u8::from_str_radix accepts an optional leading '+'.
        if (t[3] == '+') {
          byte = hex_digit(t[4]);
        } else {
          int hi = hex_digit(t[3]), lo = hex_digit(t[4]);
          if (hi >= 0 && lo >= 0) byte = hi * 16 + lo;
        }
      }
      if (byte >= 0) {
        pending += static_cast<char>(byte);
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens.swap(out);
  }
};

class FuseDecoder : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const auto& t : tokens) all += t;
    tokens.clear();
    tokens.push_back(std::move(all));
  }
};

class StripDecoder : public Decoder {
 public:
  StripDecoder(char32_t content, size_t start, size_t stop)
      : content_(content), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) {
      std::vector<std::pair<size_t, char32_t>> chars;  // byte offset, code point
      size_t i = 0;
      while (i < t.size()) {
        size_t b = i;
        chars.emplace_back(b, next_cp(t, i));
      }
      size_t start_cut = 0;
      for (size_t k = 0; k < start_ && k < chars.size(); ++k) {
        if (chars[k].second != content_) break;
        start_cut = k + 1;
      }
      size_t stop_cut = chars.size();
      for (size_t k = 0; k < stop_ && k < chars.size(); ++k) {
        size_t idx = chars.size() - k - 1;
        if (chars[idx].second != content_) break;
        stop_cut = idx;
      }
      if (stop_cut < start_cut) stop_cut = start_cut;
      size_t b = start_cut < chars.size() ? chars[start_cut].first : t.size();
      size_t e = stop_cut < chars.size() ? chars[stop_cut].first : t.size();
      t = t.substr(b, e - b);
    }
  }

 private:
  char32_t content_;
  size_t start_, stop_;
};

class ReplaceDecoder : public Decoder {
 public:
  explicit ReplaceDecoder(std::unique_ptr<Normalizer> replace) : replace_(std::move(replace)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) replace_->normalize(t);
  }

 private:
  std::unique_ptr<Normalizer> replace_;
};

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  size_t pos = 0;
  std::string out;
  bool any = false;
  size_t prev = 0;
  while ((pos = s.find(from, prev)) != std::string::npos) {
    any = true;
    out.append(s, prev, pos - prev);
    out += to;
    prev = pos + from.size();
  }
  if (!any) return;
  out.append(s, prev, std::string::npos);
  s = std::move(out);
}

class WordPieceDecoder : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup)
      : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string& t = tokens[i];
      if (i != 0) {
        if (!prefix_.empty() && t.compare(0, prefix_.size(), prefix_) == 0) {
          t.erase(0, prefix_.size());
        } else if (prefix_.empty()) {
          // replacen("", "", 1) leaves the token as it is.
        } else {
          t.insert(0, " ");
        }
      }
      if (cleanup_) {
        replace_all(t, " .", ".");
        replace_all(t, " ?", "?");
        replace_all(t, " !", "!");
        replace_all(t, " ,", ",");
        replace_all(t, " ' ", "'");
        replace_all(t, " n't", "n't");
        replace_all(t, " 'm", "'m");
        replace_all(t, " do not", " don't");
        replace_all(t, " 's", "'s");
        replace_all(t, " 've", "'ve");
        replace_all(t, " 're", "'re");
      }
    }
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

class BpeDecoder : public Decoder {
 public:
  explicit BpeDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      replace_all(tokens[i], suffix_, i + 1 == tokens.size() ? "" : " ");
    }
  }

 private:
  std::string suffix_;
};

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> items)
      : items_(std::move(items)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& d : items_) d->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> items_;
};

char32_t one_char(const std::string& s, const Where& w) {
  size_t i = 0;
  if (s.empty()) fail(w, "expected one character");
  char32_t c = next_cp(s, i);
  if (i != s.size()) fail(w, "expected one character, found '" + s + "'");
  return c;
}

}  // namespace

std::unique_ptr<Normalizer> make_replace_normalizer(const Json& j, const Where& w);

std::unique_ptr<PostProcessor> make_wrap_processor(std::vector<TokenId> prefix,
                                                   std::vector<TokenId> suffix) {
  return std::make_unique<WrapProcessor>(std::move(prefix), std::move(suffix));
}

std::unique_ptr<PostProcessor> make_post_processor(const Json& j, const Where& w,
                                                   const Model& model) {
  if (j.is_null()) return nullptr;
  std::string type = req_string(j, w, "type");
  if (type == "TemplateProcessing") return make_template(j, w);
  if (type == "ByteLevel") return nullptr;  // only trims offsets
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    return std::make_unique<WrapProcessor>(std::vector<TokenId>{pair_id(j, w, "cls")},
                                           std::vector<TokenId>{pair_id(j, w, "sep")});
  }
  if (type == "Sequence") {
    const Json& items = req(j, w, "processors");
    Where iw = w / "processors";
    if (!items.is_array()) fail(iw, "expected an array");
    std::vector<std::unique_ptr<PostProcessor>> v;
    for (size_t i = 0; i < items.size(); ++i) {
      auto p = make_post_processor(items[i], iw[i], model);
      if (p) v.push_back(std::move(p));
    }
    return std::make_unique<SequenceProcessor>(std::move(v));
  }
  fail(w / "type", "unsupported post-processor '" + type + "'",
       "TemplateProcessing, ByteLevel, RobertaProcessing, BertProcessing, Sequence");
}

std::unique_ptr<Decoder> make_decoder(const Json& j, const Where& w) {
  if (j.is_null()) return nullptr;
  std::string type = req_string(j, w, "type");
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "Metaspace") {
    char32_t rep = one_char(opt_string(j, w, "replacement", "\xe2\x96\x81"), w / "replacement");
    bool prepend = true;
    if (j.contains("prepend_scheme") && !j["prepend_scheme"].is_null()) {
      prepend = req_string(j, w, "prepend_scheme") != "never";
    } else if (j.contains("add_prefix_space")) {
      prepend = opt_bool(j, w, "add_prefix_space", true);
    }
    return std::make_unique<MetaspaceDecoder>(rep, prepend);
  }
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip") {
    return std::make_unique<StripDecoder>(one_char(req_string(j, w, "content"), w / "content"),
                                          static_cast<size_t>(opt_int(j, w, "start", 0)),
                                          static_cast<size_t>(opt_int(j, w, "stop", 0)));
  }
  if (type == "Replace") return std::make_unique<ReplaceDecoder>(make_replace_normalizer(j, w));
  if (type == "WordPiece") {
    return std::make_unique<WordPieceDecoder>(opt_string(j, w, "prefix", "##"),
                                              opt_bool(j, w, "cleanup", true));
  }
  if (type == "BPEDecoder") {
    return std::make_unique<BpeDecoder>(opt_string(j, w, "suffix", "</w>"));
  }
  if (type == "Sequence") {
    const Json& items = req(j, w, "decoders");
    Where iw = w / "decoders";
    if (!items.is_array()) fail(iw, "expected an array");
    std::vector<std::unique_ptr<Decoder>> v;
    for (size_t i = 0; i < items.size(); ++i) {
      auto d = make_decoder(items[i], iw[i]);
      if (d) v.push_back(std::move(d));
    }
    return std::make_unique<SequenceDecoder>(std::move(v));
  }
  fail(w / "type", "unsupported decoder '" + type + "'",
       "ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, WordPiece, BPEDecoder, Sequence");
}

}  // namespace lmeval::tok
