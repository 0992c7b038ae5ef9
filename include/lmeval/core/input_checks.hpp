// Checks every text read from a user's file passes before a parser or printer sees it: UTF-8
// validity and the nesting limit (so no recursive parser or printer can run out of stack).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lmeval/core/error.hpp"

namespace lmeval {

// Deepest nesting of lists/mappings accepted in JSON rows, YAML files and JSON arguments
// (docs/data.md, "Limits"). Python's json and PyYAML stop near 1000 (RecursionError); 512 leaves
// room for every real dataset while keeping recursive printers far from the stack's end.
inline constexpr int kMaxNestingDepth = 512;

// Byte offset of the first byte that does not start or continue a valid UTF-8 sequence
// (overlong forms, surrogates and code points above U+10FFFF count as invalid).
std::optional<size_t> first_invalid_utf8(std::string_view text);

// 1-based line of byte `offset` in `text`.
int line_of_offset(std::string_view text, size_t offset);

// Throws UserError "<file>:<line>: byte 0xNN at byte offset N is not UTF-8 (expected UTF-8
// text)" when `text` is not valid UTF-8. `base_offset`/`base_line` place `text` inside a larger
// file (a JSONL line).
void require_utf8(std::string_view text, const std::string& file, size_t base_offset = 0,
                  int base_line = 1);

// Byte offset at which the bracket nesting of JSON `text` exceeds `limit` (brackets inside
// strings ignored); nullopt when it never does. Linear and non-recursive.
std::optional<size_t> json_nesting_exceeds(std::string_view text, int limit = kMaxNestingDepth);

// Throws UserError naming file, line and byte offset when JSON `text` nests deeper than
// kMaxNestingDepth.
void require_json_nesting(std::string_view text, const std::string& file, size_t base_offset = 0,
                          int base_line = 1);
// The same for JSON given in a flag or a field: UserError at `where`, naming the byte offset and
// never quoting the text (it may hold a secret).
void require_json_nesting(std::string_view text, const SourceLocation& where);

// nlohmann's parser throws out_of_range 406 ("number overflow parsing '1e999'"), not a
// parse_error, for a number beyond a double's range, so sites that catch parse_error let it out as
// an internal error. The UserError for it, at the number's line in `file` (`text` as above; the
// number is found by its text). `field` names the part of the file it is in ("safetensors
// header"), or is empty.
[[noreturn]] void throw_json_number_overflow(const std::exception& e, std::string_view text,
                                             const std::string& file, int base_line = 1,
                                             const std::string& field = "");

// A batch size as text: "N", "auto" or "auto:N" (the reference's HFLM forms), N a whole number
// from 1 to kMaxBatchSize. Returns N (0 for a bare "auto"); UserError naming `field` otherwise.
inline constexpr int64_t kMaxBatchSize = 2147483647;
int64_t check_batch_size(const std::string& text, const std::string& field);

// nlohmann's exception text without its "[json.exception.parse_error.101] " prefix, for messages
// written to users.
std::string json_error_text(std::string_view what);

}  // namespace lmeval
