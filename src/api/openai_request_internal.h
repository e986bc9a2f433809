// Pieces of the OpenAI request parser shared between its files (not a public interface).
#pragma once

#include <set>
#include <string>

#include "api/openai_request.h"

namespace k3::api {

// The tool_choice errors, in OpenAI's wording (the Anthropic converter reports the same).
inline constexpr char kRequiredWithoutTools[] =
    "'tool_choice' is 'required' but no tools were given";
inline constexpr char kChoiceNotAFunction[] =
    "'tool_choice' object must be {type: function, function: {name}}";
inline constexpr char kChoiceNotDeclared[] =
    "'tool_choice' names a function that is not in 'tools'";

// A declared tool's name: 1-64 characters that fit the chat formats' call syntax, unique across
// *names (every tool list of the request). `where` is the tool ("tools[2]").
bool CheckToolName(const std::string& name, const std::string& where, std::set<std::string>* names,
                   ApiError* error);
// A validated chat body (messages, tools, tool_choice, response_format, thinking, ...) onto the
// typed request; what the typed form cannot hold is a 400 naming the field.
bool ToChatRequest(const Json& body, serve::ChatRequest* out, ApiError* error);

bool ParseSampling(const Json& body, const ApiOptions& options, serve::GenerateRequest* out,
                   ApiError* error);
bool ValidateMessages(const Json& messages, ApiError* error);
bool ValidateTools(const Json& body, ApiError* error);
// A chat body's tools, tool_choice, response_format, thinking and template kwargs.
bool ValidateChatExtras(const Json& body, ApiError* error);

}  // namespace k3::api
