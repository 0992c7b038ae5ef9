// SentencePiece tokenizer.model read and run natively (BPE models, identity normalization), with
// the conventions of Hugging Face's legacy LlamaTokenizer: special-token text is split out first,
// BOS is prepended by default. libsentencepiece is not used: Debian's build embeds protobuf 3.14,
// which aborts the process next to libtorch's protobuf 3.21.
#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <functional>
#include <queue>
#include <sstream>
#include <unordered_map>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_file.hpp"
#include "tokenizer/hf_tokenizer.hpp"
#include "tokenizer/text.hpp"

namespace lmeval::tok {

namespace {

const char* kSpace = "\xe2\x96\x81";  // U+2581

enum PieceType {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6
};

struct SpPiece {
  std::string piece;
  float score = 0;
  int type = kNormal;
};

struct SpModel {
  std::vector<SpPiece> pieces;
  int model_type = 1;  // 1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR
  bool byte_fallback = false;
  bool treat_ws_as_suffix = false;
  std::string unk_piece = "<unk>", bos_piece = "<s>", eos_piece = "</s>", pad_piece = "<pad>";
  std::string unk_surface = " \xe2\x81\x87 ";
  std::string normalizer_name;
  std::string charsmap;
  bool add_dummy_prefix = true, remove_extra_ws = true, escape_ws = true;
};

// Minimal protobuf wire-format reader.
class Wire {
 public:
  Wire(const char* p, size_t n, const std::string& file) : p_(p), end_(p + n), file_(file) {}
  bool done() const { return p_ >= end_; }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) bad();
      auto b = static_cast<unsigned char>(*p_++);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    bad();
  }
  std::string_view bytes() {
    uint64_t n = varint();
    if (n > static_cast<uint64_t>(end_ - p_)) bad();
    std::string_view s(p_, n);
    p_ += n;
    return s;
  }
  float fixed32() {
    if (end_ - p_ < 4) bad();
    float f;
    std::memcpy(&f, p_, 4);
    p_ += 4;
    return f;
  }
  void skip(int wire_type) {
    switch (wire_type) {
      case 0:
        varint();
        break;
      case 1:
        if (end_ - p_ < 8) bad();
        p_ += 8;
        break;
      case 2:
        bytes();
        break;
      case 5:
        if (end_ - p_ < 4) bad();
        p_ += 4;
        break;
      default:
        bad();
    }
  }
  [[noreturn]] void bad() const {
    throw UserError("malformed SentencePiece model (truncated or not a protobuf ModelProto)",
                    SourceLocation{file_, 0, 0, {}});
  }

 private:
  const char* p_;
  const char* end_;
  std::string file_;
};

SpModel parse_model(const std::filesystem::path& path) {
  std::string data = read_input_file(path, "sentencepiece model", "a sentencepiece model file");
  SpModel m;
  Wire w(data.data(), data.size(), path.string());
  while (!w.done()) {
    uint64_t tag = w.varint();
    int field = static_cast<int>(tag >> 3), wt = static_cast<int>(tag & 7);
    if (field == 1 && wt == 2) {
      std::string_view b = w.bytes();
      Wire p(b.data(), b.size(), path.string());
      SpPiece piece;
      while (!p.done()) {
        uint64_t t = p.varint();
        int f = static_cast<int>(t >> 3), pt = static_cast<int>(t & 7);
        if (f == 1 && pt == 2)
          piece.piece = std::string(p.bytes());
        else if (f == 2 && pt == 5)
          piece.score = p.fixed32();
        else if (f == 3 && pt == 0)
          piece.type = static_cast<int>(p.varint());
        else
          p.skip(pt);
      }
      m.pieces.push_back(std::move(piece));
    } else if (field == 2 && wt == 2) {
      std::string_view b = w.bytes();
      Wire t(b.data(), b.size(), path.string());
      while (!t.done()) {
        uint64_t tg = t.varint();
        int f = static_cast<int>(tg >> 3), tt = static_cast<int>(tg & 7);
        if (f == 3 && tt == 0)
          m.model_type = static_cast<int>(t.varint());
        else if (f == 24 && tt == 0)
          m.treat_ws_as_suffix = t.varint() != 0;
        else if (f == 35 && tt == 0)
          m.byte_fallback = t.varint() != 0;
        else if (f == 44 && tt == 2)
          m.unk_surface = std::string(t.bytes());
        else if (f == 45 && tt == 2)
          m.unk_piece = std::string(t.bytes());
        else if (f == 46 && tt == 2)
          m.bos_piece = std::string(t.bytes());
        else if (f == 47 && tt == 2)
          m.eos_piece = std::string(t.bytes());
        else if (f == 48 && tt == 2)
          m.pad_piece = std::string(t.bytes());
        else
          t.skip(tt);
      }
    } else if (field == 3 && wt == 2) {
      std::string_view b = w.bytes();
      Wire n(b.data(), b.size(), path.string());
      while (!n.done()) {
        uint64_t tg = n.varint();
        int f = static_cast<int>(tg >> 3), nt = static_cast<int>(tg & 7);
        if (f == 1 && nt == 2)
          m.normalizer_name = std::string(n.bytes());
        else if (f == 2 && nt == 2)
          m.charsmap = std::string(n.bytes());
        else if (f == 3 && nt == 0)
          m.add_dummy_prefix = n.varint() != 0;
        else if (f == 4 && nt == 0)
          m.remove_extra_ws = n.varint() != 0;
        else if (f == 5 && nt == 0)
          m.escape_ws = n.varint() != 0;
        else
          n.skip(nt);
      }
    } else {
      w.skip(wt);
    }
  }
  if (m.pieces.empty()) w.bad();
  return m;
}

class SentencePieceTokenizer : public TokenizerBase {
 public:
  SentencePieceTokenizer(const std::filesystem::path& path, TokenizerConfig config)
      : m_(parse_model(path)) {
    std::string file = path.string();
    if (m_.model_type != 2) {
      throw UserError("unsupported SentencePiece model type " + std::to_string(m_.model_type) +
                          " (only BPE, type 2, is supported natively; use a tokenizer.json)",
                      SourceLocation{file, 0, 0, "trainer_spec.model_type"});
    }
    if (!m_.charsmap.empty()) {
      throw UserError("unsupported SentencePiece normalizer '" + m_.normalizer_name +
                          "' (a precompiled charsmap); only identity normalization is supported",
                      SourceLocation{file, 0, 0, "normalizer_spec.precompiled_charsmap"});
    }
    if (m_.treat_ws_as_suffix) {
      throw UserError("unsupported SentencePiece option treat_whitespace_as_suffix",
                      SourceLocation{file, 0, 0, "trainer_spec.treat_whitespace_as_suffix"});
    }
    for (size_t i = 0; i < m_.pieces.size(); ++i) {
      const SpPiece& p = m_.pieces[i];
      auto id = static_cast<TokenId>(i);
      all_.emplace(p.piece, id);
      if (p.type == kNormal || p.type == kUserDefined || p.type == kUnused)
        pieces_.emplace(p.piece, id);
      if (p.type == kUserDefined) user_trie_.add(p.piece, i);
      if (p.type == kUnknown && unk_id_ < 0) unk_id_ = id;
      if (p.type == kByte && p.piece.size() == 6) {
        int b = std::stoi(p.piece.substr(3, 2), nullptr, 16);
        byte_ids_[b] = id;
      }
    }
    if (unk_id_ < 0) {
      throw UserError("SentencePiece model has no unknown piece", SourceLocation{file, 0, 0, {}});
    }
    auto ctrl = [&](const std::string& piece) -> std::optional<std::string> {
      auto it = all_.find(piece);
      if (it == all_.end()) return std::nullopt;
      return piece;
    };
    if (!config.bos) config.bos = ctrl(m_.bos_piece);
    if (!config.eos) config.eos = ctrl(m_.eos_piece);
    if (!config.unk) config.unk = m_.pieces[static_cast<size_t>(unk_id_)].piece;
    // transformers 5 converts without `legacy` unless the config asks for it (stories260K's
    // tokenizer.json, written by transformers 5.23, has Metaspace prepend_scheme "first").
    legacy_ = config.legacy.value_or(false);
    decoder_ = make_decoder(Json::parse(R"({"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})"),
                            Where{file, "$"});
    add_bos_ = config.add_bos_token.value_or(true);
    add_eos_ = config.add_eos_token.value_or(false);
    std::vector<std::pair<TokenId, std::string>> specials = config.added_tokens;
    for (const auto* t : {&config.bos, &config.eos, &config.unk, &config.pad}) {
      if (!*t) continue;
      auto it = all_.find(**t);
      if (it != all_.end()) specials.emplace_back(it->second, **t);
    }
    for (const auto& [id, text] : specials) {
      if (special_ids_.count(text)) continue;
      special_ids_[text] = id;
      special_text_[id] = text;
      index_.push_back(id);
      special_trie_.add(text, index_.size() - 1);
    }
    apply_config(std::move(config));
  }

  std::vector<TokenId> encode(std::string_view text, bool add_special_tokens) const override {
    std::string s = utf8_lossy(text);
    std::vector<TokenId> ids;
    if (add_special_tokens && add_bos_ && bos_.id) ids.push_back(*bos_.id);
    size_t start = 0, pos = 0;
    while (pos < s.size()) {
      size_t idx = 0;
      size_t len = special_trie_.may_start(static_cast<unsigned char>(s[pos]))
                       ? special_trie_.longest_at(s, pos, idx)
                       : 0;
      if (len == 0) {
        ++pos;
        continue;
      }
      encode_text(std::string_view(s).substr(start, pos - start), start == 0, ids);
      ids.push_back(index_[idx]);
      pos += len;
      start = pos;
    }
    encode_text(std::string_view(s).substr(start), start == 0, ids);
    if (add_special_tokens && add_eos_ && eos_.id) ids.push_back(*eos_.id);
    return ids;
  }

  // The decoder transformers' LlamaConverter gives the fast tokenizer: U+2581 -> ' ', byte
  // fallback, fuse, strip one leading space. Special tokens decode to their text.
  std::string decode(std::span<const TokenId> ids, bool skip_special_tokens) const override {
    std::vector<std::string> tokens;
    for (TokenId id : ids) {
      if (id < 0 || static_cast<size_t>(id) >= m_.pieces.size()) continue;
      auto it = special_text_.find(id);
      if (it != special_text_.end()) {
        if (skip_special_tokens) continue;
        tokens.push_back(it->second);
        continue;
      }
      tokens.push_back(m_.pieces[static_cast<size_t>(id)].piece);
    }
    decoder_->decode_chain(tokens);
    std::string out;
    for (const auto& t : tokens) out += t;
    if (config_.clean_up_tokenization_spaces) out = clean_up_tokenization(std::move(out));
    return out;
  }

  std::optional<TokenId> token_to_id(std::string_view token) const override {
    auto it = all_.find(std::string(token));
    if (it == all_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<std::string> id_to_token(TokenId id) const override {
    if (id < 0 || static_cast<size_t>(id) >= m_.pieces.size()) return std::nullopt;
    return m_.pieces[static_cast<size_t>(id)].piece;
  }
  size_t vocab_size() const override { return m_.pieces.size(); }

 private:
  void encode_text(std::string_view text, bool at_start, std::vector<TokenId>& ids) const {
    if (text.empty()) return;
    std::string norm;
    norm.reserve(text.size() + 8);
    for (char c : text) {
      if (c == ' ')
        norm += kSpace;
      else
        norm += c;
    }
    bool starts = norm.compare(0, 3, kSpace) == 0;
    if (legacy_ || (at_start && !starts)) norm.insert(0, kSpace);
    struct Sym {
      size_t b, len;
      int prev, next;
      bool freeze;
    };
    std::vector<Sym> syms;
    size_t i = 0;
    while (i < norm.size()) {
      size_t idx = 0;
      size_t len = user_trie_.may_start(static_cast<unsigned char>(norm[i]))
                       ? user_trie_.longest_at(norm, i, idx)
                       : 0;
      bool freeze = len > 0;
      if (!len) len = utf8_len(static_cast<unsigned char>(norm[i]));
      int n = static_cast<int>(syms.size());
      syms.push_back(Sym{i, len, n - 1, -1, freeze});
      if (n > 0) syms[static_cast<size_t>(n - 1)].next = n;
      i += len;
    }
    struct Pair {
      float score;
      int left, right;
      size_t size;
    };
    auto worse = [](const Pair& a, const Pair& b) {
      return a.score == b.score ? a.left > b.left : a.score < b.score;
    };
    std::priority_queue<Pair, std::vector<Pair>, decltype(worse)> agenda(worse);
    std::unordered_map<std::string, std::pair<std::string, std::string>> rev_merge;
    auto maybe_add = [&](int l, int r) {
      if (l < 0 || r < 0) return;
      const Sym& a = syms[static_cast<size_t>(l)];
      const Sym& b = syms[static_cast<size_t>(r)];
      if (a.freeze || b.freeze) return;
      std::string_view piece(norm.data() + a.b, a.len + b.len);
      auto it = pieces_.find(std::string(piece));
      if (it == pieces_.end()) return;
      agenda.push(Pair{m_.pieces[static_cast<size_t>(it->second)].score, l, r, piece.size()});
      if (m_.pieces[static_cast<size_t>(it->second)].type == kUnused) {
        rev_merge[std::string(piece)] = {std::string(norm.data() + a.b, a.len),
                                         std::string(norm.data() + b.b, b.len)};
      }
    };
    for (size_t k = 1; k < syms.size(); ++k)
      maybe_add(static_cast<int>(k - 1), static_cast<int>(k));
    while (!agenda.empty()) {
      Pair top = agenda.top();
      agenda.pop();
      Sym& l = syms[static_cast<size_t>(top.left)];
      Sym& r = syms[static_cast<size_t>(top.right)];
      if (l.len == 0 || r.len == 0 || l.len + r.len != top.size) continue;
      l.len += r.len;
      l.next = r.next;
      if (r.next >= 0) syms[static_cast<size_t>(r.next)].prev = top.left;
      r.len = 0;
      maybe_add(l.prev, top.left);
      maybe_add(top.left, l.next);
    }
    // Pieces -> ids; unknown pieces become bytes (byte_fallback) or one fused unknown.
    bool prev_unk = false;
    std::function<void(const std::string&)> resegment = [&](const std::string& piece) {
      auto it = pieces_.find(piece);
      if (it != pieces_.end() && m_.pieces[static_cast<size_t>(it->second)].type != kUnused) {
        ids.push_back(it->second);
        prev_unk = false;
        return;
      }
      auto rv = rev_merge.find(piece);
      if (rv != rev_merge.end()) {
        auto parts = rv->second;
        resegment(parts.first);
        resegment(parts.second);
        return;
      }
      auto any = all_.find(piece);
      if (any != all_.end() && m_.pieces[static_cast<size_t>(any->second)].type != kUnknown &&
          m_.pieces[static_cast<size_t>(any->second)].type != kUnused) {
        ids.push_back(any->second);
        prev_unk = false;
        return;
      }
      if (m_.byte_fallback) {
        for (unsigned char c : piece) ids.push_back(byte_ids_[c] >= 0 ? byte_ids_[c] : unk_id_);
        prev_unk = false;
        return;
      }
      if (!prev_unk) ids.push_back(unk_id_);
      prev_unk = true;
    };
    for (int k = 0; k != -1 && !syms.empty(); k = syms[static_cast<size_t>(k)].next) {
      const Sym& s = syms[static_cast<size_t>(k)];
      resegment(norm.substr(s.b, s.len));
    }
  }

  SpModel m_;
  std::unordered_map<std::string, TokenId> all_, pieces_;
  TokenId unk_id_ = -1;
  std::array<TokenId, 256> byte_ids_ = [] {
    std::array<TokenId, 256> a;
    a.fill(-1);
    return a;
  }();
  TokenTrie user_trie_, special_trie_;
  bool add_bos_ = true, add_eos_ = false;
  bool legacy_ = false;
  std::unique_ptr<Decoder> decoder_;
  std::unordered_map<std::string, TokenId> special_ids_;
  std::unordered_map<TokenId, std::string> special_text_;
  std::vector<TokenId> index_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_sentencepiece_tokenizer(const std::filesystem::path& model_path,
                                                        TokenizerConfig config) {
  return std::make_unique<SentencePieceTokenizer>(model_path, std::move(config));
}

}  // namespace lmeval::tok
