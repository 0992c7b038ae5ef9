// The YAML tokenizer of libyaml 0.2.x (scanner.c), which the reference reads task YAMLs with
// (lm_eval/tasks/_yaml_loader.py: yaml.CSafeLoader when PyYAML has libyaml, as the reference's
// wheels do). The state machine (simple keys, indentation stack, scalar folding) follows libyaml's
// step by step, because every prompt built from a YAML string depends on its exact folding.
#include "yaml_scanner.hpp"

#include <algorithm>

#include "lmeval/core/error.hpp"
#include "lmeval/core/unicode.hpp"

namespace lmeval::yaml {

namespace {

bool is_break(char32_t c) {
  return c == '\r' || c == '\n' || c == 0x85 || c == 0x2028 || c == 0x2029;
}
bool is_z(char32_t c) { return c == 0; }
bool is_breakz(char32_t c) { return is_break(c) || is_z(c); }
bool is_blank(char32_t c) { return c == ' ' || c == '\t'; }
bool is_blankz(char32_t c) { return is_blank(c) || is_breakz(c); }
bool is_alpha(char32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
         c == '-';
}
bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }
bool is_hex(char32_t c) { return is_digit(c) || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f'); }
int hex_value(char32_t c) {
  if (is_digit(c)) return static_cast<int>(c - '0');
  if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
  return static_cast<int>(c - 'a' + 10);
}
bool is_printable(char32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0x7E) || c == 0x85 ||
         (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
         (c >= 0x10000 && c <= 0x10FFFF);
}

std::string utf8(const std::u32string& s) { return unicode::encode(s); }

// Names the line too (counted in bytes up to the offset), so an editor finds the byte.
[[noreturn]] void reader_error(std::string_view in, const std::string& origin,
                               const std::string& problem, size_t offset) {
  int line = 1;
  for (size_t k = 0; k < offset && k < in.size(); ++k)
    if (in[k] == '\n') ++line;
  throw UserError("invalid YAML: " + problem + " at byte offset " + std::to_string(offset),
                  {origin, line, 0, ""}, "UTF-8 (or UTF-16 with a BOM) text");
}

}  // namespace

std::u32string decode_stream(std::string_view in, const std::string& origin) {
  std::u32string out;
  out.reserve(in.size());
  auto u = [&](size_t i) { return static_cast<unsigned char>(in[i]); };
  size_t i = 0;
  if (in.size() >= 2 && ((u(0) == 0xFF && u(1) == 0xFE) || (u(0) == 0xFE && u(1) == 0xFF))) {
    bool le = u(0) == 0xFF;
    i = 2;
    auto unit = [&](size_t k) {
      return le ? static_cast<char32_t>(u(k) | (u(k + 1) << 8))
                : static_cast<char32_t>((u(k) << 8) | u(k + 1));
    };
    while (i < in.size()) {
      if (i + 1 >= in.size()) reader_error(in, origin, "incomplete UTF-16 character", i);
      char32_t c = unit(i);
      if (c >= 0xDC00 && c <= 0xDFFF) reader_error(in, origin, "unexpected low surrogate area", i);
      if (c >= 0xD800 && c <= 0xDBFF) {
        if (i + 3 >= in.size()) reader_error(in, origin, "incomplete UTF-16 surrogate pair", i);
        char32_t lo = unit(i + 2);
        if (lo < 0xDC00 || lo > 0xDFFF)
          reader_error(in, origin, "expected low surrogate area", i + 2);
        c = 0x10000 + ((c & 0x3FF) << 10) + (lo & 0x3FF);
        i += 2;
      }
      i += 2;
      if (!is_printable(c)) reader_error(in, origin, "control characters are not allowed", i);
      out.push_back(c);
    }
    return out;
  }
  if (in.size() >= 3 && u(0) == 0xEF && u(1) == 0xBB && u(2) == 0xBF) i = 3;
  while (i < in.size()) {
    unsigned char b = u(i);
    size_t width = (b & 0x80) == 0      ? 1
                   : (b & 0xE0) == 0xC0 ? 2
                   : (b & 0xF0) == 0xE0 ? 3
                   : (b & 0xF8) == 0xF0 ? 4
                                        : 0;
    if (!width) reader_error(in, origin, "invalid leading UTF-8 octet", i);
    if (i + width > in.size()) reader_error(in, origin, "incomplete UTF-8 octet sequence", i);
    char32_t c = width == 1 ? b : width == 2 ? (b & 0x1F) : width == 3 ? (b & 0x0F) : (b & 0x07);
    for (size_t k = 1; k < width; ++k) {
      if ((u(i + k) & 0xC0) != 0x80)
        reader_error(in, origin, "invalid trailing UTF-8 octet", i + k);
      c = (c << 6) + (u(i + k) & 0x3F);
    }
    if (!(width == 1 || (width == 2 && c >= 0x80) || (width == 3 && c >= 0x800) ||
          (width == 4 && c >= 0x10000)))
      reader_error(in, origin, "invalid length of a UTF-8 sequence", i);
    if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
      reader_error(in, origin, "invalid Unicode character", i);
    if (!is_printable(c)) reader_error(in, origin, "control characters are not allowed", i);
    out.push_back(c);
    i += width;
  }
  return out;
}

Scanner::Scanner(std::u32string text, std::string origin)
    : text_(std::move(text)), origin_(std::move(origin)) {}

void Scanner::fail(const std::string& context, Mark context_mark, const std::string& problem,
                   Mark problem_mark) const {
  std::string msg = "invalid YAML: " + problem;
  if (!context.empty())
    msg += " (" + context + " started at line " + std::to_string(context_mark.line + 1) +
           ", column " + std::to_string(context_mark.column + 1) + ")";
  throw UserError(msg, {origin_, problem_mark.line + 1, problem_mark.column + 1, ""});
}

void Scanner::error(const std::string& context, Mark context_mark, const std::string& problem) {
  fail(context, context_mark, problem, mark_);
}

void Scanner::skip() {
  ++pos_;
  ++mark_.index;
  ++mark_.column;
}

void Scanner::skip_line() {
  if (ch() == '\r' && ch(1) == '\n') {
    pos_ += 2;
    mark_.index += 2;
  } else if (is_break(ch())) {
    ++pos_;
    ++mark_.index;
  } else {
    return;
  }
  mark_.column = 0;
  ++mark_.line;
}

void Scanner::read(std::u32string& out) {
  out.push_back(ch());
  skip();
}

// libyaml's READ_LINE: CR LF, CR, LF and NEL become LF; LS and PS are kept.
void Scanner::read_line(std::u32string& out) {
  char32_t c = ch();
  if (c == '\r' && ch(1) == '\n') {
    out.push_back('\n');
  } else if (c == '\r' || c == '\n' || c == 0x85) {
    out.push_back('\n');
  } else if (c == 0x2028 || c == 0x2029) {
    out.push_back(c);
  } else {
    return;
  }
  skip_line();
}

const Token& Scanner::peek() {
  if (!token_available_) fetch_more_tokens();
  return tokens_.front();
}

Token Scanner::next() {
  if (!token_available_) fetch_more_tokens();
  Token t = std::move(tokens_.front());
  tokens_.pop_front();
  token_available_ = false;
  ++tokens_parsed_;
  if (t.type == TokenType::StreamEnd) stream_end_produced_ = true;
  return t;
}

void Scanner::fetch_more_tokens() {
  while (true) {
    bool need = tokens_.empty();
    if (!need) {
      stale_simple_keys();
      for (const auto& key : simple_keys_) {
        if (key.possible && key.token_number == tokens_parsed_) {
          need = true;
          break;
        }
      }
    }
    if (!need) break;
    fetch_next_token();
  }
  token_available_ = true;
}

Token Scanner::simple(TokenType type) {
  Token t;
  t.type = type;
  t.start = mark_;
  skip();
  t.end = mark_;
  return t;
}

void Scanner::fetch_next_token() {
  if (stream_end_produced_) fail("", {}, "unexpected end of the token stream", mark_);
  if (!stream_start_produced_) {
    indent_ = -1;
    simple_keys_.push_back({});
    simple_key_allowed_ = true;
    stream_start_produced_ = true;
    Token t;
    t.type = TokenType::StreamStart;
    t.start = t.end = mark_;
    push(std::move(t));
    return;
  }
  scan_to_next_token();
  stale_simple_keys();
  unroll_indent(mark_.column);
  char32_t c = ch();
  if (is_z(c)) return fetch_stream_end();
  if (mark_.column == 0 && c == '%') return fetch_directive();
  if (mark_.column == 0 && c == '-' && ch(1) == '-' && ch(2) == '-' && is_blankz(ch(3)))
    return fetch_document_indicator(TokenType::DocumentStart);
  if (mark_.column == 0 && c == '.' && ch(1) == '.' && ch(2) == '.' && is_blankz(ch(3)))
    return fetch_document_indicator(TokenType::DocumentEnd);
  if (c == '[') return fetch_flow_collection_start(TokenType::FlowSequenceStart);
  if (c == '{') return fetch_flow_collection_start(TokenType::FlowMappingStart);
  if (c == ']') return fetch_flow_collection_end(TokenType::FlowSequenceEnd);
  if (c == '}') return fetch_flow_collection_end(TokenType::FlowMappingEnd);
  if (c == ',') return fetch_flow_entry();
  if (c == '-' && is_blankz(ch(1))) return fetch_block_entry();
  if (c == '?' && (flow_level_ || is_blankz(ch(1)))) return fetch_key();
  if (c == ':' && (flow_level_ || is_blankz(ch(1)))) return fetch_value();
  if (c == '*' || c == '&') {
    save_simple_key();
    simple_key_allowed_ = false;
    return push(scan_anchor(c == '*' ? TokenType::Alias : TokenType::Anchor));
  }
  if (c == '!') {
    save_simple_key();
    simple_key_allowed_ = false;
    return push(scan_tag());
  }
  if ((c == '|' || c == '>') && !flow_level_) {
    remove_simple_key();
    simple_key_allowed_ = true;
    return push(scan_block_scalar(c == '|'));
  }
  if (c == '\'' || c == '"') {
    save_simple_key();
    simple_key_allowed_ = false;
    return push(scan_flow_scalar(c == '\''));
  }
  static const std::u32string kIndicators = U"-?:,[]{}#&*!|>'\"%@`";
  if (!(is_blankz(c) || kIndicators.find(c) != std::u32string::npos) ||
      (c == '-' && !is_blank(ch(1))) ||
      (!flow_level_ && (c == '?' || c == ':') && !is_blankz(ch(1)))) {
    save_simple_key();
    simple_key_allowed_ = false;
    return push(scan_plain_scalar());
  }
  error("while scanning for the next token", mark_, "found character that cannot start any token");
}

void Scanner::stale_simple_keys() {
  for (auto& key : simple_keys_) {
    if (key.possible && (key.mark.line < mark_.line || key.mark.index + 1024 < mark_.index)) {
      if (key.required)
        error("while scanning a simple key", key.mark, "could not find expected ':'");
      key.possible = false;
    }
  }
}

void Scanner::save_simple_key() {
  bool required = !flow_level_ && indent_ == mark_.column;
  if (simple_key_allowed_) {
    SimpleKey key;
    key.possible = true;
    key.required = required;
    key.token_number = tokens_parsed_ + tokens_.size();
    key.mark = mark_;
    remove_simple_key();
    simple_keys_.back() = key;
  }
}

void Scanner::remove_simple_key() {
  auto& key = simple_keys_.back();
  if (key.possible && key.required)
    error("while scanning a simple key", key.mark, "could not find expected ':'");
  key.possible = false;
}

void Scanner::roll_indent(int column, long number, TokenType type, Mark mark) {
  if (flow_level_) return;
  if (indent_ < column) {
    indents_.push_back(indent_);
    indent_ = column;
    Token t;
    t.type = type;
    t.start = t.end = mark;
    if (number == -1) {
      push(std::move(t));
    } else {
      tokens_.insert(tokens_.begin() + (number - static_cast<long>(tokens_parsed_)), std::move(t));
    }
  }
}

void Scanner::unroll_indent(int column) {
  if (flow_level_) return;
  while (indent_ > column) {
    Token t;
    t.type = TokenType::BlockEnd;
    t.start = t.end = mark_;
    push(std::move(t));
    indent_ = indents_.back();
    indents_.pop_back();
  }
}

void Scanner::fetch_stream_end() {
  if (mark_.column != 0) {
    mark_.column = 0;
    ++mark_.line;
  }
  unroll_indent(-1);
  remove_simple_key();
  simple_key_allowed_ = false;
  Token t;
  t.type = TokenType::StreamEnd;
  t.start = t.end = mark_;
  push(std::move(t));
}

void Scanner::fetch_directive() {
  unroll_indent(-1);
  remove_simple_key();
  simple_key_allowed_ = false;
  push(scan_directive());
}

void Scanner::fetch_document_indicator(TokenType type) {
  unroll_indent(-1);
  remove_simple_key();
  simple_key_allowed_ = false;
  Token t;
  t.type = type;
  t.start = mark_;
  skip();
  skip();
  skip();
  t.end = mark_;
  push(std::move(t));
}

void Scanner::fetch_flow_collection_start(TokenType type) {
  save_simple_key();
  simple_keys_.push_back({});
  // libyaml's MAX_NESTING_LEVEL guard; deeper input would only exhaust the stack.
  if (++flow_level_ > 1000) error("", mark_, "exceeded maximum nesting depth (1000)");
  simple_key_allowed_ = true;
  push(simple(type));
}

void Scanner::fetch_flow_collection_end(TokenType type) {
  remove_simple_key();
  if (flow_level_) {
    --flow_level_;
    simple_keys_.pop_back();
  }
  simple_key_allowed_ = false;
  push(simple(type));
}

void Scanner::fetch_flow_entry() {
  remove_simple_key();
  simple_key_allowed_ = true;
  push(simple(TokenType::FlowEntry));
}

void Scanner::fetch_block_entry() {
  if (!flow_level_) {
    if (!simple_key_allowed_)
      error("", mark_, "block sequence entries are not allowed in this context");
    roll_indent(mark_.column, -1, TokenType::BlockSequenceStart, mark_);
  }
  remove_simple_key();
  simple_key_allowed_ = true;
  push(simple(TokenType::BlockEntry));
}

void Scanner::fetch_key() {
  if (!flow_level_) {
    if (!simple_key_allowed_) error("", mark_, "mapping keys are not allowed in this context");
    roll_indent(mark_.column, -1, TokenType::BlockMappingStart, mark_);
  }
  remove_simple_key();
  simple_key_allowed_ = !flow_level_;
  push(simple(TokenType::Key));
}

void Scanner::fetch_value() {
  auto& key = simple_keys_.back();
  if (key.possible) {
    Token t;
    t.type = TokenType::Key;
    t.start = t.end = key.mark;
    tokens_.insert(tokens_.begin() + static_cast<long>(key.token_number - tokens_parsed_), t);
    roll_indent(key.mark.column, static_cast<long>(key.token_number), TokenType::BlockMappingStart,
                key.mark);
    key.possible = false;
    simple_key_allowed_ = false;
  } else {
    if (!flow_level_) {
      if (!simple_key_allowed_) error("", mark_, "mapping values are not allowed in this context");
      roll_indent(mark_.column, -1, TokenType::BlockMappingStart, mark_);
    }
    simple_key_allowed_ = !flow_level_;
  }
  push(simple(TokenType::Value));
}

void Scanner::scan_to_next_token() {
  while (true) {
    if (mark_.column == 0 && ch() == 0xFEFF) skip();
    while (ch() == ' ' || ((flow_level_ || !simple_key_allowed_) && ch() == '\t')) skip();
    if (ch() == '#')
      while (!is_breakz(ch())) skip();
    if (!is_break(ch())) break;
    skip_line();
    if (!flow_level_) simple_key_allowed_ = true;
  }
}

Token Scanner::scan_directive() {
  Mark start = mark_;
  skip();
  std::u32string name;
  while (is_alpha(ch())) read(name);
  if (name.empty())
    error("while scanning a directive", start, "could not find expected directive name");
  if (!is_blankz(ch()))
    error("while scanning a directive", start, "found unexpected non-alphabetical character");
  Token t;
  t.start = start;
  if (name == U"YAML") {
    t.type = TokenType::VersionDirective;
    while (is_blank(ch())) skip();
    auto number = [&]() {
      int value = 0;
      size_t length = 0;
      while (is_digit(ch())) {
        if (++length > 9)
          error("while scanning a %YAML directive", start, "found extremely long version number");
        value = value * 10 + static_cast<int>(ch() - '0');
        skip();
      }
      if (!length)
        error("while scanning a %YAML directive", start, "did not find expected version number");
      return value;
    };
    t.major = number();
    if (ch() != '.')
      error("while scanning a %YAML directive", start,
            "did not find expected digit or '.' character");
    skip();
    t.minor = number();
  } else if (name == U"TAG") {
    t.type = TokenType::TagDirective;
    while (is_blank(ch())) skip();
    t.value = scan_tag_handle(true, start);
    if (!is_blank(ch()))
      error("while scanning a %TAG directive", start, "did not find expected whitespace");
    while (is_blank(ch())) skip();
    t.suffix = scan_tag_uri(true, true, "", start);
    if (!is_blankz(ch()))
      error("while scanning a %TAG directive", start,
            "did not find expected whitespace or line break");
  } else {
    error("while scanning a directive", start, "found unknown directive name");
  }
  while (is_blank(ch())) skip();
  if (ch() == '#')
    while (!is_breakz(ch())) skip();
  if (!is_breakz(ch()))
    error("while scanning a directive", start, "did not find expected comment or line break");
  t.end = mark_;
  skip_line();
  return t;
}

Token Scanner::scan_anchor(TokenType type) {
  Token t;
  t.type = type;
  t.start = mark_;
  skip();
  std::u32string name;
  while (is_alpha(ch())) read(name);
  t.end = mark_;
  char32_t c = ch();
  if (name.empty() || !(is_blankz(c) || c == '?' || c == ':' || c == ',' || c == ']' || c == '}' ||
                        c == '%' || c == '@' || c == '`'))
    error(type == TokenType::Anchor ? "while scanning an anchor" : "while scanning an alias",
          t.start, "did not find expected alphabetic or numeric character");
  t.value = utf8(name);
  return t;
}

std::string Scanner::scan_tag_handle(bool directive, Mark start) {
  const char* context = directive ? "while scanning a tag directive" : "while scanning a tag";
  if (ch() != '!') error(context, start, "did not find expected '!'");
  std::u32string handle;
  read(handle);
  while (is_alpha(ch())) read(handle);
  if (ch() == '!') {
    read(handle);
  } else if (directive && handle != U"!") {
    error("while parsing a tag directive", start, "did not find expected '!'");
  }
  return utf8(handle);
}

std::string Scanner::scan_tag_uri(bool uri_char, bool directive, const std::string& head,
                                  Mark start) {
  const char* context = directive ? "while parsing a %TAG directive" : "while parsing a tag";
  // The head is a tag handle scanned before it turned out to be part of the URI: its '!' is
  // dropped.
  std::string uri = head.size() > 1 ? head.substr(1) : std::string();
  size_t length = head.size();
  static const std::u32string kUriChars = U";/?:@&=+$.%!~*'()";
  while (true) {
    char32_t c = ch();
    bool ok = is_alpha(c) || kUriChars.find(c) != std::u32string::npos ||
              (uri_char && (c == ',' || c == '[' || c == ']'));
    if (!ok || c == 0) break;
    if (c == '%') {
      int width = 0;
      do {
        if (!(ch() == '%' && is_hex(ch(1)) && is_hex(ch(2))))
          error(context, start, "did not find URI escaped octet");
        unsigned char octet =
            static_cast<unsigned char>((hex_value(ch(1)) << 4) + hex_value(ch(2)));
        if (!width) {
          width = (octet & 0x80) == 0      ? 1
                  : (octet & 0xE0) == 0xC0 ? 2
                  : (octet & 0xF0) == 0xE0 ? 3
                  : (octet & 0xF8) == 0xF0 ? 4
                                           : 0;
          if (!width) error(context, start, "found an incorrect leading UTF-8 octet");
        } else if ((octet & 0xC0) != 0x80) {
          error(context, start, "found an incorrect trailing UTF-8 octet");
        }
        uri.push_back(static_cast<char>(octet));
        skip();
        skip();
        skip();
      } while (--width);
    } else {
      unicode::append_utf8(uri, c);
      skip();
    }
    ++length;
  }
  if (!length) error(context, start, "did not find expected tag URI");
  if (!unicode::is_valid_utf8(uri))
    error(context, start, "found an incorrect UTF-8 sequence in a tag");
  return uri;
}

Token Scanner::scan_tag() {
  Token t;
  t.type = TokenType::Tag;
  t.start = mark_;
  if (ch(1) == '<') {
    skip();
    skip();
    t.value = "";
    t.suffix = scan_tag_uri(true, false, "", t.start);
    if (ch() != '>') error("while scanning a tag", t.start, "did not find the expected '>'");
    skip();
  } else {
    std::string handle = scan_tag_handle(false, t.start);
    if (handle.size() > 1 && handle.front() == '!' && handle.back() == '!') {
      t.value = handle;
      t.suffix = scan_tag_uri(false, false, "", t.start);
    } else {
      t.suffix = scan_tag_uri(false, false, handle, t.start);
      t.value = "!";
      if (t.suffix.empty()) std::swap(t.value, t.suffix);  // a lone `!`: empty handle, suffix "!"
    }
  }
  if (!is_blankz(ch()) && !(flow_level_ && ch() == ','))
    error("while scanning a tag", t.start, "did not find expected whitespace or line break");
  t.end = mark_;
  return t;
}

Token Scanner::scan_block_scalar(bool literal) {
  Token t;
  t.type = TokenType::Scalar;
  t.style = literal ? ScalarStyle::Literal : ScalarStyle::Folded;
  t.start = mark_;
  skip();
  int chomping = 0, increment = 0;
  auto indicator_digit = [&]() {
    if (ch() == '0')
      error("while scanning a block scalar", t.start, "found an indentation indicator equal to 0");
    increment = static_cast<int>(ch() - '0');
    skip();
  };
  if (ch() == '+' || ch() == '-') {
    chomping = ch() == '+' ? 1 : -1;
    skip();
    if (is_digit(ch())) indicator_digit();
  } else if (is_digit(ch())) {
    indicator_digit();
    if (ch() == '+' || ch() == '-') {
      chomping = ch() == '+' ? 1 : -1;
      skip();
    }
  }
  while (is_blank(ch())) skip();
  if (ch() == '#')
    while (!is_breakz(ch())) skip();
  if (!is_breakz(ch()))
    error("while scanning a block scalar", t.start, "did not find expected comment or line break");
  if (is_break(ch())) skip_line();
  Mark end = mark_;
  int indent = 0;
  if (increment) indent = indent_ >= 0 ? indent_ + increment : increment;
  std::u32string text, leading_break, trailing_breaks;
  scan_block_scalar_breaks(indent, trailing_breaks, t.start, end);
  bool leading_blank = false;
  while (mark_.column == indent && !is_z(ch())) {
    bool trailing_blank = is_blank(ch());
    // Folding: a line break between two non-indented lines becomes a space (none when empty
    // lines follow it, which stay as line breaks).
    if (!literal && !leading_break.empty() && leading_break[0] == '\n' && !leading_blank &&
        !trailing_blank) {
      if (trailing_breaks.empty()) text.push_back(' ');
    } else {
      text += leading_break;
    }
    leading_break.clear();
    text += trailing_breaks;
    trailing_breaks.clear();
    leading_blank = is_blank(ch());
    while (!is_breakz(ch())) read(text);
    read_line(leading_break);
    scan_block_scalar_breaks(indent, trailing_breaks, t.start, end);
  }
  if (chomping != -1) text += leading_break;
  if (chomping == 1) text += trailing_breaks;
  t.value = utf8(text);
  t.end = end;
  return t;
}

void Scanner::scan_block_scalar_breaks(int& indent, std::u32string& breaks, Mark start, Mark& end) {
  int max_indent = 0;
  end = mark_;
  while (true) {
    while ((!indent || mark_.column < indent) && ch() == ' ') skip();
    max_indent = std::max(max_indent, mark_.column);
    if ((!indent || mark_.column < indent) && ch() == '\t')
      error("while scanning a block scalar", start,
            "found a tab character where an indentation space is expected");
    if (!is_break(ch())) break;
    read_line(breaks);
    end = mark_;
  }
  if (!indent) indent = std::max({max_indent, indent_ + 1, 1});
}

Token Scanner::scan_flow_scalar(bool single) {
  Token t;
  t.type = TokenType::Scalar;
  t.style = single ? ScalarStyle::SingleQuoted : ScalarStyle::DoubleQuoted;
  t.start = mark_;
  skip();
  std::u32string text, leading_break, trailing_breaks, whitespaces;
  const char* context = "while scanning a quoted scalar";
  while (true) {
    if (mark_.column == 0 &&
        ((ch() == '-' && ch(1) == '-' && ch(2) == '-') ||
         (ch() == '.' && ch(1) == '.' && ch(2) == '.')) &&
        is_blankz(ch(3)))
      error(context, t.start, "found unexpected document indicator");
    if (is_z(ch())) error(context, t.start, "found unexpected end of stream");
    bool leading_blanks = false;
    while (!is_blankz(ch())) {
      if (single && ch() == '\'' && ch(1) == '\'') {
        text.push_back('\'');
        skip();
        skip();
      } else if (ch() == (single ? U'\'' : U'"')) {
        break;
      } else if (!single && ch() == '\\' && is_break(ch(1))) {
        skip();
        skip_line();
        leading_blanks = true;
        break;
      } else if (!single && ch() == '\\') {
        size_t code_length = 0;
        switch (ch(1)) {
          case '0':
            text.push_back(0);
            break;
          case 'a':
            text.push_back(0x07);
            break;
          case 'b':
            text.push_back(0x08);
            break;
          case 't':
          case '\t':
            text.push_back(0x09);
            break;
          case 'n':
            text.push_back(0x0A);
            break;
          case 'v':
            text.push_back(0x0B);
            break;
          case 'f':
            text.push_back(0x0C);
            break;
          case 'r':
            text.push_back(0x0D);
            break;
          case 'e':
            text.push_back(0x1B);
            break;
          case ' ':
            text.push_back(0x20);
            break;
          case '"':
            text.push_back('"');
            break;
          case '/':
            text.push_back('/');
            break;
          case '\\':
            text.push_back('\\');
            break;
          case 'N':
            text.push_back(0x85);
            break;
          case '_':
            text.push_back(0xA0);
            break;
          case 'L':
            text.push_back(0x2028);
            break;
          case 'P':
            text.push_back(0x2029);
            break;
          case 'x':
            code_length = 2;
            break;
          case 'u':
            code_length = 4;
            break;
          case 'U':
            code_length = 8;
            break;
          default:
            error("while parsing a quoted scalar", t.start, "found unknown escape character");
        }
        skip();
        skip();
        if (code_length) {
          char32_t value = 0;
          for (size_t k = 0; k < code_length; ++k) {
            if (!is_hex(ch(k)))
              error("while parsing a quoted scalar", t.start,
                    "did not find expected hexdecimal number");
            value = (value << 4) + static_cast<char32_t>(hex_value(ch(k)));
          }
          if ((value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF)
            error("while parsing a quoted scalar", t.start,
                  "found invalid Unicode character escape code");
          text.push_back(value);
          for (size_t k = 0; k < code_length; ++k) skip();
        }
      } else {
        read(text);
      }
    }
    if (ch() == (single ? U'\'' : U'"')) break;
    while (is_blank(ch()) || is_break(ch())) {
      if (is_blank(ch())) {
        if (!leading_blanks)
          read(whitespaces);
        else
          skip();
      } else if (!leading_blanks) {
        whitespaces.clear();
        read_line(leading_break);
        leading_blanks = true;
      } else {
        read_line(trailing_breaks);
      }
    }
    // Line folding: one line break becomes a space; each further (empty) line stays a break.
    if (leading_blanks) {
      if (!leading_break.empty() && leading_break[0] == '\n') {
        if (trailing_breaks.empty())
          text.push_back(' ');
        else
          text += trailing_breaks;
      } else {
        text += leading_break;
        text += trailing_breaks;
      }
      leading_break.clear();
      trailing_breaks.clear();
    } else {
      text += whitespaces;
      whitespaces.clear();
    }
  }
  skip();
  t.end = mark_;
  t.value = utf8(text);
  return t;
}

Token Scanner::scan_plain_scalar() {
  Token t;
  t.type = TokenType::Scalar;
  t.style = ScalarStyle::Plain;
  t.start = t.end = mark_;
  std::u32string text, leading_break, trailing_breaks, whitespaces;
  bool leading_blanks = false;
  int indent = indent_ + 1;
  while (true) {
    if (mark_.column == 0 &&
        ((ch() == '-' && ch(1) == '-' && ch(2) == '-') ||
         (ch() == '.' && ch(1) == '.' && ch(2) == '.')) &&
        is_blankz(ch(3)))
      break;
    if (ch() == '#') break;
    while (!is_blankz(ch())) {
      if (flow_level_ && ch() == ':') {
        char32_t n = ch(1);
        if (n == ',' || n == '?' || n == '[' || n == ']' || n == '{' || n == '}')
          error("while scanning a plain scalar", t.start, "found unexpected ':'");
      }
      if ((ch() == ':' && is_blankz(ch(1))) ||
          (flow_level_ &&
           (ch() == ',' || ch() == '[' || ch() == ']' || ch() == '{' || ch() == '}')))
        break;
      if (leading_blanks || !whitespaces.empty()) {
        if (leading_blanks) {
          if (!leading_break.empty() && leading_break[0] == '\n') {
            if (trailing_breaks.empty())
              text.push_back(' ');
            else
              text += trailing_breaks;
          } else {
            text += leading_break;
            text += trailing_breaks;
          }
          leading_break.clear();
          trailing_breaks.clear();
          leading_blanks = false;
        } else {
          text += whitespaces;
          whitespaces.clear();
        }
      }
      read(text);
      t.end = mark_;
    }
    if (!(is_blank(ch()) || is_break(ch()))) break;
    while (is_blank(ch()) || is_break(ch())) {
      if (is_blank(ch())) {
        if (leading_blanks && mark_.column < indent && ch() == '\t')
          error("while scanning a plain scalar", t.start,
                "found a tab character that violates indentation");
        if (!leading_blanks)
          read(whitespaces);
        else
          skip();
      } else if (!leading_blanks) {
        whitespaces.clear();
        read_line(leading_break);
        leading_blanks = true;
      } else {
        read_line(trailing_breaks);
      }
    }
    if (!flow_level_ && mark_.column < indent) break;
  }
  if (leading_blanks) simple_key_allowed_ = true;
  t.value = utf8(text);
  return t;
}

}  // namespace lmeval::yaml
