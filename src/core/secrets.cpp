// Masking of credentials in text (see secrets.hpp).
#include "lmeval/core/secrets.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace lmeval {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool is_key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// End (exclusive) of the value starting at `i`: a quoted string to its closing quote, a {...}
// or [...] to its balanced end, else up to ',', '}', ']', whitespace or the end.
size_t value_end(std::string_view s, size_t i) {
  if (i >= s.size()) return i;
  char c = s[i];
  if (c == '"' || c == '\'') {
    for (size_t k = i + 1; k < s.size(); ++k) {
      if (s[k] == '\\')
        ++k;
      else if (s[k] == c)
        return k + 1;
    }
    return s.size();
  }
  if (c == '{' || c == '[') {
    int depth = 0;
    char q = 0;
    for (size_t k = i; k < s.size(); ++k) {
      char d = s[k];
      if (q) {
        if (d == '\\')
          ++k;
        else if (d == q)
          q = 0;
      } else if (d == '"' || d == '\'') {
        q = d;
      } else if (d == '{' || d == '[') {
        ++depth;
      } else if ((d == '}' || d == ']') && --depth == 0) {
        return k + 1;
      }
    }
    return s.size();
  }
  size_t k = i;
  while (k < s.size() && s[k] != ',' && s[k] != '}' && s[k] != ']' && s[k] != '&' &&
         !std::isspace(static_cast<unsigned char>(s[k])))
    ++k;
  return k;
}

// Calls fn(begin, end) for each secret value's span in `s` (quotes kept outside the span).
template <class Fn>
void for_each_secret_span(std::string_view s, Fn fn) {
  size_t i = 0;
  while (i < s.size()) {
    if (!is_key_char(s[i]) || (i > 0 && is_key_char(s[i - 1]))) {
      ++i;
      continue;
    }
    size_t k = i;
    while (k < s.size() && is_key_char(s[k])) ++k;
    std::string_view key = s.substr(i, k - i);
    size_t j = k;
    if (j < s.size() && (s[j] == '"' || s[j] == '\'')) ++j;  // closing quote of a JSON key
    while (j < s.size() && s[j] == ' ') ++j;
    bool assign = j < s.size() && (s[j] == '=' || s[j] == ':');
    std::string lkey;
    for (char c : key) lkey += lower(c);
    if (lkey == "bearer" && k < s.size() && s[k] == ' ') {  // an Authorization header's value
      size_t b = k + 1, e = value_end(s, b);
      if (e > b) fn(b, e);
      i = std::max(e, k);
      continue;
    }
    // "--model_args token: unknown key ..." and validate's "model_args.token: ..." name a field
    // (SourceLocation's label), followed by our message, not by the value.
    auto preceded_by = [&](std::string_view p) {
      return i >= p.size() && s.substr(i - p.size(), p.size()) == p;
    };
    bool label = j < s.size() && s[j] == ':' && j == k &&
                 (preceded_by("--model_args ") || preceded_by("model_args."));
    if (assign && !label && is_secret_key(key)) {
      size_t b = j + 1;
      while (b < s.size() && s[b] == ' ') ++b;
      size_t e = value_end(s, b);
      std::string word;
      for (size_t q = b; q < e; ++q) word += lower(s[q]);
      if (word == "bearer" && e < s.size() && s[e] == ' ')
        e = value_end(s, e + 1);  // scheme + token
      size_t vb = b, ve = e;
      if (vb < ve && (s[vb] == '"' || s[vb] == '\'')) {
        ++vb;
        if (ve > vb && s[ve - 1] == s[b]) --ve;
      }
      if (ve > vb) fn(vb, ve);
      i = std::max(e, k);
      continue;
    }
    i = k;
  }
}

// Calls fn(begin, end) for the password of each URL with one (scheme://user:PASSWORD@host).
template <class Fn>
void for_each_url_password(std::string_view s, Fn fn) {
  for (size_t at = s.find("://"); at != std::string_view::npos; at = s.find("://", at + 3)) {
    const size_t b = at + 3;
    size_t e = b;
    while (e < s.size() && s[e] != '/' && s[e] != '@' && s[e] != '"' && s[e] != '\'' &&
           s[e] != ',' && !std::isspace(static_cast<unsigned char>(s[e])))
      ++e;
    if (e >= s.size() || s[e] != '@') continue;
    const size_t colon = s.substr(b, e - b).find(':');
    if (colon != std::string_view::npos && b + colon + 1 < e) fn(b + colon + 1, e);
  }
}

// The quoted values of the object or list in `span` (a header dict's values).
void quoted_values(std::string_view span, std::vector<std::string>& out) {
  for (size_t i = 0; i < span.size(); ++i) {
    if (span[i] != ':') continue;
    size_t b = i + 1;
    while (b < span.size() && span[b] == ' ') ++b;
    if (b >= span.size() || (span[b] != '"' && span[b] != '\'')) continue;
    const size_t e = value_end(span, b);
    if (e > b + 2) out.emplace_back(span.substr(b + 1, e - b - 2));
    i = e - 1;
  }
}

}  // namespace

std::string mask_url_passwords(std::string_view text) {
  std::string out;
  size_t last = 0;
  for_each_url_password(text, [&](size_t b, size_t e) {
    out.append(text.substr(last, b - last));
    out += "***";
    last = e;
  });
  out.append(text.substr(last));
  return out;
}

bool is_secret_key(std::string_view key) {
  std::string l;
  for (char c : key) l += lower(c == '-' ? '_' : c);
  for (const char* k :
       {"api_key", "apikey", "token", "auth_token", "access_token", "hf_token", "header", "headers",
        "authorization", "password", "secret", "secret_key", "openai_api_key", "x_api_key"})
    if (l == k) return true;
  return false;
}

std::string mask_secrets(std::string_view text) {
  std::string out;
  size_t last = 0;
  for_each_secret_span(text, [&](size_t b, size_t e) {
    if (b < last) return;
    out.append(text.substr(last, b - last));
    out += "***";
    last = e;
  });
  out.append(text.substr(last));
  return mask_url_passwords(out);
}

std::vector<std::string> secret_values_in(std::string_view text) {
  std::vector<std::string> out;
  for_each_secret_span(text, [&](size_t b, size_t e) {
    out.emplace_back(text.substr(b, e - b));
    // A header object's values one by one: a server may echo one of them alone.
    if (e > b && (text[b] == '{' || text[b] == '[')) quoted_values(text.substr(b, e - b), out);
  });
  for_each_url_password(text, [&](size_t b, size_t e) { out.emplace_back(text.substr(b, e - b)); });
  return out;
}

std::string redact(std::string_view text, const std::vector<std::string>& extra) {
  std::string out = mask_secrets(text);
  std::vector<std::string> values = extra;
  // The API backends' credential variables (the reference's and their SDKs' names).
  for (const char* var : {"OPENAI_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
                          "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "TEXTSYNTH_API_SECRET_KEY",
                          "WANDB_API_KEY", "WATSONX_API_KEY", "WATSONX_PASSWORD", "WATSONX_TOKEN"})
    if (const char* v = std::getenv(var); v && *v) values.emplace_back(v);
  for (const auto& v : values) {
    if (v.size() < 4 || v == "***") continue;
    for (size_t p; (p = out.find(v)) != std::string::npos;) out.replace(p, v.size(), "***");
  }
  return out;
}

}  // namespace lmeval
