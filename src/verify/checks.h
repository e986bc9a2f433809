// The check areas. Each Run*Checks sends its requests through ctx.client and returns one
// CheckResult per check, in a fixed order (the report keeps it).
#pragma once

#include "verify/check.h"

namespace k3::verify {

CheckList RunModelChecks(CheckContext& ctx);  // may set ctx.model from /v1/models
CheckList RunValidationChecks(const CheckContext& ctx);
CheckList RunToolChecks(const CheckContext& ctx);
CheckList RunDynamicToolChecks(const CheckContext& ctx);  // part of the "tools" area
CheckList RunStructuredChecks(const CheckContext& ctx);
CheckList RunStreamChecks(const CheckContext& ctx);
CheckList RunUsageChecks(const CheckContext& ctx);
CheckList RunCompletionsChecks(const CheckContext& ctx);
CheckList RunAnthropicChecks(const CheckContext& ctx);
// Thinking signatures and tool_use ids across turns (anthropic_signature_checks.cc).
CheckList RunAnthropicSessionChecks(const CheckContext& ctx);
// What Claude Code sends: adaptive thinking, system messages inside messages, tool_result images,
// documents and search results, context-limit wordings; reasoning_effort none..max
// (anthropic_agent_checks.cc).
CheckList RunAnthropicAgentChecks(const CheckContext& ctx);
CheckList RunReasoningChecks(const CheckContext& ctx);
CheckList RunResponsesChecks(const CheckContext& ctx);

}  // namespace k3::verify
