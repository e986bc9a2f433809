// k3 serve: the OpenAI / Anthropic compatible HTTP server on one checkpoint folder (or, without
// --model, on the embedded trained demo model, apps/k3/trained_demo.h).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/service.h"
#include "api/thinking_signature.h"
#include "apps/k3/commands.h"
#include "apps/k3/engine_flags.h"
#include "apps/k3/http_flags.h"
#include "apps/k3/numa_flag.h"
#include "apps/k3/shutdown_signals.h"
#include "apps/k3/trained_demo.h"
#include "base/log.h"
#include "base/thread_pool.h"
#include "engine/engine.h"
#include "engine/k3_model_runner.h"
#include "gateway/upstream.h"
#include "http/server.h"
#include "kernels/roofline.h"
#include "kvwire/publisher.h"
#include "model/model.h"
#include "serve/frontend.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::app {
namespace {

struct ServeFlags {
  std::string model;
  std::string served_model_name;
  std::string host = "127.0.0.1";
  int port = 8000;
  std::string api_key;
  size_t threads = 0;
  int numa_node = -1;
  int io_threads = 1;
  int64_t max_pending = 4096;
  std::string body_limit = "32MiB";
  int drain_timeout = 30;
  std::string sampling_policy = "open";
  bool scripted_output = false;
  std::string script_file;       // scripted outputs for chat requests (serve/output_script.h)
  std::string signing_key_file;  // thinking-signature key (empty: random per start)
  std::shared_ptr<const api::ThinkingSigner> signer;  // set by CheckFlags
  size_t responses_store = 0;  // finished /v1/responses kept for previous_response_id
  std::string kv_events;       // ZeroMQ PUB endpoint for KV events (empty: none)
  std::string
      kv_resync;  // ZeroMQ ROUTER endpoint for replays/snapshots (default: same host, any port)
  std::string register_with;  // a router's URL to register with at start-up
  std::string advertise_url;  // how the router reaches this server (default http://HOST:PORT)
  EngineFlags engine;
  HttpFlags http;
};

base::Result<std::string> ResolveModelDir(const ServeFlags& f) {
  if (!f.model.empty()) return f.model;
  const auto dir = DefaultTrainedDemoDir();
  K3_LOG(kInfo) << "no --model: serving the embedded trained demo model (models/k3-demo) from "
                << dir.string();
  K3_RETURN_IF_ERROR(WriteTrainedDemo(dir));
  return dir.string();
}

// "tcp://HOST:PORT" -> "tcp://HOST:*" (the resync socket's default: same host, any free port).
std::string AnyPortOf(const std::string& endpoint) {
  const size_t colon = endpoint.rfind(':');
  return colon == std::string::npos ? endpoint : endpoint.substr(0, colon) + ":*";
}

base::Result<std::unique_ptr<kvwire::KvEventPublisher>> StartKvPublisher(
    const ServeFlags& f, cache::KvEventChannel* channel, const engine::Engine& engine,
    std::string* info) {
  kvwire::PublisherConfig config;
  config.publish_endpoint = f.kv_events;
  config.resync_endpoint = f.kv_resync.empty() ? AnyPortOf(f.kv_events) : f.kv_resync;
  auto publisher = std::make_unique<kvwire::KvEventPublisher>(channel, config);
  K3_RETURN_IF_ERROR(publisher->Start());
  *info = nlohmann::json{{"publish", publisher->publish_endpoint()},
                         {"resync", publisher->resync_endpoint()},
                         {"block_size", engine.layout().block_size},
                         {"checkpoints_required", engine.info().has_recurrent_state}}
              .dump();
  K3_LOG(kInfo) << "KV events on " << publisher->publish_endpoint() << " (resync "
                << publisher->resync_endpoint() << ")";
  return publisher;
}

// POSTs {"url": self} to the router's /router/workers, retrying with backoff for about a minute
// (the router may start after its workers).
void RegisterWithRouter(const std::string& router_url, const std::string& self) {
  auto router = gateway::ParseHttpUrl(router_url);
  if (!router.ok()) {
    K3_LOG(kError) << "--register: " << router.status().message();
    return;
  }
  const std::string body = nlohmann::json{{"url", self}}.dump();
  auto wait = std::chrono::milliseconds(250);
  for (int attempt = 1; attempt <= 12; ++attempt) {
    auto answer = gateway::HttpPost(*router, "/router/workers", body, std::chrono::seconds(10));
    if (answer.ok() && answer->status == 200) {
      K3_LOG(kInfo) << "registered with the router at " << router_url << " as " << self;
      return;
    }
    K3_LOG(kWarning) << "registering with " << router_url << " failed ("
                     << (answer.ok() ? "HTTP " + std::to_string(answer->status) + " " + answer->body
                                     : answer.status().message())
                     << "); retrying in " << wait.count() << " ms";
    std::this_thread::sleep_for(wait);
    wait = std::min<std::chrono::milliseconds>(wait * 2, std::chrono::seconds(8));
  }
  K3_LOG(kError) << "gave up registering with the router at " << router_url;
}

base::Status CheckFlags(ServeFlags& f) {
  K3_RETURN_IF_ERROR(f.engine.Finish());
  if (f.sampling_policy != "open" && f.sampling_policy != "kimi") {
    return base::InvalidArgument("--sampling-policy must be open or kimi");
  }
  if (f.signing_key_file.empty()) {
    f.signer = api::ThinkingSigner::Random();
  } else {
    K3_ASSIGN_OR_RETURN(f.signer, api::ThinkingSigner::FromFile(f.signing_key_file));
  }
  return base::Status::Ok();
}

// The checkpoint's model behind an engine (not started); KV events go to `kv_channel` when
// --kv-events is set.
base::Result<std::unique_ptr<engine::Engine>> MakeServeEngine(const ServeFlags& f,
                                                              const std::string& dir,
                                                              base::ThreadPool* pool,
                                                              cache::KvEventChannel* kv_channel) {
  K3_ASSIGN_OR_RETURN(std::shared_ptr<const model::Model> model,
                      model::Model::Load(dir, pool, f.engine.load_options()));
  return engine::Engine::Create(
      std::make_unique<engine::K3ModelRunner>(std::move(model), f.engine.runner_options()),
      f.engine.config, f.kv_events.empty() ? nullptr : kv_channel);
}

std::string ServedModelName(const ServeFlags& f, const std::string& dir) {
  if (!f.served_model_name.empty()) return f.served_model_name;
  return f.model.empty() ? "k3-demo" : std::filesystem::path(dir).filename().string();
}

api::ServiceConfig MakeServiceConfig(const ServeFlags& f, const std::string& model_name,
                                     std::string kv_info) {
  api::ServiceConfig config;
  config.api.model_name = model_name;
  config.api.policy =
      f.sampling_policy == "kimi" ? api::SamplingPolicy::kKimi : api::SamplingPolicy::kOpen;
  config.api.allow_forced_output = f.scripted_output;
  config.api.signer = f.signer;
  config.responses_store = f.responses_store;
  config.api_key = f.api_key;
  config.kv_events_info = std::move(kv_info);
  return config;
}

http::ServerConfig MakeServerConfig(const ServeFlags& f, size_t body_limit) {
  http::ServerConfig config;
  config.host = f.host;
  config.port = static_cast<uint16_t>(f.port);
  config.body_limit = body_limit;
  config.io_threads = f.io_threads;
  config.drain_timeout = std::chrono::seconds(f.drain_timeout);
  ApplyHttpFlags(f.http, &config);
  return config;
}

void PrintListening(const ServeFlags& f, const serve::Frontend& frontend, const std::string& dir,
                    uint16_t port) {
  std::printf("k3 serve: model '%s' (%s), context %lld tokens\n",
              frontend.config().model_name.c_str(), dir.c_str(),
              static_cast<long long>(frontend.max_model_len()));
  std::printf("listening on http://%s:%u  (try: curl http://%s:%u/v1/models)\n", f.host.c_str(),
              port, f.host.c_str(), port);
  std::fflush(stdout);
}

int Serve(ServeFlags& f) {
  BlockShutdownSignals();  // before any thread starts: they inherit the mask
  auto fail = [](const base::Status& s) {
    K3_LOG(kError) << s.ToString();
    return 1;
  };
  if (auto s = CheckFlags(f); !s.ok()) return fail(s);
  auto body_limit = ParseByteSize(f.body_limit);
  if (!body_limit.ok()) return fail(body_limit.status());
  auto dir = ResolveModelDir(f);
  if (!dir.ok()) return fail(dir.status());

  if (auto s = ApplyNumaNode(f.numa_node); !s.ok()) return fail(s);
  base::ThreadPool pool(f.threads);
  K3_LOG(kInfo) << kernels::MachineLine(pool.parallelism());
  auto tokenizer = text::Tokenizer::FromKimiDirectory(*dir);
  if (!tokenizer.ok()) return fail(tokenizer.status());
  auto format = serve::ChatFormat::FromCheckpoint(*dir);
  if (!format.ok()) return fail(format.status());
  cache::KvEventChannel kv_channel;
  auto engine = MakeServeEngine(f, *dir, &pool, &kv_channel);
  if (!engine.ok()) return fail(engine.status());
  std::unique_ptr<kvwire::KvEventPublisher> publisher;
  std::string kv_info;
  if (!f.kv_events.empty()) {
    auto started = StartKvPublisher(f, &kv_channel, **engine, &kv_info);
    if (!started.ok()) return fail(started.status());
    publisher = std::move(started).value();
  }
  (*engine)->Start();

  serve::FrontendConfig frontend_config;
  frontend_config.model_name = ServedModelName(f, *dir);
  frontend_config.max_pending_requests = f.max_pending;
  if (!f.script_file.empty()) {
    auto script = serve::OutputScript::FromFile(f.script_file);
    if (!script.ok()) return fail(script.status());
    frontend_config.script = std::make_shared<serve::OutputScript>(std::move(script).value());
  }
  serve::Frontend frontend(std::move(tokenizer).value(), std::move(format).value(), engine->get(),
                           frontend_config);
  api::Service service(&frontend,
                       MakeServiceConfig(f, frontend_config.model_name, std::move(kv_info)));
  http::Server server(MakeServerConfig(f, static_cast<size_t>(*body_limit)), &service);
  if (auto s = server.Listen(); !s.ok()) return fail(s);
  ShutdownOnSignal(&server);
  PrintListening(f, frontend, *dir, server.port());
  if (!f.register_with.empty()) {
    const std::string self = f.advertise_url.empty()
                                 ? "http://" + f.host + ":" + std::to_string(server.port())
                                 : f.advertise_url;
    std::thread(RegisterWithRouter, f.register_with, self).detach();  // copies its arguments
  }
  server.Run();
  // The engine goes first: its destructor ends requests still running after the drain timeout,
  // and their last updates are posted to connections whose IO context must still exist (the
  // server's, destroyed at the end of this scope, which also frees those connections).
  engine->reset();
  if (publisher) publisher->Stop();
  K3_LOG(kInfo) << "stopped";
  return 0;
}

}  // namespace

CommandFn AddServeCommand(CLI::App& app) {
  auto f = std::make_shared<ServeFlags>();
  app.add_option("--model", f->model,
                 "HF checkpoint folder (config.json, safetensors, tiktoken.model, "
                 "tokenizer_config.json); default: the embedded trained demo model "
                 "(models/k3-demo, a tiny K3)");
  app.add_option("--served-model-name", f->served_model_name,
                 "Model id in the API (default: the folder name, or k3-demo)");
  app.add_option("--host", f->host, "Address to listen on")->capture_default_str();
  app.add_option("--port", f->port, "Port (0 = any free port, printed at start)")
      ->capture_default_str();
  app.add_option("--api-key", f->api_key,
                 "Require 'Authorization: Bearer KEY' or 'x-api-key: KEY' (401 otherwise)");
  app.add_option("--threads", f->threads, "Model worker threads (0 = all cores)");
  AddNumaNodeFlag(app, &f->numa_node);
  app.add_option("--io-threads", f->io_threads, "HTTP threads")->capture_default_str();
  app.add_option("--max-pending", f->max_pending,
                 "Concurrent requests admitted; more get 429 at once")
      ->capture_default_str();
  app.add_option("--body-limit", f->body_limit, "Largest request body (413 above)")
      ->capture_default_str();
  app.add_option("--drain-timeout", f->drain_timeout,
                 "Seconds SIGTERM waits for running requests before exiting")
      ->capture_default_str();
  AddHttpFlags(app, &f->http);
  app.add_option("--sampling-policy", f->sampling_policy,
                 "open: OpenAI ranges; kimi: the Kimi Vendor Verifier's fixed sampling values")
      ->capture_default_str();
  app.add_flag("--scripted-output", f->scripted_output,
               "Accept the test-only request field k3_forced_output (the model runs, its tokens "
               "are replaced by the script); for API tests and demos");
  app.add_option("--script-file", f->script_file,
                 "Testing aid: JSON/JSONL rules whose outputs (text, tool calls) replace sampling "
                 "for the chat requests they match, through the real parser (docs/frontend.md)");
  app.add_option("--signing-key-file", f->signing_key_file,
                 "Key for the signatures of Anthropic thinking blocks (default: random per start; "
                 "replicas behind one router need the same file)");
  app.add_option("--responses-store", f->responses_store,
                 "Keep the last N finished /v1/responses in memory, so previous_response_id and "
                 "item_reference resolve (0: stateless, both are a 400)")
      ->capture_default_str();
  app.add_option("--kv-events", f->kv_events,
                 "Publish KV cache events for a KV-aware router on this ZeroMQ endpoint "
                 "(e.g. tcp://127.0.0.1:5557; port * = any free port)");
  app.add_option("--kv-resync", f->kv_resync,
                 "ZeroMQ endpoint answering a router's replay/snapshot requests (default: the "
                 "--kv-events host, any free port)");
  app.add_option("--register", f->register_with,
                 "Register with the router at this URL at start-up (http://HOST:PORT of k3 route)");
  app.add_option("--advertise-url", f->advertise_url,
                 "The URL the router should use for this server (default http://HOST:PORT)");
  AddEngineFlags(app, &f->engine);
  return [f] { return Serve(*f); };
}

}  // namespace k3::app
