#include "text/jinja/call_args.h"

#include <string>

#include "text/jinja/py_str.h"

namespace k3::text::jinja {

base::Result<std::vector<Value>> BindArgs(std::string_view function, const CallArgs& args,
                                          std::initializer_list<std::string_view> params,
                                          size_t num_required) {
  std::string fn(function);
  if (args.positional.size() > params.size()) {
    return base::InvalidArgument(fn + "() takes at most " + std::to_string(params.size()) +
                                 " argument(s) (" + std::to_string(args.positional.size()) +
                                 " given)");
  }
  std::vector<Value> bound(params.size());
  std::vector<bool> given(params.size(), false);
  for (size_t i = 0; i < args.positional.size(); ++i) {
    bound[i] = args.positional[i];
    given[i] = true;
  }
  for (const auto& [name, value] : args.keyword) {
    size_t index = 0;
    for (std::string_view param : params) {
      if (param == name) break;
      ++index;
    }
    if (index == params.size()) {
      return base::InvalidArgument(fn + "() got an unexpected keyword argument '" + name + "'");
    }
    if (given[index]) {
      return base::InvalidArgument(fn + "() got multiple values for argument '" + name + "'");
    }
    bound[index] = value;
    given[index] = true;
  }
  for (size_t i = 0; i < num_required; ++i) {
    if (!given[i]) {
      return base::InvalidArgument(fn + "() missing required argument '" +
                                   std::string(params.begin()[i]) + "'");
    }
  }
  return bound;
}

base::Result<int64_t> IntArg(const Value& value, std::string_view what) {
  if (value.is_int() || value.is_bool()) return value.as_int();
  return base::InvalidArgument(Cat({what, " must be an integer, not ", value.TypeName()}));
}

base::Result<std::string> StringArg(const Value& value, std::string_view what) {
  if (value.is_string()) return value.as_string();
  return base::InvalidArgument(Cat({what, " must be a string, not ", value.TypeName()}));
}

}  // namespace k3::text::jinja
