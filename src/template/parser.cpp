// Jinja2 lexer and parser: template text -> syntax tree, following Jinja 3.1's rules for
// whitespace control, trim_blocks/lstrip_blocks, operator precedence and statement syntax.
#include <cstring>
#include <string>
#include <vector>

#include "escape.hpp"
#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"
#include "template/engine.hpp"

namespace lmeval::tmpl {

namespace {

enum class TT {
  kData,
  kVarBegin,
  kVarEnd,
  kBlockBegin,
  kBlockEnd,
  kName,
  kString,
  kInt,
  kFloat,
  kOp,
  kEof
};

struct Token {
  TT t;
  size_t pos;
  std::string v;  // data text, name, decoded string, operator, number text
};

bool is_space_at(std::string_view s, size_t i, size_t* len) {
  unsigned char c = s[i];
  if (c < 0x80) {
    *len = 1;
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
  }
  // Decode one code point for Unicode whitespace (Python's \s / str.isspace).
  size_t n = (c >= 0xF0) ? 4 : (c >= 0xE0) ? 3 : (c >= 0xC0) ? 2 : 1;
  if (i + n > s.size()) {
    *len = 1;
    return false;
  }
  char32_t cp = 0;
  auto d = unicode::decode(s.substr(i, n));
  if (!d.empty()) cp = d[0];
  *len = n;
  return unicode::py_isspace(cp);
}

// Python's str.rstrip() (Unicode whitespace).
std::string_view rstrip_ws(std::string_view s) { return unicode::py_rstrip(s); }

bool all_space(std::string_view s) {
  if (s.empty()) return false;
  size_t i = 0, len = 0;
  while (i < s.size()) {
    if (!is_space_at(s, i, &len)) return false;
    i += len;
  }
  return true;
}

size_t skip_space(std::string_view s, size_t i) {
  size_t len = 0;
  while (i < s.size() && is_space_at(s, i, &len)) i += len;
  return i;
}

int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  Lexer(const CompiledTemplate& t) : t_(t), s_(t.source) {}

  std::vector<Token> run() {
    size_t pos = 0;
    bool line_starting = true;
    const bool trim = t_.opts.trim_blocks;
    while (pos < s_.size()) {
      // Earliest "{{", "{%", "{#".
      size_t tag = pos;
      char kind = 0;
      while (true) {
        tag = s_.find('{', tag);
        if (tag == std::string_view::npos || tag + 1 >= s_.size()) {
          tag = std::string_view::npos;
          break;
        }
        char c = s_[tag + 1];
        if (c == '{' || c == '%' || c == '#') {
          kind = c;
          break;
        }
        ++tag;
      }
      if (tag == std::string_view::npos) {
        emit_data(pos, s_.substr(pos));
        break;
      }
      std::string_view text = s_.substr(pos, tag - pos);
      size_t after = tag + 2;
      char sign = 0;
      if (after < s_.size() && (s_[after] == '-' || s_[after] == '+')) sign = s_[after++];
      // raw block?
      bool raw = false;
      size_t raw_end_begin = 0;
      if (kind == '%') {
        size_t q = skip_space(s_, after);
        if (s_.compare(q, 3, "raw") == 0) {
          size_t r = skip_space(s_, q + 3);
          if (s_.compare(r, 3, "-%}") == 0) {
            raw = true;
            raw_end_begin = skip_space(s_, r + 3);
          } else if (s_.compare(r, 2, "%}") == 0) {
            raw = true;
            raw_end_begin = r + 2;
          }
        }
      }
      if (sign == '-') {
        text = rstrip_ws(text);
      } else if (sign != '+' && t_.opts.lstrip_blocks && kind != '{') {
        size_t nl = text.rfind('\n');
        size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
        if ((l_pos > 0 || line_starting) && all_space(text.substr(l_pos)))
          text = text.substr(0, l_pos);
      }
      emit_data(pos, text);
      if (raw) {
        pos = lex_raw(tag, raw_end_begin, &line_starting);
        continue;
      }
      if (kind == '#') {
        pos = lex_comment(tag, after, trim, &line_starting);
        continue;
      }
      toks_.push_back({kind == '{' ? TT::kVarBegin : TT::kBlockBegin, tag, {}});
      pos = lex_tag(after, kind == '%', &line_starting);
    }
    toks_.push_back({TT::kEof, s_.size(), {}});
    return std::move(toks_);
  }

 private:
  void emit_data(size_t pos, std::string_view text) {
    if (!text.empty()) toks_.push_back({TT::kData, pos, std::string(text)});
  }

  size_t lex_raw(size_t tag, size_t p, bool* line_starting) {
    // (.*?)({%[-+]?\s*endraw\s*(+%}|-%}\s*|%}\n?))
    size_t q = p;
    while (true) {
      q = s_.find("{%", q);
      if (q == std::string_view::npos) fail_at(t_, tag, "Missing end of raw directive");
      size_t r = q + 2;
      char sign = 0;
      if (r < s_.size() && (s_[r] == '-' || s_[r] == '+')) sign = s_[r++];
      r = skip_space(s_, r);
      if (s_.compare(r, 6, "endraw") != 0) {
        q += 2;
        continue;
      }
      r = skip_space(s_, r + 6);
      size_t end;
      if (s_.compare(r, 3, "+%}") == 0) {
        end = r + 3;
      } else if (s_.compare(r, 3, "-%}") == 0) {
        end = skip_space(s_, r + 3);
      } else if (s_.compare(r, 2, "%}") == 0) {
        end = r + 2;
        if (t_.opts.trim_blocks && end < s_.size() && s_[end] == '\n') ++end;
      } else {
        q += 2;
        continue;
      }
      std::string_view text = s_.substr(p, q - p);
      if (sign == '-') {
        text = rstrip_ws(text);
      } else if (sign != '+' && t_.opts.lstrip_blocks) {
        size_t nl = text.rfind('\n');
        size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
        if (l_pos > 0 && all_space(text.substr(l_pos))) text = text.substr(0, l_pos);
      }
      emit_data(p, text);
      *line_starting = end > 0 && s_[end - 1] == '\n';
      return end;
    }
  }

  size_t lex_comment(size_t tag, size_t p, bool trim, bool* line_starting) {
    for (size_t q = p; q < s_.size(); ++q) {
      size_t end = 0;
      if (s_.compare(q, 3, "+#}") == 0) {
        end = q + 3;
      } else if (s_.compare(q, 3, "-#}") == 0) {
        end = skip_space(s_, q + 3);
      } else if (s_.compare(q, 2, "#}") == 0) {
        end = q + 2;
        if (trim && end < s_.size() && s_[end] == '\n') ++end;
      } else {
        continue;
      }
      *line_starting = s_[end - 1] == '\n';
      return end;
    }
    fail_at(t_, tag, "Missing end of comment tag");
  }

  size_t lex_tag(size_t p, bool block, bool* line_starting) {
    std::vector<char> balance;
    while (true) {
      if (p >= s_.size()) {
        fail_at(t_, s_.size(), "unexpected end of template",
                block ? "end of statement block ('%}')" : "end of print statement ('}}')");
      }
      if (balance.empty()) {
        size_t end = 0;
        if (block) {
          if (s_.compare(p, 3, "+%}") == 0) {
            end = p + 3;
          } else if (s_.compare(p, 3, "-%}") == 0) {
            end = skip_space(s_, p + 3);
          } else if (s_.compare(p, 2, "%}") == 0) {
            end = p + 2;
            if (t_.opts.trim_blocks && end < s_.size() && s_[end] == '\n') ++end;
          }
        } else {
          if (s_.compare(p, 3, "-}}") == 0) {
            end = skip_space(s_, p + 3);
          } else if (s_.compare(p, 2, "}}") == 0) {
            end = p + 2;
          }
        }
        if (end) {
          toks_.push_back({block ? TT::kBlockEnd : TT::kVarEnd, p, {}});
          *line_starting = s_[end - 1] == '\n';
          return end;
        }
      }
      size_t len = 0;
      if (is_space_at(s_, p, &len)) {
        p = skip_space(s_, p);
        continue;
      }
      char c = s_[p];
      if (c >= '0' && c <= '9') {
        p = lex_number(p);
        continue;
      }
      if (size_t q = name_end(p); q > p) {
        std::string name(s_.substr(p, q - p));
        // Lexer.wrap: a run of name_re characters must be a Python identifier.
        if (!unicode::py_isidentifier(name)) fail_at(t_, p, "Invalid character in identifier");
        toks_.push_back({TT::kName, p, std::move(name)});
        p = q;
        continue;
      }
      if (c == '\'' || c == '"') {
        p = lex_string(p);
        continue;
      }
      static const char* const kOps[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/",
                                         "*",  "%",  "~",  "[",  "]",  "(",  ")", "{", "}",
                                         ">",  "<",  "=",  ".",  ":",  "|",  ",", ";"};
      const char* op = nullptr;
      for (const char* o : kOps) {
        if (s_.compare(p, std::strlen(o), o) == 0) {
          op = o;
          break;
        }
      }
      if (!op) {
        char32_t cp;
        size_t n = unicode::decode_at(s_, p, cp);
        fail_at(t_, p, "unexpected char '" + std::string(s_.substr(p, n)) + "'");
      }
      std::string o(op);
      if (o == "{" || o == "(" || o == "[") {
        balance.push_back(o == "{" ? '}' : o == "(" ? ')' : ']');
      } else if (o == "}" || o == ")" || o == "]") {
        if (balance.empty()) fail_at(t_, p, "unexpected '" + o + "'");
        char want = balance.back();
        balance.pop_back();
        if (want != o[0]) fail_at(t_, p, "unexpected '" + o + "'", std::string(1, want));
      }
      toks_.push_back({TT::kOp, p, o});
      p += o.size();
    }
  }

  // Jinja's integer_re / float_re.
  // The end of the run of Jinja's name_re characters at p (Python's \w plus the rest of
  // XID_Continue: jinja2/_identifier.py), p when there is none.
  size_t name_end(size_t p) const {
    size_t q = p;
    while (q < s_.size()) {
      char32_t cp;
      size_t n = unicode::decode_at(s_, q, cp);
      if (!(unicode::py_is_word_char(cp) || unicode::py_is_id_continue(cp))) break;
      q += n;
    }
    return q;
  }

  size_t lex_number(size_t p) {
    auto digits = [&](size_t q, auto ok) {
      // (_?d)* after a first digit
      size_t r = q;
      while (r < s_.size()) {
        if (ok(s_[r])) {
          ++r;
        } else if (s_[r] == '_' && r + 1 < s_.size() && ok(s_[r + 1])) {
          r += 2;
        } else {
          break;
        }
      }
      return r;
    };
    auto dec = [](char c) { return c >= '0' && c <= '9'; };
    // float: (\d+_)*\d+ ( (\.(\d+_)*\d+)? e[+-]?(\d+_)*\d+ | \.(\d+_)*\d+ )
    {
      size_t q = digits(p, dec);
      size_t r = q;
      bool frac = false;
      if (r + 1 < s_.size() && s_[r] == '.' && dec(s_[r + 1])) {
        r = digits(r + 1, dec);
        frac = true;
      }
      size_t e = r;
      bool expo = false;
      if (e < s_.size() && (s_[e] == 'e' || s_[e] == 'E')) {
        size_t f = e + 1;
        if (f < s_.size() && (s_[f] == '+' || s_[f] == '-')) ++f;
        if (f < s_.size() && dec(s_[f])) {
          r = digits(f, dec);
          expo = true;
        }
      }
      if (frac || expo) {
        std::string text;
        for (size_t i = p; i < r; ++i)
          if (s_[i] != '_') text += s_[i];
        toks_.push_back({TT::kFloat, p, text});
        return r;
      }
    }
    // integer
    auto lower = [](char c) {
      return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    };
    int base = 10;
    size_t start = p, r;
    if (s_[p] == '0' && p + 1 < s_.size() &&
        (lower(s_[p + 1]) == 'x' || lower(s_[p + 1]) == 'o' || lower(s_[p + 1]) == 'b')) {
      char b = lower(s_[p + 1]);
      base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
      auto ok = [base](char c) { return hexval(c) >= 0 && hexval(c) < base; };
      size_t q = p + 2;
      r = q;
      while (r < s_.size()) {
        if (ok(s_[r])) {
          ++r;
        } else if (s_[r] == '_' && r + 1 < s_.size() && ok(s_[r + 1])) {
          r += 2;
        } else {
          break;
        }
      }
      if (r == q) {
        // "0" alone, then a name token follows
        r = p + 1;
        base = 10;
      } else {
        start = q;
      }
    } else if (s_[p] == '0') {
      r = p + 1;
      while (r + 1 < s_.size() && s_[r] == '_' && s_[r + 1] == '0') r += 2;
      while (r < s_.size() && s_[r] == '0') ++r;
    } else {
      r = digits(p, dec);
    }
    std::string text;
    for (size_t i = start; i < r; ++i)
      if (s_[i] != '_') text += s_[i];
    uint64_t v = 0;
    for (char c : text) v = v * base + hexval(c);
    toks_.push_back({TT::kInt, p, std::to_string(v)});
    return r;
  }

  size_t lex_string(size_t p) {
    char q = s_[p];
    size_t i = p + 1;
    std::string out;
    while (true) {
      if (i >= s_.size()) fail_at(t_, p, "unexpected char '" + std::string(1, q) + "'");
      char c = s_[i];
      if (c == q) break;
      if (c != '\\') {
        out += c;
        ++i;
        continue;
      }
      // Python's "unicode-escape" decoding.
      if (i + 1 >= s_.size()) fail_at(t_, p, "unexpected char '" + std::string(1, q) + "'");
      char e = s_[i + 1];
      i += 2;
      if (append_simple_escape(e, out)) continue;
      switch (e) {
        case 'x':
        case 'u':
        case 'U': {
          int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          char32_t cp = 0;
          for (int k = 0; k < n; ++k) {
            if (i + k >= s_.size() || hexval(s_[i + k]) < 0)
              fail_at(t_, p, "truncated \\" + std::string(1, e) + " escape in string literal");
            cp = cp * 16 + hexval(s_[i + k]);
          }
          i += n;
          unicode::append_utf8(out, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t cp = e - '0';
            for (int k = 0; k < 2 && i < s_.size() && s_[i] >= '0' && s_[i] <= '7'; ++k)
              cp = cp * 8 + (s_[i++] - '0');
            unicode::append_utf8(out, cp);
          } else {
            out += '\\';
            out += e;
          }
      }
    }
    toks_.push_back({TT::kString, p, out});
    return i + 1;
  }

  const CompiledTemplate& t_;
  std::string_view s_;
  std::vector<Token> toks_;
};

// ------------------------------------------------------------------------------------ parser

class Parser {
  // Bounds recursion on pathological input (Python would raise RecursionError).
  struct DepthGuard {
    Parser* p;
    explicit DepthGuard(Parser* parser) : p(parser) {
      if (++p->depth_ > 300)
        fail_at(p->t_, p->cur().pos, "template nesting too deep", {}, TemplateError::Kind::kPython);
    }
    ~DepthGuard() { --p->depth_; }
  };

 public:
  Parser(CompiledTemplate& t, std::vector<Token> toks) : t_(t), toks_(std::move(toks)) {}

  void run() {
    std::string end;
    t_.body = subparse({}, &end);
    if (!end.empty()) unknown_tag(end, pos_of_last_tag_);
  }

 private:
  const Token& cur() const { return toks_[i_]; }
  const Token& look() const { return toks_[std::min(i_ + 1, toks_.size() - 1)]; }
  void next() {
    if (i_ + 1 < toks_.size()) ++i_;
  }
  bool is_op(const char* o) const { return cur().t == TT::kOp && cur().v == o; }
  bool is_name(const char* n) const { return cur().t == TT::kName && cur().v == n; }
  bool skip_op(const char* o) {
    if (!is_op(o)) return false;
    next();
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    next();
    return true;
  }

  static std::string describe(const Token& tk) {
    switch (tk.t) {
      case TT::kData:
        return "template data";
      case TT::kVarBegin:
        return "begin of print statement";
      case TT::kVarEnd:
        return "end of print statement";
      case TT::kBlockBegin:
        return "begin of statement block";
      case TT::kBlockEnd:
        return "end of statement block";
      case TT::kName:
        return tk.v;
      case TT::kString:
        return "string";
      case TT::kInt:
        return "integer";
      case TT::kFloat:
        return "float";
      case TT::kOp:
        return tk.v;
      case TT::kEof:
        return "end of template";
    }
    return "?";
  }

  [[noreturn]] void fail_expected(const std::string& what) {
    fail_at(t_, cur().pos, "expected token '" + what + "', got '" + describe(cur()) + "'", what);
  }
  void expect_op(const char* o) {
    if (!skip_op(o)) fail_expected(o);
  }
  std::string expect_name() {
    if (cur().t != TT::kName) fail_expected("name");
    std::string n = cur().v;
    next();
    return n;
  }
  void expect_block_end() {
    if (cur().t != TT::kBlockEnd) fail_expected("end of statement block");
    next();
  }

  [[noreturn]] void unknown_tag(const std::string& name, size_t pos) {
    fail_at(t_, pos, "Encountered unknown tag '" + name + "'.");
  }

  ExprPtr mk(EK k, size_t pos) {
    auto e = std::make_unique<Expr>();
    e->k = k;
    e->pos = pos;
    return e;
  }

  // Parses nodes until a block whose first name is in `ends`; leaves the stream after that
  // name (the caller parses the rest of the tag). `*end` gets the name ("" at EOF).
  Body subparse(const std::vector<std::string>& ends, std::string* end) {
    Body body;
    while (true) {
      const Token& tk = cur();
      if (tk.t == TT::kEof) {
        end->clear();
        return body;
      }
      if (tk.t == TT::kData) {
        auto n = std::make_unique<Node>();
        n->k = SK::kText;
        n->pos = tk.pos;
        n->text = tk.v;
        body.push_back(std::move(n));
        next();
      } else if (tk.t == TT::kVarBegin) {
        next();
        auto n = std::make_unique<Node>();
        n->k = SK::kOutput;
        n->pos = cur().pos;
        n->expr = parse_tuple(false, true, {}, false);
        if (cur().t != TT::kVarEnd) fail_expected("end of print statement");
        next();
        body.push_back(std::move(n));
      } else if (tk.t == TT::kBlockBegin) {
        next();
        if (cur().t == TT::kName) {
          for (const auto& e : ends) {
            if (cur().v == e) {
              *end = e;
              pos_of_last_tag_ = cur().pos;
              next();
              return body;
            }
          }
        }
        body.push_back(parse_statement());
      } else {
        fail_at(t_, tk.pos, "unexpected '" + describe(tk) + "'");
      }
    }
  }

  Body parse_statements(const std::vector<std::string>& ends, std::string* end, size_t start,
                        const std::string& tag) {
    expect_block_end();
    Body b = subparse(ends, end);
    if (end->empty()) {
      std::string want;
      for (const auto& e : ends) want += (want.empty() ? "'" : " or '") + e + "'";
      fail_at(t_, start,
              "Unexpected end of template. Jinja was looking for the following tags: " + want +
                  ". The innermost block that needs to be closed is '" + tag + "'.",
              want);
    }
    return b;
  }

  NodePtr parse_statement() {
    DepthGuard guard(this);
    if (cur().t != TT::kName) fail_at(t_, cur().pos, "tag name expected", "tag name");
    std::string kw = cur().v;
    size_t pos = cur().pos;
    auto n = std::make_unique<Node>();
    n->pos = pos;
    next();
    std::string end;
    if (kw == "if") {
      n->k = SK::kIf;
      ExprPtr test = parse_tuple(false, false, {}, false);
      ++if_depth_;
      while (true) {
        Body b = parse_statements({"elif", "else", "endif"}, &end, pos, "if");
        n->branches.emplace_back(std::move(test), std::move(b));
        if (end == "elif") {
          test = parse_tuple(false, false, {}, false);
          continue;
        }
        if (end == "else") n->else_body = parse_statements({"endif"}, &end, pos, "if");
        break;
      }
      --if_depth_;
      expect_block_end();
    } else if (kw == "for") {
      n->k = SK::kFor;
      n->target = parse_assign_target(false, {"in"});
      if (!skip_name("in")) fail_expected("in");
      n->expr = parse_tuple(false, false, {"recursive"}, false);
      if (skip_name("if")) n->cond = parse_expression(true);
      if (is_name("recursive")) fail_at(t_, cur().pos, "recursive loops are not supported");
      ++loop_depth_;
      n->body = parse_statements({"endfor", "else"}, &end, pos, "for");
      --loop_depth_;
      if (end == "else") n->else_body = parse_statements({"endfor"}, &end, pos, "for");
      expect_block_end();
    } else if (kw == "set") {
      n->target = parse_assign_target(true, {});
      if (skip_op("=")) {
        n->k = SK::kSet;
        n->expr = parse_tuple(false, true, {}, false);
        expect_block_end();
      } else {
        n->k = SK::kSetBlock;
        if (!n->target.ns_attr.empty() || n->target.tuple)
          fail_at(t_, pos, "can't assign to a namespace or tuple in a block set");
        while (is_op("|")) n->filters.push_back(parse_filter(nullptr, true));
        n->body = parse_statements({"endset"}, &end, pos, "set");
        expect_block_end();
      }
    } else if (kw == "macro") {
      n->k = SK::kMacro;
      n->name = expect_name();
      expect_op("(");
      while (!is_op(")")) {
        if (!n->params.empty()) expect_op(",");
        if (is_op(")")) break;
        n->params.push_back(expect_name());
        if (skip_op("=")) {
          n->defaults.push_back(parse_expression(true));
        } else if (!n->defaults.empty()) {
          fail_at(t_, cur().pos, "non-default argument follows default argument");
        }
      }
      expect_op(")");
      int saved_loops = loop_depth_;
      loop_depth_ = 0;
      n->body = parse_statements({"endmacro"}, &end, pos, "macro");
      loop_depth_ = saved_loops;
      if (cur().t == TT::kName && cur().v == n->name) next();
      expect_block_end();
    } else if ((kw == "break" || kw == "continue") && t_.opts.chat) {
      n->k = kw == "break" ? SK::kBreak : SK::kContinue;
      // Jinja compiles to Python, which rejects a break/continue outside a loop.
      if (loop_depth_ == 0)
        fail_at(t_, pos, "'" + kw + "' outside loop", {}, TemplateError::Kind::kPython);
      expect_block_end();
    } else if (kw == "generation" && t_.opts.chat) {
      n->k = SK::kBody;
      n->body = parse_statements({"endgeneration"}, &end, pos, "generation");
      expect_block_end();
    } else if (kw == "filter") {
      n->k = SK::kFilterBlock;
      n->filters.push_back(parse_filter(nullptr, false));
      while (is_op("|")) n->filters.push_back(parse_filter(nullptr, true));
      n->body = parse_statements({"endfilter"}, &end, pos, "filter");
      expect_block_end();
    } else if (kw == "with") {
      n->k = SK::kWith;
      while (cur().t != TT::kBlockEnd) {
        if (!n->assigns.empty()) expect_op(",");
        Target tg = parse_assign_target(false, {});
        expect_op("=");
        n->assigns.emplace_back(std::move(tg), parse_expression(true));
      }
      n->body = parse_statements({"endwith"}, &end, pos, "with");
      expect_block_end();
    } else {
      unknown_tag(kw, pos);
    }
    return n;
  }

  Target parse_assign_target(bool with_namespace, const std::vector<std::string>& extra_end) {
    Target tg;
    if (with_namespace && cur().t == TT::kName && look().t == TT::kOp && look().v == ".") {
      tg.names.push_back(cur().v);
      next();
      next();
      tg.ns_attr = expect_name();
      return tg;
    }
    // parse_tuple(simplified=True): names separated by commas, optional parentheses
    bool paren = skip_op("(");
    while (true) {
      if (!tg.names.empty()) {
        if (!skip_op(",")) break;
        tg.tuple = true;
      }
      if (cur().t == TT::kName &&
          !(std::find(extra_end.begin(), extra_end.end(), cur().v) != extra_end.end())) {
        static const char* const kReserved[] = {"true", "false", "none", "True", "False", "None"};
        for (const char* r : kReserved)
          if (cur().v == r) fail_at(t_, cur().pos, "can't assign to '" + cur().v + "'");
        tg.names.push_back(cur().v);
        next();
      } else if (tg.names.empty()) {
        fail_at(t_, cur().pos, "can't assign to '" + describe(cur()) + "'", "name");
      } else {
        break;
      }
    }
    if (paren) {
      expect_op(")");
      if (tg.names.size() > 1) tg.tuple = true;
    }
    return tg;
  }

  bool is_tuple_end(const std::vector<std::string>& extra) const {
    const Token& tk = cur();
    if (tk.t == TT::kVarEnd || tk.t == TT::kBlockEnd || (tk.t == TT::kOp && tk.v == ")"))
      return true;
    if (tk.t == TT::kName)
      for (const auto& e : extra)
        if (tk.v == e) return true;
    return false;
  }

  ExprPtr parse_tuple(bool simplified, bool with_condexpr, const std::vector<std::string>& extra,
                      bool explicit_parens) {
    size_t pos = cur().pos;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) expect_op(",");
      if (is_tuple_end(extra)) break;
      if (simplified)
        items.push_back(parse_primary());
      else
        items.push_back(parse_expression(with_condexpr));
      if (is_op(","))
        is_tuple = true;
      else
        break;
    }
    if (!is_tuple) {
      if (!items.empty()) return std::move(items[0]);
      if (!explicit_parens)
        fail_at(t_, cur().pos, "Expected an expression, got '" + describe(cur()) + "'",
                "an expression");
    }
    auto e = mk(EK::kTuple, pos);
    e->args = std::move(items);
    return e;
  }

  ExprPtr parse_expression(bool with_condexpr) {
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  ExprPtr parse_condexpr() {
    ExprPtr e = parse_or();
    while (is_name("if")) {
      size_t pos = cur().pos;
      next();
      ExprPtr test = parse_or();
      ExprPtr other;
      if (skip_name("else")) other = parse_condexpr();
      auto c = mk(EK::kCond, pos);
      c->a = std::move(e);
      c->b = std::move(test);
      c->c = std::move(other);
      e = std::move(c);
    }
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr l = parse_and();
    while (is_name("or")) {
      auto e = mk(EK::kOr, cur().pos);
      next();
      e->a = std::move(l);
      e->b = parse_and();
      l = std::move(e);
    }
    return l;
  }

  ExprPtr parse_and() {
    ExprPtr l = parse_not();
    while (is_name("and")) {
      auto e = mk(EK::kAnd, cur().pos);
      next();
      e->a = std::move(l);
      e->b = parse_not();
      l = std::move(e);
    }
    return l;
  }

  ExprPtr parse_not() {
    DepthGuard guard(this);
    if (is_name("not")) {
      auto e = mk(EK::kNot, cur().pos);
      next();
      e->a = parse_not();
      return e;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    size_t pos = cur().pos;
    ExprPtr first = parse_math1();
    std::vector<std::string> ops;
    std::vector<ExprPtr> rest;
    while (true) {
      if (cur().t == TT::kOp && (cur().v == "==" || cur().v == "!=" || cur().v == "<" ||
                                 cur().v == "<=" || cur().v == ">" || cur().v == ">=")) {
        ops.push_back(cur().v);
        next();
      } else if (is_name("in")) {
        ops.emplace_back("in");
        next();
      } else if (is_name("not") && look().t == TT::kName && look().v == "in") {
        ops.emplace_back("notin");
        next();
        next();
      } else {
        break;
      }
      rest.push_back(parse_math1());
    }
    if (ops.empty()) return first;
    auto e = mk(EK::kCompare, pos);
    e->args.push_back(std::move(first));
    for (auto& r : rest) e->args.push_back(std::move(r));
    e->ops = std::move(ops);
    return e;
  }

  ExprPtr bin(const std::string& op, ExprPtr l, ExprPtr r, size_t pos) {
    auto e = mk(EK::kBin, pos);
    e->name = op;
    e->a = std::move(l);
    e->b = std::move(r);
    return e;
  }

  ExprPtr parse_math1() {
    ExprPtr l = parse_concat();
    while (cur().t == TT::kOp && (cur().v == "+" || cur().v == "-")) {
      std::string op = cur().v;
      size_t pos = cur().pos;
      next();
      l = bin(op, std::move(l), parse_concat(), pos);
    }
    return l;
  }

  ExprPtr parse_concat() {
    size_t pos = cur().pos;
    ExprPtr first = parse_math2();
    if (!is_op("~")) return first;
    auto e = mk(EK::kConcat, pos);
    e->args.push_back(std::move(first));
    while (skip_op("~")) e->args.push_back(parse_math2());
    return e;
  }

  ExprPtr parse_math2() {
    ExprPtr l = parse_pow();
    while (cur().t == TT::kOp &&
           (cur().v == "*" || cur().v == "/" || cur().v == "//" || cur().v == "%")) {
      std::string op = cur().v;
      size_t pos = cur().pos;
      next();
      l = bin(op, std::move(l), parse_pow(), pos);
    }
    return l;
  }

  ExprPtr parse_pow() {
    ExprPtr l = parse_unary(true);
    while (is_op("**")) {
      size_t pos = cur().pos;
      next();
      l = bin("**", std::move(l), parse_unary(true), pos);
    }
    return l;
  }

  ExprPtr parse_unary(bool with_filter) {
    DepthGuard guard(this);
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      auto e = mk(is_op("-") ? EK::kNeg : EK::kPos, cur().pos);
      next();
      e->a = parse_unary(false);
      node = std::move(e);
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    DepthGuard guard(this);
    const Token& tk = cur();
    size_t pos = tk.pos;
    if (tk.t == TT::kName) {
      auto e = mk(EK::kConst, pos);
      if (tk.v == "true" || tk.v == "True") {
        e->cval = true;
      } else if (tk.v == "false" || tk.v == "False") {
        e->cval = false;
      } else if (tk.v == "none" || tk.v == "None") {
        e->cval = nullptr;
      } else {
        e->k = EK::kName;
        e->name = tk.v;
      }
      next();
      return e;
    }
    if (tk.t == TT::kString) {
      std::string s = tk.v;
      next();
      while (cur().t == TT::kString) {
        s += cur().v;
        next();
      }
      auto e = mk(EK::kConst, pos);
      e->cval = std::move(s);
      return e;
    }
    if (tk.t == TT::kInt) {
      auto e = mk(EK::kConst, pos);
      e->cval = static_cast<int64_t>(std::stoull(tk.v));
      next();
      return e;
    }
    if (tk.t == TT::kFloat) {
      auto e = mk(EK::kConst, pos);
      e->cval = std::strtod(tk.v.c_str(), nullptr);
      next();
      return e;
    }
    if (is_op("(")) {
      next();
      ExprPtr e = parse_tuple(false, true, {}, true);
      expect_op(")");
      return e;
    }
    if (is_op("[")) {
      next();
      auto e = mk(EK::kList, pos);
      while (!is_op("]")) {
        if (!e->args.empty()) expect_op(",");
        if (is_op("]")) break;
        e->args.push_back(parse_expression(true));
      }
      expect_op("]");
      return e;
    }
    if (is_op("{")) {
      next();
      auto e = mk(EK::kDict, pos);
      while (!is_op("}")) {
        if (!e->args.empty()) expect_op(",");
        if (is_op("}")) break;
        e->args.push_back(parse_expression(true));
        expect_op(":");
        e->args.push_back(parse_expression(true));
      }
      expect_op("}");
      return e;
    }
    fail_at(t_, pos, "unexpected '" + describe(tk) + "'", "an expression");
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      if (is_op(".") || is_op("[")) {
        node = parse_subscript(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    while (true) {
      if (is_op("|")) {
        node = parse_filter(std::move(node), true);
      } else if (is_name("is")) {
        node = parse_test(std::move(node));
      } else if (is_op("(")) {
        node = parse_call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr node) {
    size_t pos = cur().pos;
    if (skip_op(".")) {
      if (cur().t == TT::kName) {
        auto e = mk(EK::kAttr, pos);
        e->a = std::move(node);
        e->name = cur().v;
        next();
        return e;
      }
      if (cur().t == TT::kInt) {
        auto e = mk(EK::kItem, pos);
        e->a = std::move(node);
        e->b = mk(EK::kConst, cur().pos);
        e->b->cval = static_cast<int64_t>(std::stoull(cur().v));
        next();
        return e;
      }
      fail_at(t_, cur().pos, "expected name or number", "name or number");
    }
    expect_op("[");
    std::vector<ExprPtr> args;
    while (!is_op("]")) {
      if (!args.empty()) expect_op(",");
      args.push_back(parse_subscribed());
    }
    expect_op("]");
    auto e = mk(EK::kItem, pos);
    e->a = std::move(node);
    if (args.size() == 1) {
      e->b = std::move(args[0]);
    } else {
      e->b = mk(EK::kTuple, pos);
      e->b->args = std::move(args);
    }
    if (e->b && e->b->k == EK::kSlice) {
      e->b->a = std::move(e->a);
      return std::move(e->b);
    }
    return e;
  }

  ExprPtr parse_subscribed() {
    size_t pos = cur().pos;
    std::vector<ExprPtr> parts;
    if (is_op(":")) {
      next();
      parts.push_back(nullptr);
    } else {
      ExprPtr n = parse_expression(true);
      if (!is_op(":")) return n;
      next();
      parts.push_back(std::move(n));
    }
    if (is_op(":")) {
      parts.push_back(nullptr);
    } else if (!is_op("]") && !is_op(",")) {
      parts.push_back(parse_expression(true));
    } else {
      parts.push_back(nullptr);
    }
    if (skip_op(":")) {
      if (!is_op("]") && !is_op(","))
        parts.push_back(parse_expression(true));
      else
        parts.push_back(nullptr);
    } else {
      parts.push_back(nullptr);
    }
    auto e = mk(EK::kSlice, pos);
    for (auto& p : parts) e->args.push_back(std::move(p));
    return e;
  }

  void parse_call_args(Expr* e) {
    expect_op("(");
    bool need_comma = false;
    while (!is_op(")")) {
      if (need_comma) {
        expect_op(",");
        if (is_op(")")) break;
      }
      if (skip_op("*")) {
        e->dyn_args = parse_expression(true);
      } else if (skip_op("**")) {
        e->dyn_kwargs = parse_expression(true);
      } else if (cur().t == TT::kName && look().t == TT::kOp && look().v == "=") {
        std::string key = cur().v;
        next();
        next();
        e->kwargs.emplace_back(key, parse_expression(true));
      } else {
        if (!e->kwargs.empty() || e->dyn_args || e->dyn_kwargs)
          fail_at(t_, cur().pos, "Invalid argument syntax");
        e->args.push_back(parse_expression(true));
      }
      need_comma = true;
    }
    expect_op(")");
  }

  ExprPtr parse_call(ExprPtr node) {
    auto e = mk(EK::kCall, cur().pos);
    e->a = std::move(node);
    parse_call_args(e.get());
    return e;
  }

  // Jinja 3 reports unknown filters/tests when compiling, except inside `if` bodies (which may
  // guard them), where the error is left to run time.
  bool known_filter(const std::string& n) const { return is_builtin_filter(n, t_.opts.chat); }
  bool known_test(const std::string& n) const { return is_builtin_test(n); }

  ExprPtr parse_filter(ExprPtr node, bool start_inline) {
    if (start_inline) expect_op("|");
    auto e = mk(EK::kFilter, cur().pos);
    e->name = expect_name();
    while (is_op(".")) {
      next();
      e->name += '.';
      e->name += expect_name();
    }
    if (if_depth_ == 0 && !known_filter(e->name))
      fail_at(t_, e->pos, "No filter named '" + e->name + "'.");
    e->a = std::move(node);
    if (is_op("(")) parse_call_args(e.get());
    return e;
  }

  ExprPtr parse_test(ExprPtr node) {
    size_t pos = cur().pos;
    next();  // 'is'
    bool negated = skip_name("not");
    auto e = mk(EK::kTest, pos);
    e->name = expect_name();
    while (is_op(".")) {
      next();
      e->name += '.';
      e->name += expect_name();
    }
    if (if_depth_ == 0 && !known_test(e->name))
      fail_at(t_, e->pos, "No test named '" + e->name + "'.");
    e->a = std::move(node);
    if (is_op("(")) {
      parse_call_args(e.get());
    } else if ((cur().t == TT::kName || cur().t == TT::kString || cur().t == TT::kInt ||
                cur().t == TT::kFloat || is_op("(") || is_op("[") || is_op("{")) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) fail_at(t_, cur().pos, "You cannot chain multiple tests with is");
      e->args.push_back(parse_postfix(parse_primary()));
    }
    if (!negated) return e;
    auto n = mk(EK::kNot, pos);
    n->a = std::move(e);
    return n;
  }

  CompiledTemplate& t_;
  std::vector<Token> toks_;
  size_t i_ = 0;
  size_t pos_of_last_tag_ = 0;
  int if_depth_ = 0;
  int loop_depth_ = 0;
  int depth_ = 0;
};

}  // namespace

void fail_at(const CompiledTemplate& t, size_t pos, const std::string& message,
             const std::string& expected, TemplateError::Kind kind) {
  int line = 1, col = 1;
  size_t lim = std::min(pos, t.source.size());
  size_t line_start = 0;
  for (size_t i = 0; i < lim; ++i) {
    if (t.source[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  col = static_cast<int>(
            unicode::length(std::string_view(t.source).substr(line_start, lim - line_start))) +
        1;
  SourceLocation where;
  where.file = t.origin;
  where.line = line;
  where.column = col;
  static const char* const kPrefix[] = {"template syntax error: ", "undefined in template: ",
                                        "template raised: ", "error in template: "};
  throw TemplateError(kind, kPrefix[static_cast<int>(kind)] + message, where, expected);
}

void parse_template(CompiledTemplate& t) {
  // Jinja splits on \r\n, \r and \n and joins with \n; one trailing newline is dropped unless
  // keep_trailing_newline.
  std::string src;
  src.reserve(t.source.size());
  const std::string& in = t.source;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\r') {
      src += '\n';
      if (i + 1 < in.size() && in[i + 1] == '\n') ++i;
    } else {
      src += in[i];
    }
  }
  if (!t.opts.keep_trailing_newline && !src.empty() && src.back() == '\n') src.pop_back();
  t.source = std::move(src);
  Lexer lx(t);
  Parser p(t, lx.run());
  p.run();
}

}  // namespace lmeval::tmpl
