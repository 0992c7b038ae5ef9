// Unicode helpers for the tokenizer pipeline: HF-probed character classes, ICU normalization.
#include "tokenizer/text.hpp"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <iterator>

#include "lmeval/core/error.hpp"

namespace lmeval::tok {

// Length of the valid UTF-8 sequence at s[i], or 0 with `bad` set to the length of the maximal
// ill-formed prefix (at least 1), following the Unicode "maximal subpart" practice.
static size_t valid_seq(std::string_view s, size_t i, size_t& bad) {
  auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf;
  if (b >= 0xc2 && b <= 0xdf) {
    n = 2;
  } else if (b == 0xe0) {
    n = 3;
    lo = 0xa0;
  } else if (b >= 0xe1 && b <= 0xec) {
    n = 3;
  } else if (b == 0xed) {
    n = 3;
    hi = 0x9f;
  } else if (b >= 0xee && b <= 0xef) {
    n = 3;
  } else if (b == 0xf0) {
    n = 4;
    lo = 0x90;
  } else if (b >= 0xf1 && b <= 0xf3) {
    n = 4;
  } else if (b == 0xf4) {
    n = 4;
    hi = 0x8f;
  } else {
    bad = 1;
    return 0;
  }
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) {
      bad = k;
      return 0;
    }
    auto c = static_cast<unsigned char>(s[i + k]);
    unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xbf;
    if (c < l || c > h) {
      bad = k;
      return 0;
    }
  }
  return n;
}

bool is_valid_utf8(std::string_view s) {
  size_t i = 0, bad = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = valid_seq(s, i, bad);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string utf8_lossy(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  size_t i = 0;
  while (i < s.size()) {
    size_t bad = 0;
    size_t n = valid_seq(s, i, bad);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      i += bad;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

namespace {

struct CpRange {
  char32_t lo, hi;
};
struct LowerEntry {
  char32_t cp;
  const char* lower;
};

#include "tokenizer/hf_unicode_tables.inc"

template <size_t N>
bool in_table(const CpRange (&table)[N], char32_t c) {
  const CpRange* end = table + N;
  const CpRange* it =
      std::upper_bound(table, end, c, [](char32_t v, const CpRange& r) { return v < r.lo; });
  return it != table && c <= (it - 1)->hi;
}

}  // namespace

// The classes below come from tables probed out of Hugging Face tokenizers itself, so they follow
// its (older) Unicode data rather than ICU's.
bool is_whitespace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0d);
  return in_table(kHfWhitespace, c);
}

bool is_numeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return in_table(kHfNumeric, c);
}

bool is_rust_punctuation(char32_t c) {
  if (c < 0x80) {
    return (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) ||
           (c >= 0x7b && c <= 0x7e);
  }
  return in_table(kHfPunctuation, c);
}

bool is_word_char(char32_t c) {
  if (c < 0x80) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_';
  }
  return in_table(kHfWordChar, c);
}

bool is_combining_mark(char32_t c) { return c >= 0x80 && in_table(kHfCombiningMark, c); }

bool is_bert_strip_mark(char32_t c) { return c >= 0x80 && in_table(kHfBertStripMark, c); }

bool is_bert_control(char32_t c) { return in_table(kHfBertControl, c); }

bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

static bool is_ascii(std::string_view s) {
  for (char ch : s) {
    if (static_cast<unsigned char>(ch) >= 0x80) return false;
  }
  return true;
}

std::string unicode_normalize(std::string_view s, NormalForm form) {
  if (is_ascii(s)) return std::string(s);
  UErrorCode err = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  switch (form) {
    case NormalForm::kNFC:
      n = icu::Normalizer2::getNFCInstance(err);
      break;
    case NormalForm::kNFD:
      n = icu::Normalizer2::getNFDInstance(err);
      break;
    case NormalForm::kNFKC:
      n = icu::Normalizer2::getNFKCInstance(err);
      break;
    case NormalForm::kNFKD:
      n = icu::Normalizer2::getNFKDInstance(err);
      break;
  }
  if (U_FAILURE(err)) throw RuntimeError("ICU normalizer unavailable");
  icu::UnicodeString in =
      icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
  icu::UnicodeString out = n->normalize(in, err);
  if (U_FAILURE(err)) throw RuntimeError("ICU normalization failed");
  std::string result;
  out.toUTF8String(result);
  return result;
}

std::string lowercase(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      out += static_cast<char>(b >= 'A' && b <= 'Z' ? b + 32 : b);
      ++i;
      continue;
    }
    size_t start = i;
    char32_t c = next_cp(s, i);
    const LowerEntry* end = kHfLowercase + std::size(kHfLowercase);
    const LowerEntry* it = std::lower_bound(
        kHfLowercase, end, c, [](const LowerEntry& e, char32_t v) { return e.cp < v; });
    if (it != end && it->cp == c) {
      out += it->lower;
    } else {
      out.append(s, start, i - start);
    }
  }
  return out;
}

}  // namespace lmeval::tok
