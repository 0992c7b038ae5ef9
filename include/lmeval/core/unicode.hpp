// UTF-8 decoding and the Python str predicates/case mappings lm-eval needs.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lmeval::unicode {

// Calls fn(codepoint, raw_bytes) for each code point; invalid bytes come out as U+FFFD
// (one per invalid byte, as Python's errors="replace").
void for_each_codepoint(std::string_view s,
                        const std::function<void(char32_t, std::string_view)>& fn);
std::u32string decode(std::string_view s);
// The code point starting at byte i (U+FFFD for an invalid byte) and its length in bytes.
size_t decode_at(std::string_view s, size_t i, char32_t& out);
std::string encode(std::u32string_view s);
void append_utf8(std::string& out, char32_t c);
// Number of code points (Python len(str)).
size_t length(std::string_view s);
bool is_valid_utf8(std::string_view s);

// Python str.isspace() for one character (bidi WS/B/S or category Zs).
bool py_isspace(char32_t c);
// Python str.split() with no argument: the runs of non-whitespace (py_isspace), in order.
std::vector<std::string> py_split(std::string_view s);
// Python str.isdigit() for one character (Numeric_Type Digit or Decimal).
bool py_isdigit(char32_t c);
// The value of a decimal digit (category Nd, as Python's int() and float() read them: '٣' is 3),
// or -1 for any other character.
int py_decimal(char32_t c);
// Python str.isdigit() of a whole string (false when empty).
bool py_isdigit(std::string_view s);
// True for code points in Python's non-printable categories (Cc Cf Cs Co Cn Zl Zp Zs).
bool is_nonprintable_category(char32_t c);
// Unicode general category P* (punctuation).
bool is_punctuation(char32_t c);
// A character of Python re's \w in a str pattern: str.isalnum() (L*, N*) or '_'.
bool py_is_word_char(char32_t c);
// Python's identifier classes (XID_Start plus '_', XID_Continue): str.isidentifier() of a whole
// string is py_is_id_start(first) and py_is_id_continue(rest).
bool py_is_id_start(char32_t c);
bool py_is_id_continue(char32_t c);
bool py_isidentifier(std::string_view s);

// Python str.strip()/rstrip()/lstrip() with no argument (Unicode whitespace).
std::string_view py_strip(std::string_view s);
std::string_view py_rstrip(std::string_view s);
std::string_view py_lstrip(std::string_view s);
// Python str.lower()/upper(): full case mappings ('ß' -> "SS") and the final sigma rule, from
// CPython's own tables (src/core/unicode_case_data.cpp).
std::string py_lower(std::string_view s);
std::string py_upper(std::string_view s);

}  // namespace lmeval::unicode
