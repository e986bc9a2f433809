// Pieces of the OpenAI request parser shared between its files (not a public interface).
#pragma once

#include "api/openai_request.h"

namespace k3::api {

bool ParseSampling(const Json& body, const ApiOptions& options, serve::GenerateRequest* out,
                   ApiError* error);
bool ValidateMessages(const Json& messages, ApiError* error);
bool ValidateTools(const Json& body, ApiError* error);

}  // namespace k3::api
