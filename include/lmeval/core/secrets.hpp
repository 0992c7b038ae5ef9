// Keeping credentials out of messages: values of secret-bearing keys (api_key, token,
// auth_token, header, ...) in k=v, JSON or Python-dict text are masked, as are the values of
// credential environment variables and those named on the command line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lmeval {

// True for a model_args/header key whose value is a credential (case-insensitive).
bool is_secret_key(std::string_view key);

// `text` with the value after every secret key masked as "***": `api_key=sk-1,x=2` ->
// `api_key=***,x=2`; `{"api_key": "sk-1"}` -> `{"api_key": "***"}`; a `header` object is masked
// whole; `Bearer sk-1` -> `Bearer ***`. Works on malformed text too (unterminated quotes mask to
// the end).
std::string mask_secrets(std::string_view text);

// `text` with the password of every URL that has one masked: http://user:***@host.
// mask_secrets does this too.
std::string mask_url_passwords(std::string_view text);

// The values that mask_secrets would hide in `text` (to hide them elsewhere too), a header
// object's values also one by one.
std::vector<std::string> secret_values_in(std::string_view text);

// mask_secrets, then every occurrence of a credential environment variable's value
// (OPENAI_API_KEY, HF_TOKEN, ...) and of `extra` values (4 characters or longer) replaced by "***".
std::string redact(std::string_view text, const std::vector<std::string>& extra = {});

}  // namespace lmeval
