#include "lmeval/core/file_names.hpp"

#include "lmeval/core/sha256.hpp"

namespace lmeval {

std::string safe_file_component(std::string_view name) {
  constexpr size_t kMax = 150;
  std::string out;
  for (unsigned char c : name) {
    if (c == '/' || c == '\\' || c == '%' || c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789ABCDEF";
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  // "." and ".." alone would name folders (inside samples_..._date.jsonl they cannot, but the
  // rule holds for every use).
  if (out == "." || out == "..") out = out == "." ? "%2E" : "%2E%2E";
  if (out.size() > kMax) {
    size_t cut = kMax - 17;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out = out.substr(0, cut) + "-" + sha256_hex(name).substr(0, 16);
  }
  return out;
}

}  // namespace lmeval
