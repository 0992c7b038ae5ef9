// CPython's case tables (generated: scripts/gen_unicode_case_tables.py). Internal to src/core.
#pragma once

#include <cstddef>

namespace lmeval::unicode::case_data {

struct CaseMapping {
  char32_t from;
  char32_t to[3];  // unused trailing entries are 0
};

struct CodeRange {
  char32_t lo, hi;
};

// Sorted by code point.
extern const CaseMapping kLower[];
extern const size_t kLower_size;
extern const CaseMapping kUpper[];
extern const size_t kUpper_size;
extern const CodeRange kCased[];
extern const size_t kCased_size;
extern const CodeRange kCaseIgnorable[];
extern const size_t kCaseIgnorable_size;

}  // namespace lmeval::unicode::case_data
