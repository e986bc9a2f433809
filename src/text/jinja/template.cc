#include "text/jinja/template.h"

#include "text/jinja/interpreter.h"
#include "text/jinja/parser.h"

namespace k3::text::jinja {

base::Result<Template> Template::Parse(std::string_view source, const TemplateOptions& options) {
  LexOptions lex{options.trim_blocks, options.lstrip_blocks};
  K3_ASSIGN_OR_RETURN(std::unique_ptr<Program> program, ParseTemplate(source, lex));
  return Template(std::shared_ptr<const Program>(std::move(program)));
}

base::Result<std::string> Template::Render(const Value& context,
                                           const RenderOptions& options) const {
  if (!context.is_dict() && !context.is_undefined()) {
    return base::InvalidArgument("the template context must be a dict");
  }
  auto root = std::make_shared<Frame>();
  if (context.is_dict()) root->base = &context.as_dict();
  std::string out;
  Interpreter interp(options, &out);
  auto flow = interp.Exec(program_->body, root);
  if (!flow.ok()) return flow.status();
  return out;
}

}  // namespace k3::text::jinja
