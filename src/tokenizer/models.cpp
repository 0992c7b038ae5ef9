// tokenizer.json models: BPE (with a word cache), Unigram (Viterbi), WordPiece, WordLevel.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <queue>
#include <unordered_map>

#include "lmeval/core/error.hpp"
#include "tokenizer/pipeline.hpp"
#include "tokenizer/text.hpp"

namespace lmeval::tok {

namespace {

struct StrHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept {
    // FNV-1a: fast on the short strings a tokenizer looks up.
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};
using VocabMap = std::unordered_map<std::string, TokenId, StrHash, std::equal_to<>>;

// token <-> id tables shared by the models.
struct Vocab {
  VocabMap map;
  std::vector<std::string> by_id;
  std::vector<bool> has_id;

  void add(const std::string& tok, TokenId id, const Where& w) {
    // Ids index a table: refuse absurd ones rather than allocate gigabytes.
    if (id < 0 || id >= (1 << 24)) fail(w, "token id out of range [0, 16777216)");
    map[tok] = id;
    if (static_cast<size_t>(id) >= by_id.size()) {
      by_id.resize(static_cast<size_t>(id) + 1);
      has_id.resize(static_cast<size_t>(id) + 1);
    }
    by_id[static_cast<size_t>(id)] = tok;
    has_id[static_cast<size_t>(id)] = true;
  }
  std::optional<TokenId> find(std::string_view s) const {
    auto it = map.find(s);
    if (it == map.end()) return std::nullopt;
    return it->second;
  }
  const std::string* token(TokenId id) const {
    if (id < 0 || static_cast<size_t>(id) >= by_id.size() || !has_id[static_cast<size_t>(id)]) {
      return nullptr;
    }
    return &by_id[static_cast<size_t>(id)];
  }
};

void read_vocab_object(const Json& j, const Where& w, Vocab& v) {
  if (!j.is_object())
    fail(w, std::string("expected an object of token: id, found ") + j.type_name());
  v.map.reserve(j.size());
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_number_integer()) fail(w / it.key(), "token id must be an integer");
    v.add(it.key(), it.value().get<TokenId>(), w / it.key());
  }
}

// Per-thread, direct-mapped cache of word -> ids for one model: no locks, and a hit costs about
// one cache line. Results longer than kMaxIds are not cached.
class WordCache {
 public:
  static constexpr size_t kSlots = 1 << 15;
  static constexpr size_t kMaxIds = 8;
  struct Slot {
    uint64_t hash = 0;
    std::string key;
    uint8_t n = 0;
    TokenId ids[kMaxIds];
  };

  WordCache() : uid_(next_uid()) {}

  bool get(uint64_t hash, std::string_view word, std::vector<TokenId>& out) const {
    const Slot& s = slots()[hash & (kSlots - 1)];
    if (s.hash != hash || s.key != word) return false;
    out.insert(out.end(), s.ids, s.ids + s.n);
    return true;
  }
  void put(uint64_t hash, std::string_view word, const TokenId* ids, size_t n) const {
    if (n > kMaxIds) return;
    Slot& s = slots()[hash & (kSlots - 1)];
    s.hash = hash;
    s.key.assign(word);
    s.n = static_cast<uint8_t>(n);
    std::copy(ids, ids + n, s.ids);
  }

 private:
  static uint64_t next_uid() {
    static std::atomic<uint64_t> uid{1};
    return uid++;
  }
  // Caches live per thread, keyed by a never-reused model id (not the address).
  Slot* slots() const {
    struct Local {
      uint64_t last_uid = 0;
      Slot* last = nullptr;
      std::unordered_map<uint64_t, std::unique_ptr<Slot[]>> all;
    };
    thread_local Local local;
    if (local.last_uid == uid_) return local.last;
    auto& p = local.all[uid_];
    if (!p) p = std::make_unique<Slot[]>(kSlots);
    local.last_uid = uid_;
    local.last = p.get();
    return local.last;
  }
  uint64_t uid_;
};

std::string byte_token(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
  return buf;
}

// Open-addressing map from a (left id, right id) pair to its merge; the BPE inner loop's lookup.
class MergeMap {
 public:
  struct Val {
    uint32_t rank;
    TokenId id;
  };
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    keys_.assign(cap, kEmpty);
    vals_.resize(cap);
    mask_ = cap - 1;
  }
  void set(uint64_t key, Val v) {
    size_t i = slot(key);
    while (keys_[i] != kEmpty && keys_[i] != key) i = (i + 1) & mask_;
    keys_[i] = key;
    vals_[i] = v;
  }
  const Val* find(uint64_t key) const {
    size_t i = slot(key);
    while (true) {
      if (keys_[i] == key) return &vals_[i];
      if (keys_[i] == kEmpty) return nullptr;
      i = (i + 1) & mask_;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~0ull;
  size_t slot(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & mask_;
  }
  std::vector<uint64_t> keys_;
  std::vector<Val> vals_;
  size_t mask_ = 0;
};

class Bpe : public Model {
 public:
  Bpe(const Json& j, const Where& w) {
    read_vocab_object(req(j, w, "vocab"), w / "vocab", vocab_);
    if (j.contains("unk_token") && !j["unk_token"].is_null()) {
      std::string unk = req_string(j, w, "unk_token");
      auto id = vocab_.find(unk);
      // HF fails at encode time, and only when an unknown piece occurs; failing early is clearer.
      if (!id) fail(w / "unk_token", "unk_token '" + unk + "' is not in the vocabulary");
      unk_id_ = *id;
    }
    prefix_ = opt_string(j, w, "continuing_subword_prefix", "");
    suffix_ = opt_string(j, w, "end_of_word_suffix", "");
    fuse_unk_ = opt_bool(j, w, "fuse_unk", false);
    byte_fallback_ = opt_bool(j, w, "byte_fallback", false);
    ignore_merges_ = opt_bool(j, w, "ignore_merges", false);
    if (j.contains("dropout") && !j["dropout"].is_null()) {
      double d = j["dropout"].is_number() ? j["dropout"].get<double>() : -1;
      if (d != 0.0 && d != 1.0) {
        // Dropout is random at encode time; evaluation tokenizers never use it.
        fail(w / "dropout", "BPE dropout is not supported (expected null)");
      }
    }
    if (byte_fallback_) {
      for (int b = 0; b < 256; ++b) {
        auto id = vocab_.find(byte_token(static_cast<unsigned char>(b)));
        byte_ids_[b] = id ? *id : -1;
      }
    }
    metaspace_split_safe_ = prefix_.empty() && suffix_.empty();
    for (const auto& [tok, id] : vocab_.map) {
      for (size_t p = tok.find(kMeta, 1); p != std::string::npos && metaspace_split_safe_;
           p = tok.find(kMeta, p + 1)) {
        if (p < 3 || tok.compare(p - 3, 3, kMeta) != 0) metaspace_split_safe_ = false;
      }
      if (!metaspace_split_safe_) break;
    }
    const Json& merges = req(j, w, "merges");
    Where mw = w / "merges";
    if (!merges.is_array()) fail(mw, "expected an array of merges");
    merges_.reserve(merges.size());
    std::string a, b;
    for (size_t i = 0; i < merges.size(); ++i) {
      const Json& m = merges[i];
      if (m.is_string()) {
        const std::string& s = m.get_ref<const std::string&>();
        size_t sp = s.find(' ');
        if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos) {
          fail(mw[i], "a merge must be two tokens separated by one space: '" + s + "'");
        }
        a = s.substr(0, sp);
        b = s.substr(sp + 1);
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        a = m[0].get<std::string>();
        b = m[1].get<std::string>();
      } else {
        fail(mw[i], "a merge must be \"a b\" or [\"a\", \"b\"]");
      }
      auto ia = vocab_.find(a), ib = vocab_.find(b);
      if (!ia) fail(mw[i], "merge token '" + a + "' is not in the vocabulary");
      if (!ib) fail(mw[i], "merge token '" + b + "' is not in the vocabulary");
      std::string merged = a;
      if (!prefix_.empty() && b.compare(0, prefix_.size(), prefix_) == 0) {
        merged += b.substr(prefix_.size());
      } else {
        merged += b;
      }
      auto im = vocab_.find(merged);
      if (!im) fail(mw[i], "merged token '" + merged + "' is not in the vocabulary");
      // A repeated pair keeps its last rank, as HF's map construction does.
      merges_.set(key(*ia, *ib), MergeVal{static_cast<uint32_t>(i), *im});
    }
  }

  void tokenize(std::string_view word, std::vector<TokenId>& out) const override {
    if (word.empty()) return;
    if (ignore_merges_) {
      auto id = vocab_.find(word);
      if (id) {
        out.push_back(*id);
        return;
      }
    }
    if (metaspace_split_safe_ && word.size() > 32) {
      // No token joins a character to a following U+2581 unless that character is U+2581 too,
      // so no merge crosses such a boundary: BPE of the pieces is BPE of the whole. This keeps
      // Metaspace(split=false) tokenizers, which hand whole documents to BPE, fast.
      size_t start = 0;
      for (size_t i = 3; i + 3 <= word.size(); ++i) {
        if (word.compare(i, 3, kMeta) == 0 && word.compare(i - 3, 3, kMeta) != 0) {
          tokenize_piece(word.substr(start, i - start), out);
          start = i;
        }
      }
      tokenize_piece(word.substr(start), out);
      return;
    }
    tokenize_piece(word, out);
  }

  void tokenize_piece(std::string_view word, std::vector<TokenId>& out) const {
    // Long words would only fill the cache.
    bool cacheable = word.size() <= 64;
    uint64_t h = cacheable ? StrHash()(word) : 0;
    if (cacheable && cache_.get(h, word, out)) return;
    size_t before = out.size();
    merge_word(word, out);
    if (cacheable) cache_.put(h, word, out.data() + before, out.size() - before);
  }

  std::optional<TokenId> token_to_id(std::string_view t) const override { return vocab_.find(t); }
  const std::string* id_to_token(TokenId id) const override { return vocab_.token(id); }
  size_t vocab_size() const override { return vocab_.map.size(); }

 private:
  using MergeVal = MergeMap::Val;
  struct Sym {
    TokenId c;
    int prev, next;
    bool alive;
  };
  struct Cand {
    uint32_t rank;
    int pos;
    TokenId id;
    bool operator<(const Cand& o) const {  // priority_queue pops the largest: invert
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  static uint64_t key(TokenId a, TokenId b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  const MergeVal* find_merge(TokenId a, TokenId b) const { return merges_.find(key(a, b)); }

  void merge_word(std::string_view w, std::vector<TokenId>& out) const {
    thread_local std::vector<Sym> syms;
    syms.clear();
    TokenId pending_unk = -1;  // an unknown run not yet added (fuse_unk)
    auto add = [&](TokenId id) {
      int n = static_cast<int>(syms.size());
      syms.push_back(Sym{id, n - 1, n + 1, true});
    };
    std::string piece;
    size_t i = 0;
    while (i < w.size()) {
      size_t start = i;
      i += utf8_len(static_cast<unsigned char>(w[i]));
      std::string_view ch = w.substr(start, i - start);
      std::string_view s = ch;
      bool decorated = (start != 0 && !prefix_.empty()) || (i >= w.size() && !suffix_.empty());
      if (decorated) {
        piece.clear();
        if (start != 0) piece += prefix_;
        piece += ch;
        if (i >= w.size()) piece += suffix_;
        s = piece;
      }
      if (auto id = vocab_.find(s)) {
        if (pending_unk >= 0) {
          add(pending_unk);
          pending_unk = -1;
        }
        add(*id);
        continue;
      }
      if (byte_fallback_) {
        bool all = true;
        for (char c : s) all = all && byte_ids_[static_cast<unsigned char>(c)] >= 0;
        if (all) {
          for (char c : s) add(byte_ids_[static_cast<unsigned char>(c)]);
          continue;
        }
      }
      if (unk_id_) {
        if (pending_unk >= 0 && fuse_unk_) continue;
        if (pending_unk >= 0) add(pending_unk);
        pending_unk = *unk_id_;
      }
    }
    if (pending_unk >= 0) add(pending_unk);
    if (syms.empty()) return;
    syms.back().next = -1;

    thread_local std::vector<Cand> heap_store;
    heap_store.clear();
    std::priority_queue<Cand, std::vector<Cand>> queue(std::less<Cand>(), std::move(heap_store));
    for (size_t k = 0; k + 1 < syms.size(); ++k) {
      if (auto* m = find_merge(syms[k].c, syms[k + 1].c)) {
        queue.push(Cand{m->rank, static_cast<int>(k), m->id});
      }
    }
    while (!queue.empty()) {
      Cand top = queue.top();
      queue.pop();
      Sym& cur = syms[static_cast<size_t>(top.pos)];
      if (!cur.alive || cur.next == -1) continue;
      Sym& right = syms[static_cast<size_t>(cur.next)];
      auto* m = find_merge(cur.c, right.c);
      if (!m || m->id != top.id) continue;
      cur.c = top.id;
      right.alive = false;
      cur.next = right.next;
      if (right.next != -1) syms[static_cast<size_t>(right.next)].prev = top.pos;
      if (cur.prev >= 0) {
        if (auto* pm = find_merge(syms[static_cast<size_t>(cur.prev)].c, cur.c)) {
          queue.push(Cand{pm->rank, cur.prev, pm->id});
        }
      }
      if (cur.next != -1) {
        if (auto* nm = find_merge(cur.c, syms[static_cast<size_t>(cur.next)].c)) {
          queue.push(Cand{nm->rank, top.pos, nm->id});
        }
      }
    }
    for (const auto& s : syms) {
      if (s.alive) out.push_back(s.c);
    }
  }

  Vocab vocab_;
  static constexpr const char* kMeta = "\xe2\x96\x81";  // U+2581, Metaspace's replacement
  MergeMap merges_;
  bool metaspace_split_safe_ = false;
  std::optional<TokenId> unk_id_;
  std::string prefix_, suffix_;
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  std::array<TokenId, 256> byte_ids_{};
  WordCache cache_;
};

class Unigram : public Model {
 public:
  Unigram(const Json& j, const Where& w) {
    const Json& v = req(j, w, "vocab");
    Where vw = w / "vocab";
    if (!v.is_array()) fail(vw, "expected an array of [piece, score]");
    scores_.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const Json& e = v[i];
      if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number()) {
        fail(vw[i], "expected [piece, score]");
      }
      std::string piece = e[0].get<std::string>();
      vocab_.add(piece, static_cast<TokenId>(i), vw[i]);
      scores_.push_back(e[1].get<double>());
      max_len_ = std::max(max_len_, piece.size());
    }
    if (j.contains("unk_id") && !j["unk_id"].is_null()) {
      int64_t u = opt_int(j, w, "unk_id", -1);
      if (u < 0 || static_cast<size_t>(u) >= v.size()) fail(w / "unk_id", "unk_id out of range");
      unk_id_ = static_cast<TokenId>(u);
    }
    byte_fallback_ = opt_bool(j, w, "byte_fallback", false);
    min_score_ = scores_.empty() ? 0.0 : *std::min_element(scores_.begin(), scores_.end());
  }

  void tokenize(std::string_view s, std::vector<TokenId>& out) const override {
    if (s.empty()) return;
    struct Node {
      double score = 0;
      int64_t start = -1;
      TokenId id = 0;
    };
    std::vector<Node> best(s.size() + 1);
    const double unk_score = min_score_ - 10.0;
    size_t pos = 0;
    while (pos < s.size()) {
      double base = best[pos].score;
      size_t mblen = utf8_len(static_cast<unsigned char>(s[pos]));
      bool single = false;
      size_t end = pos;
      while (end < s.size() && end - pos < max_len_) {
        end += utf8_len(static_cast<unsigned char>(s[end]));
        if (end - pos > max_len_) break;
        auto id = vocab_.find(s.substr(pos, end - pos));
        if (!id) continue;
        double cand = scores_[static_cast<size_t>(*id)] + base;
        Node& t = best[end];
        if (t.start < 0 || cand > t.score) {
          t.score = cand;
          t.start = static_cast<int64_t>(pos);
          t.id = *id;
        }
        if (end - pos == mblen) single = true;
      }
      if (!single) {
        if (!unk_id_) throw RuntimeError("Unigram: an unknown character and no unk_id");
        Node& t = best[pos + mblen];
        double cand = unk_score + base;
        if (t.start < 0 || cand > t.score) {
          t.score = cand;
          t.start = static_cast<int64_t>(pos);
          t.id = *unk_id_;
        }
      }
      pos += mblen;
    }
    // Walk back from the end; consecutive unknown pieces fuse into one (fuse_unk).
    std::vector<std::string> pieces;
    std::vector<std::string_view> unk_run;
    auto flush_unk = [&] {
      if (unk_run.empty()) return;
      std::string f;
      for (auto it = unk_run.rbegin(); it != unk_run.rend(); ++it) f += *it;
      pieces.push_back(std::move(f));
      unk_run.clear();
    };
    size_t end = s.size();
    while (end > 0) {
      const Node& n = best[end];
      size_t start = static_cast<size_t>(n.start);
      std::string_view piece = s.substr(start, end - start);
      if (unk_id_ && n.id == *unk_id_) {
        unk_run.push_back(piece);
      } else {
        flush_unk();
        pieces.emplace_back(piece);
      }
      end = start;
    }
    flush_unk();
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) emit(*it, out);
  }

  std::optional<TokenId> token_to_id(std::string_view t) const override { return vocab_.find(t); }
  const std::string* id_to_token(TokenId id) const override { return vocab_.token(id); }
  size_t vocab_size() const override { return scores_.size(); }

 private:
  void emit(std::string_view piece, std::vector<TokenId>& out) const {
    if (auto id = vocab_.find(piece)) {
      out.push_back(*id);
      return;
    }
    if (byte_fallback_) {
      std::vector<TokenId> bytes;
      bool all = true;
      for (char c : piece) {
        auto id = vocab_.find(byte_token(static_cast<unsigned char>(c)));
        if (!id) {
          all = false;
          break;
        }
        bytes.push_back(*id);
      }
      if (all) {
        out.insert(out.end(), bytes.begin(), bytes.end());
        return;
      }
    }
    if (!unk_id_) throw RuntimeError("Unigram: an unknown piece and no unk_id");
    out.push_back(*unk_id_);
  }

  Vocab vocab_;
  std::vector<double> scores_;
  std::optional<TokenId> unk_id_;
  bool byte_fallback_ = false;
  double min_score_ = 0;
  size_t max_len_ = 0;
};

class WordPiece : public Model {
 public:
  WordPiece(const Json& j, const Where& w) {
    read_vocab_object(req(j, w, "vocab"), w / "vocab", vocab_);
    std::string unk = opt_string(j, w, "unk_token", "[UNK]");
    auto id = vocab_.find(unk);
    if (!id) fail(w / "unk_token", "unk_token '" + unk + "' is not in the vocabulary");
    unk_id_ = *id;
    prefix_ = opt_string(j, w, "continuing_subword_prefix", "##");
    max_chars_ = static_cast<size_t>(opt_int(j, w, "max_input_chars_per_word", 100));
  }

  void tokenize(std::string_view s, std::vector<TokenId>& out) const override {
    if (s.empty()) return;
    size_t chars = 0;
    for (char c : s) chars += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
    if (chars > max_chars_) {
      out.push_back(unk_id_);
      return;
    }
    size_t before = out.size();
    size_t start = 0;
    std::string sub;
    while (start < s.size()) {
      size_t end = s.size();
      std::optional<TokenId> found;
      while (start < end) {
        sub.clear();
        if (start > 0) sub += prefix_;
        sub.append(s.substr(start, end - start));
        if (auto id = vocab_.find(sub)) {
          found = id;
          break;
        }
        size_t k = end - 1;
        while (k > start && (static_cast<unsigned char>(s[k]) & 0xc0) == 0x80) --k;
        end = k;
      }
      if (!found) {
        out.resize(before);
        out.push_back(unk_id_);
        return;
      }
      out.push_back(*found);
      start = end;
    }
  }

  std::optional<TokenId> token_to_id(std::string_view t) const override { return vocab_.find(t); }
  const std::string* id_to_token(TokenId id) const override { return vocab_.token(id); }
  size_t vocab_size() const override { return vocab_.map.size(); }

 private:
  Vocab vocab_;
  TokenId unk_id_ = 0;
  std::string prefix_;
  size_t max_chars_ = 100;
};

class WordLevel : public Model {
 public:
  WordLevel(const Json& j, const Where& w) {
    read_vocab_object(req(j, w, "vocab"), w / "vocab", vocab_);
    std::string unk = opt_string(j, w, "unk_token", "<unk>");
    if (auto id = vocab_.find(unk)) unk_id_ = *id;
  }
  void tokenize(std::string_view s, std::vector<TokenId>& out) const override {
    if (auto id = vocab_.find(s)) {
      out.push_back(*id);
      return;
    }
    if (!unk_id_)
      throw RuntimeError("WordLevel: token '" + std::string(s) +
                         "' is unknown and "
                         "the unk_token is not in the vocabulary");
    out.push_back(*unk_id_);
  }
  std::optional<TokenId> token_to_id(std::string_view t) const override { return vocab_.find(t); }
  const std::string* id_to_token(TokenId id) const override { return vocab_.token(id); }
  size_t vocab_size() const override { return vocab_.map.size(); }

 private:
  Vocab vocab_;
  std::optional<TokenId> unk_id_;
};

}  // namespace

std::unique_ptr<Model> make_model(const Json& j, const Where& w) {
  expect_object(j, w);
  std::string type = opt_string(j, w, "type", "");
  if (type.empty()) {
    // Files from old `tokenizers` versions may leave the type out; infer it as HF does.
    if (j.contains("merges"))
      type = "BPE";
    else if (j.contains("vocab") && j["vocab"].is_array())
      type = "Unigram";
    else if (j.contains("max_input_chars_per_word"))
      type = "WordPiece";
    else
      type = "WordLevel";
  }
  if (type == "BPE") return std::make_unique<Bpe>(j, w);
  if (type == "Unigram") return std::make_unique<Unigram>(j, w);
  if (type == "WordPiece") return std::make_unique<WordPiece>(j, w);
  if (type == "WordLevel") return std::make_unique<WordLevel>(j, w);
  fail(w / "type", "unsupported model '" + type + "'", "BPE, Unigram, WordPiece, WordLevel");
}

}  // namespace lmeval::tok
