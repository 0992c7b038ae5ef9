// Python's one-character string escapes, shared by the Jinja lexer and literal_eval.
#pragma once

#include <string>

namespace lmeval::tmpl {

// Appends the character a simple escape `\e` stands for (`\<newline>` stands for nothing) and
// returns true; false for escapes that need more input (\x \u \U \N, octal) or are not escapes.
inline bool append_simple_escape(char e, std::string& out) {
  switch (e) {
    case '\n':
      return true;
    case '\\':
      out += '\\';
      return true;
    case '\'':
      out += '\'';
      return true;
    case '"':
      out += '"';
      return true;
    case 'a':
      out += '\a';
      return true;
    case 'b':
      out += '\b';
      return true;
    case 'f':
      out += '\f';
      return true;
    case 'n':
      out += '\n';
      return true;
    case 'r':
      out += '\r';
      return true;
    case 't':
      out += '\t';
      return true;
    case 'v':
      out += '\v';
      return true;
    default:
      return false;
  }
}

}  // namespace lmeval::tmpl
