// A Markdown pipe table of preformatted cells (unlike output's pytablewriter rendering, cells are
// never re-parsed as numbers, so "+0.0100" stays as written).
#pragma once

#include <string>
#include <vector>

namespace lmeval::analysis {

// right_aligned[c]: column c is right-aligned (numbers); columns beyond its size are left-aligned.
std::string text_table(const std::vector<std::string>& headers,
                       const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right_aligned);

}  // namespace lmeval::analysis
