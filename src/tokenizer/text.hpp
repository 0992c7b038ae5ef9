// Unicode helpers for the tokenizer pipeline: UTF-8 stepping, lossy decoding, Rust char predicates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lmeval/core/unicode.hpp"

namespace lmeval::tok {

// Decodes the code point at s[i] (s must be valid UTF-8) and advances i past it.
inline char32_t next_cp(std::string_view s, size_t& i) {
  auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) {
    ++i;
    return b;
  }
  if (b < 0xe0) {
    char32_t c = ((b & 0x1f) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3f);
    i += 2;
    return c;
  }
  if (b < 0xf0) {
    char32_t c = ((b & 0x0f) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3f) << 6) |
                 (static_cast<unsigned char>(s[i + 2]) & 0x3f);
    i += 3;
    return c;
  }
  char32_t c = ((b & 0x07) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3f) << 12) |
               ((static_cast<unsigned char>(s[i + 2]) & 0x3f) << 6) |
               (static_cast<unsigned char>(s[i + 3]) & 0x3f);
  i += 4;
  return c;
}

// Byte length of the UTF-8 sequence that starts with lead byte b (valid UTF-8 assumed).
inline size_t utf8_len(unsigned char b) { return b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4; }

using lmeval::unicode::append_utf8;

// Valid UTF-8 is returned unchanged; each maximal ill-formed subsequence becomes one U+FFFD
// (the rule of Rust's String::from_utf8_lossy and Python's errors="replace").
std::string utf8_lossy(std::string_view bytes);
bool is_valid_utf8(std::string_view bytes);

// Character classes as Hugging Face tokenizers has them (tables probed from the library).
bool is_whitespace(char32_t c);        // White_Space
bool is_numeric(char32_t c);           // N*
bool is_rust_punctuation(char32_t c);  // ASCII punctuation or P*
bool is_word_char(char32_t c);         // regex \w: Alphabetic, M*, Nd, Pc, Join_Control
bool is_combining_mark(char32_t c);    // removed by the StripAccents normalizer
bool is_bert_strip_mark(char32_t c);   // removed by BertNormalizer's strip_accents (after NFD)
bool is_bert_control(char32_t c);      // Cc/Cf/Co except \t \n \r
bool is_cjk(char32_t c);               // BERT's "Chinese character" blocks

enum class NormalForm { kNFC, kNFD, kNFKC, kNFKD };
std::string unicode_normalize(std::string_view s, NormalForm form);
// Per-character full lowercase mapping (Rust char::to_lowercase; no final-sigma context).
std::string lowercase(std::string_view s);

}  // namespace lmeval::tok
