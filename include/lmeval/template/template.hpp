// Jinja2-compatible template engine (task prompt templates and HF chat templates) and
// Python's ast.literal_eval.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "lmeval/core/error.hpp"
#include "lmeval/core/json.hpp"

namespace lmeval::tmpl {

// The Jinja2 Environment options that change output.
struct Options {
  bool keep_trailing_newline = true;
  bool trim_blocks = false;
  bool lstrip_blocks = false;
  // StrictUndefined (task templates) vs Jinja's default Undefined (transformers' chat env).
  bool strict_undefined = true;
  // transformers' env: `tojson` = json.dumps(ensure_ascii=False) without HTML escaping, globals
  // raise_exception/strftime_now, loop controls; otherwise Jinja's own htmlsafe `tojson`.
  bool chat = false;
  // random._randbelow(n) of the generator the `random` filter draws from (jinja2's do_random
  // calls random.choice on Python's global `random`); tasks give the run's global stream. Unset:
  // each rendering draws from a fresh random.Random(0).
  std::function<uint64_t(uint64_t)> randbelow;
};

// The reference's task environment: Environment(undefined=StrictUndefined,
// keep_trailing_newline=True) plus the regex_replace filter.
Options task_options();
// transformers' chat environment: ImmutableSandboxedEnvironment(trim_blocks=True,
// lstrip_blocks=True) with loopcontrols, default Undefined, its own tojson.
Options chat_options();

// Every parse/render failure. where().file is the origin, line/column point into the template.
// kind() tells what Python would raise: the reference's HFLM retries a chat rendering without
// system messages only on a jinja2 TemplateError (syntax, undefined, raise_exception), not on
// a plain Python error (TypeError, ZeroDivisionError, ... -> kPython).
class TemplateError : public UserError {
 public:
  enum class Kind { kSyntax, kUndefined, kRaised, kPython };
  TemplateError(Kind kind, const std::string& message, SourceLocation where,
                std::string expected = {});
  Kind kind() const { return kind_; }
  bool is_jinja_template_error() const { return kind_ != Kind::kPython; }

 private:
  Kind kind_;
};

struct CompiledTemplate;  // private

class Template {
 public:
  // Throws lmeval::UserError (origin, line, column, what was expected) on a syntax error.
  // `origin` names where the text came from, e.g. "task arc_easy, field doc_to_text".
  static Template parse(std::string_view source, const Options& opts, std::string origin);

  // Renders with `variables` (a JSON object) as top-level names. Throws lmeval::UserError on
  // render errors (undefined variable under strict mode, type errors, raise_exception(...)).
  std::string render(const Json& variables) const;

  const std::string& origin() const;
  // The template text (newlines normalised as Jinja does).
  const std::string& source() const;

 private:
  std::shared_ptr<const CompiledTemplate> impl_;
};

// tokenizer.apply_chat_template(messages, tokenize=False, ...) as transformers 5.x does it
// around the template: drops None-valued message keys, aliases reasoning fields
// (reasoning_content/thinking/reasoning), renders with messages, tools=None, documents=None,
// add_generation_prompt, the special tokens and kwargs (kwargs win), and for
// continue_final_message marks the final message's content and cuts the output there.
// `chat_template` must have been parsed with chat_options(). Errors throw TemplateError
// (transformers' ValueErrors as Kind::kPython).
struct ChatRequest {
  Json messages = Json::array();  // [{"role": ..., "content": ...}, ...]
  bool add_generation_prompt = false;
  bool continue_final_message = false;
  Json special_tokens = Json::object();  // tokenizer.special_tokens_map (bos_token, eos_token, ...)
  Json kwargs = Json::object();          // chat_template_args, enable_thinking, ...
};
std::string apply_chat_template(const Template& chat_template, const ChatRequest& request);

// One-shot helper: parse + render.
std::string render(std::string_view source, const Json& variables, const Options& opts,
                   std::string origin);

// Python ast.literal_eval for literals: str (all quote forms, prefixes r/u/b, escapes, implicit
// concatenation), int (incl. _ separators, 0x/0o/0b), float, True/False/None, list, tuple
// (-> array), set (-> array), dict, unary +/-. Throws lmeval::UserError on anything else.
Json literal_eval(std::string_view text);

}  // namespace lmeval::tmpl
