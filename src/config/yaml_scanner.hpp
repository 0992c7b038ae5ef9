// The YAML tokenizer of libyaml (the parser behind the reference's yaml.CSafeLoader),
// reimplemented.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace lmeval::yaml {

struct Mark {
  size_t index = 0;
  int line = 0;    // 0-based
  int column = 0;  // 0-based, in code points
};

enum class TokenType {
  StreamStart,
  StreamEnd,
  VersionDirective,
  TagDirective,
  DocumentStart,
  DocumentEnd,
  BlockSequenceStart,
  BlockMappingStart,
  BlockEnd,
  FlowSequenceStart,
  FlowSequenceEnd,
  FlowMappingStart,
  FlowMappingEnd,
  BlockEntry,
  FlowEntry,
  Key,
  Value,
  Alias,
  Anchor,
  Tag,
  Scalar
};

enum class ScalarStyle { Plain, SingleQuoted, DoubleQuoted, Literal, Folded };

struct Token {
  TokenType type = TokenType::StreamStart;
  Mark start, end;
  std::string value;   // scalar text, anchor/alias name, tag handle, %TAG handle (UTF-8)
  std::string suffix;  // tag suffix, %TAG prefix
  ScalarStyle style = ScalarStyle::Plain;
  int major = 0, minor = 0;  // %YAML
};

// Throws lmeval::UserError (naming `origin`, line and column) on malformed input, with libyaml's
// wording of the problem.
class Scanner {
 public:
  Scanner(std::u32string text, std::string origin);
  const Token& peek();
  Token next();
  [[noreturn]] void fail(const std::string& context, Mark context_mark, const std::string& problem,
                         Mark problem_mark) const;
  const std::string& origin() const { return origin_; }

 private:
  struct SimpleKey {
    bool possible = false, required = false;
    size_t token_number = 0;
    Mark mark;
  };

  char32_t ch(size_t k = 0) const { return pos_ + k < text_.size() ? text_[pos_ + k] : 0; }
  void skip();
  void skip_line();
  void read(std::u32string& out);
  void read_line(std::u32string& out);
  [[noreturn]] void error(const std::string& context, Mark context_mark,
                          const std::string& problem);

  void fetch_more_tokens();
  void fetch_next_token();
  void stale_simple_keys();
  void save_simple_key();
  void remove_simple_key();
  void roll_indent(int column, long number, TokenType type, Mark mark);
  void unroll_indent(int column);
  void push(Token t) { tokens_.push_back(std::move(t)); }
  Token simple(TokenType type);

  void fetch_stream_end();
  void fetch_directive();
  void fetch_document_indicator(TokenType type);
  void fetch_flow_collection_start(TokenType type);
  void fetch_flow_collection_end(TokenType type);
  void fetch_flow_entry();
  void fetch_block_entry();
  void fetch_key();
  void fetch_value();
  void scan_to_next_token();
  Token scan_directive();
  std::string scan_tag_handle(bool directive, Mark start);
  std::string scan_tag_uri(bool uri_char, bool directive, const std::string& head, Mark start);
  Token scan_anchor(TokenType type);
  Token scan_tag();
  Token scan_block_scalar(bool literal);
  void scan_block_scalar_breaks(int& indent, std::u32string& breaks, Mark start, Mark& end);
  Token scan_flow_scalar(bool single);
  Token scan_plain_scalar();

  std::u32string text_;
  std::string origin_;
  size_t pos_ = 0;
  Mark mark_;
  std::deque<Token> tokens_;
  size_t tokens_parsed_ = 0;
  bool token_available_ = false;
  bool stream_start_produced_ = false;
  bool stream_end_produced_ = false;
  int indent_ = -1;
  std::vector<int> indents_;
  bool simple_key_allowed_ = false;
  std::vector<SimpleKey> simple_keys_;
  int flow_level_ = 0;
};

// Decodes a YAML stream as libyaml's reader does: a UTF-16 BOM selects UTF-16, otherwise UTF-8
// (a UTF-8 BOM is dropped); invalid sequences and control characters are errors.
std::u32string decode_stream(std::string_view bytes, const std::string& origin);

}  // namespace lmeval::yaml
