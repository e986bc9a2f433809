# Model-output parsers (namespace k3::text::output), part of k3_text.
# Included from src/text/CMakeLists.txt after k3_module(text ...).
target_sources(k3_text PRIVATE
  output/format_machine.cc
  output/text_util.cc
  output/tool_names.cc
  output/xtml_tag.cc
  output/k2_machine.cc
  output/k3_machine.cc
  output/k3_blocks.cc
  output/output_parser.cc)

k3_test(text_output_test
  SOURCES
    output/text_util_test.cc
    output/k2_parser_test.cc
    output/k3_parser_test.cc
    output/chunking_property_test.cc
  DEPS k3_text k3_base k3_testing nlohmann_json::nlohmann_json)
