# Chat renderers for the K2 / K2-Thinking / K2.5 families (namespace k3::text::chat), part of
# k3_text: Moonshot's TypeScript tool-declaration encoder and the Jinja chat-template renderer.
# Included from src/text/CMakeLists.txt.
target_sources(k3_text PRIVATE
  chat/tool_ts.cc
  chat/tool_ts_parse.cc
  chat/tool_ts_py.cc
  chat/tool_ts_render.cc
  chat/jinja_chat.cc)

k3_test(text_chat_tool_ts_test
  SOURCES chat/tool_ts_test.cc
  DEPS k3_text k3_base k3_testing nlohmann_json::nlohmann_json)

k3_test(text_chat_jinja_test
  SOURCES
    chat/jinja_chat_test.cc
    chat/jinja_chat_golden_test.cc
  DEPS k3_text k3_base k3_testing nlohmann_json::nlohmann_json)
