# The typed chat conversation (its JSON reading and writing, shared by every renderer) and the
# Kimi K3 "XTML" chat renderer (namespace k3::text::chat), part of k3_text.
# Included from src/text/CMakeLists.txt after k3_module(text ...).
target_sources(k3_text PRIVATE
  chat/conversation_json.cc
  chat/k3_xtml.cc
  chat/k3_xtml_assistant.cc
  chat/k3_xtml_messages.cc
  chat/k3_xtml_options.cc
  chat/k3_xtml_writer.cc)

k3_test(text_chat_k3_test
  SOURCES
    chat/conversation_json_test.cc
    chat/k3_xtml_test.cc
    chat/k3_xtml_error_test.cc
  DEPS k3_text k3_base k3_testing nlohmann_json::nlohmann_json)

# GCC 12 at -O3 reports maybe-uninitialized inside libstdc++ for a moved
# std::optional<std::string> here (a false positive, GCC bug 105545).
set_source_files_properties(chat/k3_xtml_options.cc
  PROPERTIES COMPILE_OPTIONS "$<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>")
