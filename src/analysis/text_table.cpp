// Markdown pipe tables with columns padded to their widest cell (counted in code points).
#include "analysis/text_table.hpp"

#include <algorithm>

namespace lmeval::analysis {

namespace {
std::size_t width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}
std::string pad(const std::string& s, std::size_t w, bool right) {
  std::string fill(w > width(s) ? w - width(s) : 0, ' ');
  return right ? fill + s : s + fill;
}
}  // namespace

std::string text_table(const std::vector<std::string>& headers,
                       const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right_aligned) {
  std::vector<std::size_t> w(headers.size(), 3);
  for (std::size_t c = 0; c < headers.size(); ++c) {
    w[c] = std::max(w[c], width(headers[c]));
    for (const auto& r : rows)
      if (c < r.size()) w[c] = std::max(w[c], width(r[c]));
  }
  auto right = [&](std::size_t c) { return c < right_aligned.size() && right_aligned[c]; };
  std::string out = "|";
  // Appended piece by piece: `" " + string` trips GCC 12's false -Wrestrict warning.
  for (std::size_t c = 0; c < headers.size(); ++c) {
    out += ' ';
    out += pad(headers[c], w[c], false);
    out += " |";
  }
  out += "\n|";
  for (std::size_t c = 0; c < headers.size(); ++c)
    out += right(c) ? std::string(w[c] + 1, '-') + ":|" : std::string(w[c] + 2, '-') + "|";
  out += "\n";
  for (const auto& r : rows) {
    out += "|";
    for (std::size_t c = 0; c < headers.size(); ++c) {
      out += ' ';
      out += pad(c < r.size() ? r[c] : "", w[c], right(c));
      out += " |";
    }
    out += "\n";
  }
  return out;
}

}  // namespace lmeval::analysis
