// JSON access helpers that report the JSON path of a problem, and GPT-2's byte-to-char table.
#include <array>

#include "lmeval/core/error.hpp"
#include "tokenizer/pipeline.hpp"
#include "tokenizer/text.hpp"

namespace lmeval::tok {

Where Where::operator/(std::string_view key) const {
  return Where{file, path + "." + std::string(key)};
}

Where Where::operator[](size_t index) const {
  return Where{file, path + "[" + std::to_string(index) + "]"};
}

void fail(const Where& w, const std::string& message, std::string expected) {
  throw UserError(message, SourceLocation{w.file, 0, 0, w.path}, std::move(expected));
}

static const char* type_name(const Json& j) { return j.type_name(); }

const Json& expect_object(const Json& j, const Where& w) {
  if (!j.is_object()) fail(w, std::string("expected an object, found ") + type_name(j));
  return j;
}

const Json& req(const Json& j, const Where& w, const char* key) {
  expect_object(j, w);
  auto it = j.find(key);
  if (it == j.end()) fail(w / key, std::string("missing required field '") + key + "'");
  return *it;
}

std::string req_string(const Json& j, const Where& w, const char* key) {
  const Json& v = req(j, w, key);
  if (!v.is_string()) fail(w / key, std::string("expected a string, found ") + type_name(v));
  return v.get<std::string>();
}

std::string opt_string(const Json& j, const Where& w, const char* key, std::string dflt) {
  expect_object(j, w);
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return dflt;
  if (!it->is_string()) fail(w / key, std::string("expected a string, found ") + type_name(*it));
  return it->get<std::string>();
}

bool opt_bool(const Json& j, const Where& w, const char* key, bool dflt) {
  expect_object(j, w);
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return dflt;
  if (!it->is_boolean()) fail(w / key, std::string("expected a boolean, found ") + type_name(*it));
  return it->get<bool>();
}

int64_t opt_int(const Json& j, const Where& w, const char* key, int64_t dflt) {
  expect_object(j, w);
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return dflt;
  if (!it->is_number_integer()) {
    fail(w / key, std::string("expected an integer, found ") + type_name(*it));
  }
  return it->get<int64_t>();
}

namespace {

struct ByteTable {
  std::array<std::string, 256> to_char;
  std::array<int, 0x200> from_char;  // every mapped character is below U+0200
  ByteTable() {
    from_char.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
      char32_t c = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      append_utf8(to_char[b], c);
      from_char[c] = b;
    }
  }
};

const ByteTable& table() {
  static const ByteTable t;
  return t;
}

}  // namespace

const std::string& byte_to_char(unsigned char b) { return table().to_char[b]; }

int char_to_byte(char32_t c) { return c < 0x200 ? table().from_char[c] : -1; }

}  // namespace lmeval::tok

namespace lmeval {

std::string byte_level_spelling(std::string_view bytes) {
  std::string out;
  for (char c : bytes) out += tok::byte_to_char(static_cast<unsigned char>(c));
  return out;
}

bool is_byte_level_spelled(std::string_view token) {
  size_t i = 0;
  while (i < token.size())
    if (tok::char_to_byte(tok::next_cp(token, i)) < 0) return false;
  return true;
}

}  // namespace lmeval
