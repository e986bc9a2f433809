#include "api/service.h"

#include <chrono>
#include <ctime>
#include <mutex>
#include <random>

#include "api/anthropic_request.h"
#include "api/anthropic_response.h"
#include "api/openai_response.h"
#include "api/responses_request.h"
#include "api/responses_response.h"
#include "base/log.h"

namespace k3::api {
namespace {

using Clock = serve::Generation::Clock;
using Why = std::optional<std::string>;
constexpr Dialect kOpenAiDialect = Dialect::kOpenAi;
constexpr Dialect kAnthropicDialect = Dialect::kAnthropic;

// Holds back the engine thread's output until the response has been opened on the IO side
// (the engine may produce before Frontend::Start returns), so the order on the wire is always
// headers, first events, then updates.
class Gate {
 public:
  void Do(std::function<void()> action) {
    std::unique_lock lock(mu_);
    if (!open_) {
      held_.push_back(std::move(action));
      return;
    }
    lock.unlock();
    action();
  }
  void Open() {
    std::unique_lock lock(mu_);
    while (!held_.empty()) {
      auto actions = std::move(held_);
      held_.clear();
      lock.unlock();
      for (auto& action : actions) action();
      lock.lock();
    }
    open_ = true;
  }

 private:
  std::mutex mu_;
  bool open_ = false;
  std::vector<std::function<void()>> held_;
};

// One generation: its request and prompt, the builder (OpenAI or Anthropic) that frames its
// stream or final body, and what goes out before the first update (Anthropic's message_start).
template <typename Builder>
struct RunSpec {
  std::string endpoint;
  const serve::GenerateRequest& request;
  const serve::PreparedPrompt& prompt;
  std::shared_ptr<Builder> builder;
  bool stream = false;
  Clock::time_point arrival;
  std::vector<std::string> first_events;
};

// Feeds each update to the builder and sends what it framed, through the gate.
template <typename Builder>
serve::UpdateSink SinkFor(std::shared_ptr<Builder> builder, bool stream,
                          std::shared_ptr<Responder> responder, std::shared_ptr<Gate> gate) {
  return [builder, responder, stream, gate](const serve::ChoiceUpdate& update) {
    if (update.usage.completion_tokens > 0) responder->NoteFirstToken();
    if (update.finish_reason) {
      responder->NoteChoice(update.usage.prompt_tokens, update.usage.completion_tokens);
    }
    auto events = std::make_shared<std::vector<std::string>>();
    const bool done = builder->Add(update, events.get());
    if (!stream && !done) return;
    std::string body = !stream ? builder->Body() : std::string();
    gate->Do([responder, stream, done, events, body = std::move(body)]() mutable {
      if (!stream) return responder->Send(200, std::move(body));
      for (std::string& event : *events) responder->SendEvent(std::move(event));
      if (done) responder->EndEventStream();
    });
  };
}

// Runs one generation; a client that goes away cancels it. `fail` answers a refused start.
template <typename Builder>
void Run(serve::Frontend* frontend, RunSpec<Builder> spec,
         const std::shared_ptr<Responder>& responder, std::function<void(const ApiError&)> fail) {
  auto gate = std::make_shared<Gate>();
  auto sink = SinkFor(spec.builder, spec.stream, responder, gate);
  auto generation = frontend->Start(spec.request, spec.prompt, sink, spec.arrival);
  if (!generation.ok()) return fail(FromStatus(generation.status()));
  frontend->metrics().RecordRequest(spec.endpoint, 200);
  std::weak_ptr<serve::Generation> weak = *generation;
  responder->OnClientGone([weak] {
    if (auto g = weak.lock()) g->Cancel();
  });
  if (spec.stream) {
    responder->StartEventStream();
    for (std::string& event : spec.first_events) responder->SendEvent(std::move(event));
  }
  gate->Open();
}

}  // namespace

Service::Service(serve::Frontend* frontend, ServiceConfig config)
    : frontend_(frontend),
      config_(std::move(config)),
      routes_(DispatchOptions{
          .authorized = [this](const HttpRequest& request) { return Authorized(request); },
          .record = [this](const std::string& endpoint,
                           int status) { frontend_->metrics().RecordRequest(endpoint, status); },
      }),
      id_salt_(std::random_device{}()) {
  if (config_.responses_store > 0) {
    responses_store_ = std::make_unique<ResponsesStore>(config_.responses_store);
  }
  BindRoutes();
}

void Service::BindRoutes() {
  BindProbes(
      &routes_,
      {
          .not_ready = [this] { return routes_.draining() ? Why("draining") : std::nullopt; },
          .metrics =
              [this] { return frontend_->metrics().RenderPrometheus(frontend_->engine_metrics()); },
      });
  routes_.Bind(Endpoint::kKvEvents,
               [this](const HttpRequest&, const Route&, const Reply& r) { KvEvents(r); });
  routes_.Bind(Endpoint::kModels,
               [this](const HttpRequest& q, const Route&, const Reply& r) { Models(q, r); });
  routes_.Bind(Endpoint::kChatCompletions, WithBody(&Service::Chat));
  routes_.Bind(Endpoint::kCompletions, WithBody(&Service::Completion));
  routes_.Bind(Endpoint::kMessages, WithBody(&Service::Messages));
  routes_.Bind(Endpoint::kResponses, WithBody(&Service::Responses));
  routes_.Bind(Endpoint::kCountTokens, WithBody(&Service::CountTokens));
  routes_.Bind(Endpoint::kTokenize, WithBody(&Service::Tokenize));
  routes_.Bind(Endpoint::kDetokenize, WithBody(&Service::Detokenize));
}

RouteHandler Service::WithBody(BodyHandler handler) {
  return [this, handler](const HttpRequest& request, const Route& route, const Reply& responder) {
    Json body = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) {
      return Fail(std::string(route.path), route.dialect,
                  BadRequest("the request body is not valid JSON"), responder);
    }
    (this->*handler)(body, responder);
  };
}

std::string Service::NewId(const char* prefix) {
  const uint64_t n = next_id_.fetch_add(1);
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%016llx%08llx",
                static_cast<unsigned long long>(id_salt_ * 0x9E3779B97F4A7C15ull + n),
                static_cast<unsigned long long>(n & 0xffffffff));
  return std::string(prefix) + buffer;
}

bool Service::Authorized(const HttpRequest& request) const {
  if (config_.api_key.empty()) return true;
  auto bearer = request.headers.find("authorization");
  if (bearer != request.headers.end() && bearer->second == "Bearer " + config_.api_key) {
    return true;
  }
  auto key = request.headers.find("x-api-key");
  return key != request.headers.end() && key->second == config_.api_key;
}

void Service::Fail(const std::string& endpoint, Dialect dialect, const ApiError& error,
                   const Reply& responder) {
  routes_.Fail(endpoint, dialect, error, responder);
}

std::function<void(const ApiError&)> Service::FailWith(const std::string& endpoint, Dialect dialect,
                                                       const Reply& responder) {
  return [this, endpoint, dialect, responder](const ApiError& e) {
    Fail(endpoint, dialect, e, responder);
  };
}

void Service::Ok(const std::string& endpoint, std::string body, const Reply& responder) {
  frontend_->metrics().RecordRequest(endpoint, 200);
  responder->Send(200, std::move(body));
}

void Service::KvEvents(const Reply& responder) {
  if (config_.kv_events_info.empty()) {
    return Fail(std::string(RouteOf(Endpoint::kKvEvents).path), kOpenAiDialect,
                {404, "this server publishes no KV events", ""}, responder);
  }
  responder->Send(200, config_.kv_events_info);
}

void Service::Chat(const Json& body, const Reply& responder) {
  const std::string endpoint = "/v1/chat/completions";
  const Clock::time_point arrival = Clock::now();
  OpenAiRequest parsed;
  ApiError error;
  if (!ParseChatRequest(body, config_.api, &parsed, &error)) {
    return Fail(endpoint, kOpenAiDialect, error, responder);
  }
  auto prompt = frontend_->Prepare(parsed.generate);
  if (!prompt.ok()) return Fail(endpoint, kOpenAiDialect, FromStatus(prompt.status()), responder);
  ResponseMeta meta{NewId("chatcmpl-"), std::time(nullptr), config_.api.model_name};
  auto builder = std::make_shared<OpenAiResponseBuilder>(OpenAiResponseBuilder::Kind::kChat, meta,
                                                         parsed.generate.sampling.n, parsed.stream,
                                                         parsed.include_usage);
  Run(frontend_,
      RunSpec<OpenAiResponseBuilder>{
          endpoint, parsed.generate, *prompt, builder, parsed.stream, arrival, {}},
      responder, FailWith(endpoint, kOpenAiDialect, responder));
}

void Service::Completion(const Json& body, const Reply& responder) {
  const std::string endpoint = "/v1/completions";
  const Clock::time_point arrival = Clock::now();
  OpenAiRequest parsed;
  ApiError error;
  if (!ParseCompletionRequest(body, config_.api, &parsed, &error)) {
    return Fail(endpoint, kOpenAiDialect, error, responder);
  }
  auto prompt = frontend_->Prepare(parsed.generate);
  if (!prompt.ok()) return Fail(endpoint, kOpenAiDialect, FromStatus(prompt.status()), responder);
  std::string echo;
  if (parsed.generate.echo) {
    const std::vector<text::TokenId> ids(prompt->ids.begin(), prompt->ids.end());
    auto text = frontend_->tokenizer().Decode(ids);
    if (text.ok()) echo = *text;
  }
  ResponseMeta meta{NewId("cmpl-"), std::time(nullptr), config_.api.model_name};
  auto builder = std::make_shared<OpenAiResponseBuilder>(OpenAiResponseBuilder::Kind::kCompletion,
                                                         meta, parsed.generate.sampling.n,
                                                         parsed.stream, parsed.include_usage, echo);
  Run(frontend_,
      RunSpec<OpenAiResponseBuilder>{
          endpoint, parsed.generate, *prompt, builder, parsed.stream, arrival, {}},
      responder, FailWith(endpoint, kOpenAiDialect, responder));
}

void Service::Messages(const Json& body, const Reply& responder) {
  const std::string endpoint = "/v1/messages";
  const Clock::time_point arrival = Clock::now();
  AnthropicRequest parsed;
  ApiError error;
  if (!ParseMessagesRequest(body, config_.api, &parsed, &error)) {
    return Fail(endpoint, kAnthropicDialect, error, responder);
  }
  serve::ContextOverflow overflow;  // limit stays 0 unless the context decided the 400
  auto prompt = frontend_->Prepare(parsed.generate, &overflow);
  if (!prompt.ok()) {
    const ApiError failed =
        overflow.limit > 0 ? AnthropicContextError(overflow) : FromStatus(prompt.status());
    return Fail(endpoint, kAnthropicDialect, failed, responder);
  }
  ResponseMeta meta{NewId("msg_"), std::time(nullptr), config_.api.model_name};
  auto builder =
      std::make_shared<AnthropicResponseBuilder>(meta, parsed.stream, config_.api.signer);
  std::vector<std::string> first;
  builder->Start(prompt->reported_prompt_tokens, 0, &first);
  Run(frontend_,
      RunSpec<AnthropicResponseBuilder>{endpoint, parsed.generate, *prompt, builder, parsed.stream,
                                        arrival, std::move(first)},
      responder, FailWith(endpoint, kAnthropicDialect, responder));
}

void Service::Responses(const Json& body, const Reply& responder) {
  const std::string endpoint = "/v1/responses";
  const Clock::time_point arrival = Clock::now();
  ResponsesRequest parsed;
  ApiError error;
  if (!ParseResponsesRequest(body, config_.api, &parsed, &error, responses_store_.get())) {
    return Fail(endpoint, kOpenAiDialect, error, responder);
  }
  auto prompt = frontend_->Prepare(parsed.generate);
  if (!prompt.ok()) return Fail(endpoint, kOpenAiDialect, FromStatus(prompt.status()), responder);
  ResponseMeta meta{NewId("resp_"), std::time(nullptr), config_.api.model_name};
  auto builder = std::make_shared<ResponsesBuilder>(meta, std::move(parsed.echo), parsed.stream);
  if (responses_store_ && parsed.store) {
    builder->OnDone([store = responses_store_.get(),
                     input = std::move(parsed.input_items)](const Json& response) {
      if (response["status"] == "completed")
        store->Put(response["id"].get<std::string>(), input, response["output"]);
    });
  }
  std::vector<std::string> first;
  builder->Start(prompt->reported_prompt_tokens, &first);
  Run(frontend_,
      RunSpec<ResponsesBuilder>{endpoint, parsed.generate, *prompt, builder, parsed.stream, arrival,
                                std::move(first)},
      responder, FailWith(endpoint, kOpenAiDialect, responder));
}

void Service::CountTokens(const Json& body, const Reply& responder) {
  const std::string endpoint = "/v1/messages/count_tokens";
  serve::ChatRequest chat;
  ApiError error;
  if (!ParseCountTokensRequest(body, &chat, &error, config_.api.signer.get()))
    return Fail(endpoint, kAnthropicDialect, error, responder);
  auto count = frontend_->CountChatTokens(chat);
  if (!count.ok()) return Fail(endpoint, kAnthropicDialect, FromStatus(count.status()), responder);
  Ok(endpoint, Dump(Json{{"input_tokens", *count}}), responder);
}

// A chat body's rendered prompt, or a text's ids (specials recognised unless
// add_special_tokens is false).
bool Service::TokenizeBody(const Json& body, std::vector<text::TokenId>* ids, ApiError* error) {
  if (body.is_object() && body.contains("messages")) {
    OpenAiRequest parsed;
    if (!ParseChatRequest(body, config_.api, &parsed, error)) return false;
    auto prompt = frontend_->Prepare(parsed.generate);
    if (!prompt.ok()) *error = FromStatus(prompt.status());
    if (prompt.ok()) ids->assign(prompt->ids.begin(), prompt->ids.end());
    return prompt.ok();
  }
  if (!body.is_object() || !body.contains("prompt") || !body["prompt"].is_string()) {
    *error = BadRequest("give 'prompt' (a string) or 'messages'");
    return false;
  }
  const bool specials =
      !(body.contains("add_special_tokens") && body["add_special_tokens"] == false);
  auto encoded =
      frontend_->tokenizer().Encode(body["prompt"].get<std::string>(),
                                    specials ? text::SpecialMode::kAll : text::SpecialMode::kNone);
  if (!encoded.ok()) *error = FromStatus(encoded.status());
  if (encoded.ok()) *ids = std::move(*encoded);
  return encoded.ok();
}

void Service::Tokenize(const Json& body, const Reply& responder) {
  const std::string endpoint = "/tokenize";
  std::vector<text::TokenId> ids;
  ApiError error;
  if (!TokenizeBody(body, &ids, &error)) return Fail(endpoint, kOpenAiDialect, error, responder);
  Ok(endpoint,
     Dump(Json{
         {"count", ids.size()}, {"max_model_len", frontend_->max_model_len()}, {"tokens", ids}}),
     responder);
}

void Service::Detokenize(const Json& body, const Reply& responder) {
  const std::string endpoint = "/detokenize";
  std::vector<text::TokenId> ids;
  const bool list = body.is_object() && body.contains("tokens") && body["tokens"].is_array();
  for (const Json& id : list ? body["tokens"] : Json::array()) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() > UINT32_MAX) break;
    ids.push_back(id.get<text::TokenId>());
  }
  if (!list || ids.size() != body["tokens"].size()) {
    return Fail(endpoint, kOpenAiDialect,
                BadRequest("'tokens' must be a list of token ids", "tokens"), responder);
  }
  auto text = frontend_->tokenizer().Decode(ids);
  if (!text.ok()) return Fail(endpoint, kOpenAiDialect, FromStatus(text.status()), responder);
  Ok(endpoint, Dump(Json{{"prompt", *text}}), responder);
}

// GET /v1/models and /v1/models/{id}: OpenAI's shape, or Anthropic's when the client sends
// anthropic-version (as the Anthropic SDK's models.list/retrieve always do).
void Service::Models(const HttpRequest& request, const Reply& responder) {
  const bool anthropic = request.headers.count("anthropic-version") > 0;
  const std::string& name = config_.api.model_name;
  Json model = anthropic ? Json{{"type", "model"},
                                {"id", name},
                                {"display_name", name},
                                {"created_at", "1970-01-01T00:00:00Z"}}
                         : Json{{"id", name},
                                {"object", "model"},
                                {"created", 0},
                                {"owned_by", "k3serve"},
                                {"max_model_len", frontend_->max_model_len()}};
  constexpr std::string_view kList = "/v1/models";
  if (request.path.size() > kList.size() + 1) {
    const std::string id = request.path.substr(kList.size() + 1);
    if (id != name) {
      return Fail(
          "/v1/models", anthropic ? Dialect::kAnthropic : Dialect::kOpenAi,
          {404, "model '" + id + "' not found (this server serves '" + name + "')", "model"},
          responder);
    }
    return Ok("/v1/models", Dump(model), responder);
  }
  Json list = anthropic ? Json{{"data", Json::array({model})},
                               {"has_more", false},
                               {"first_id", name},
                               {"last_id", name}}
                        : Json{{"object", "list"}, {"data", Json::array({model})}};
  Ok("/v1/models", Dump(list), responder);
}

}  // namespace k3::api
