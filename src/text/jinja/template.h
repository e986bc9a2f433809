// A Jinja2-compatible template engine for chat templates, rendering as Hugging Face transformers
// does: ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the loopcontrols
// extension, autoescape off, and a `tojson` filter equal to Python's json.dumps(x,
// ensure_ascii=False, indent=..., separators=..., sort_keys=...). Globals: range, namespace,
// dict, raise_exception. Not supported: template inheritance/includes/imports, recursive loops,
// `%` string formatting, str.format, *args/**kwargs, Unicode case mapping (upper/lower are ASCII).
//
// A Template is immutable after Parse; Render is const and thread-safe. Errors are values, never
// crashes: syntax errors and render errors are INVALID_ARGUMENT with "line N: ..." (a template's
// raise_exception(msg) gives "line N: template error: msg"); exceeded limits are
// RESOURCE_EXHAUSTED.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "text/jinja/value.h"

namespace k3::text::jinja {

struct Program;

struct TemplateOptions {
  bool trim_blocks = true;    // drop the newline after a block tag
  bool lstrip_blocks = true;  // drop spaces/tabs before a block tag at the start of a line
};

// Limits that keep hostile templates from running away; defaults suit real chat prompts.
struct RenderOptions {
  size_t max_output_bytes = size_t{64} << 20;  // also caps every string value
  int64_t max_steps = 50'000'000;              // evaluation steps (see Interpreter::Charge)
  int max_call_depth = 64;                     // nested macro calls
  uint32_t max_value_nodes = 1u << 22;         // elements in one list/dict value, nested ones too
  uint32_t max_value_depth = 256;              // nesting of lists/dicts
};

class Template {
 public:
  static base::Result<Template> Parse(std::string_view source, const TemplateOptions& options = {});

  // `context` must be a dict (the template's variables) or Undefined (no variables).
  base::Result<std::string> Render(const Value& context, const RenderOptions& options = {}) const;

 private:
  explicit Template(std::shared_ptr<const Program> program) : program_(std::move(program)) {}
  std::shared_ptr<const Program> program_;
};

}  // namespace k3::text::jinja
