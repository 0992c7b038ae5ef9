// UTF-8 and nesting checks of user-supplied text (see input_checks.hpp).
#include "lmeval/core/input_checks.hpp"

#include <cstdio>

#include "lmeval/core/error.hpp"

namespace lmeval {

std::optional<size_t> first_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    char32_t cp;
    if (c >= 0xC2 && c <= 0xDF)
      len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
      len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
      len = 4, cp = c & 0x07;
    else
      return i;  // continuation byte without a lead, 0xC0/0xC1 (overlong), 0xF5..0xFF
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return i;
    i += len;
  }
  return std::nullopt;
}

int line_of_offset(std::string_view text, size_t offset) {
  int line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i)
    if (text[i] == '\n') ++line;
  return line;
}

void require_utf8(std::string_view text, const std::string& file, size_t base_offset,
                  int base_line) {
  auto bad = first_invalid_utf8(text);
  if (!bad) return;
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(text[*bad]));
  int line = base_line + line_of_offset(text, *bad) - 1;
  throw UserError(std::string("byte ") + hex + " at byte offset " +
                      std::to_string(base_offset + *bad) + " is not valid UTF-8",
                  {file, line, 0, ""},
                  "UTF-8 text; re-encode the file, e.g. iconv -f latin1 -t utf-8");
}

std::optional<size_t> json_nesting_exceeds(std::string_view s, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > limit) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

void require_json_nesting(std::string_view text, const std::string& file, size_t base_offset,
                          int base_line) {
  auto at = json_nesting_exceeds(text);
  if (!at) return;
  throw UserError("lists/objects nested more than " + std::to_string(kMaxNestingDepth) +
                      " levels deep (at byte offset " + std::to_string(base_offset + *at) + ")",
                  {file, base_line + line_of_offset(text, *at) - 1, 0, ""},
                  "at most " + std::to_string(kMaxNestingDepth) + " levels of nesting");
}

void require_json_nesting(std::string_view text, const SourceLocation& where) {
  auto at = json_nesting_exceeds(text);
  if (!at) return;
  throw UserError("lists/objects nested more than " + std::to_string(kMaxNestingDepth) +
                      " levels deep (at byte offset " + std::to_string(*at) + ")",
                  where, "at most " + std::to_string(kMaxNestingDepth) + " levels of nesting");
}

void throw_json_number_overflow(const std::exception& e, std::string_view text,
                                const std::string& file, int base_line, const std::string& field) {
  const std::string what = e.what();
  std::string number;
  if (auto a = what.find('\''); a != std::string::npos)
    if (auto b = what.find('\'', a + 1); b != std::string::npos)
      number = what.substr(a + 1, b - a - 1);
  int line = base_line;
  if (!number.empty())
    if (auto at = text.find(number); at != std::string_view::npos)
      line = base_line + line_of_offset(text, at) - 1;
  // The part goes into the message, not the location: "header: <text>" reads as a header value
  // to the secret masking (secrets.hpp), which would mask the message's first word.
  throw UserError("the number " + (number.empty() ? std::string("in it") : number.substr(0, 40)) +
                      (field.empty() ? "" : " in the " + field) + " is out of range",
                  {file, line, 0, ""},
                  "numbers a double can hold (magnitude at most about 1.8e308)");
}

int64_t check_batch_size(const std::string& text, const std::string& field) {
  if (text == "auto") return 0;
  std::string digits = text.rfind("auto:", 0) == 0 ? text.substr(5) : text;
  bool whole = !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
  size_t first = whole ? digits.find_first_not_of('0') : 0;
  bool in_range = whole && first != std::string::npos && digits.size() - first <= 10 &&
                  std::stoll(digits.substr(first)) <= kMaxBatchSize;
  if (!in_range)
    throw UserError(
        "batch size '" + text + "' is " + (whole ? "out of range" : "not valid"), {"", 0, 0, field},
        "a whole number from 1 to " + std::to_string(kMaxBatchSize) + ", auto or auto:N");
  return std::stoll(digits.substr(first));
}

std::string json_error_text(std::string_view what) {
  if (what.rfind("[json.exception.", 0) == 0) {
    auto close = what.find("] ");
    if (close != std::string_view::npos) what.remove_prefix(close + 2);
  }
  return std::string(what);
}

}  // namespace lmeval
