# The Jinja2-compatible chat-template engine (namespace k3::text::jinja), part of k3_text.
# Included from src/text/CMakeLists.txt after k3_module(text ...).
target_sources(k3_text PRIVATE
  jinja/value.cc
  jinja/py_format.cc
  jinja/py_str.cc
  jinja/lexer.cc
  jinja/parser_stmt.cc
  jinja/parser_expr.cc
  jinja/call_args.cc
  jinja/operators.cc
  jinja/methods.cc
  jinja/predicates.cc
  jinja/filters.cc
  jinja/filters_seq.cc
  jinja/builtins.cc
  jinja/eval.cc
  jinja/exec.cc
  jinja/template.cc)

k3_test(text_jinja_test
  SOURCES
    jinja/lexer_test.cc
    jinja/template_test.cc
    jinja/filters_test.cc
    jinja/py_format_test.cc
    jinja/chat_template_golden_test.cc
  DEPS k3_text k3_base k3_testing nlohmann_json::nlohmann_json)
