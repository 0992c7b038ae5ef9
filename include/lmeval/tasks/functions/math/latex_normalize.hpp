// The clean-up math-verify applies to an extracted LaTeX answer before parsing it
// (latex2sympy2_extended's normalize_latex with math-verify's LatexExtractionConfig settings:
// basic LaTeX, units, malformed operators, nits, boxed content).
#pragma once

#include <string>
#include <string_view>

namespace lmeval::tasks::math {

enum class BoxedMode { All, Last };

// The content of the \boxed{}/\fbox{} commands, right to left: all of them joined by commas, or
// (Last) the last one and those just before it separated from it by a short connective.
std::string extract_boxed_content(std::string_view text, BoxedMode mode);

std::string normalize_latex(std::string_view text, BoxedMode mode);

}  // namespace lmeval::tasks::math
