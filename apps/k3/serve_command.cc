// k3 serve: the OpenAI / Anthropic compatible HTTP server on one checkpoint folder (or, without
// --model, on the embedded demo checkpoint it writes itself).
#include <signal.h>

#include <cstdio>
#include <thread>

#include "api/service.h"
#include "apps/k3/commands.h"
#include "apps/k3/demo_checkpoint.h"
#include "apps/k3/engine_flags.h"
#include "base/log.h"
#include "base/thread_pool.h"
#include "engine/engine.h"
#include "engine/k3_model_runner.h"
#include "http/server.h"
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
  int io_threads = 1;
  int64_t max_pending = 4096;
  std::string body_limit = "32MiB";
  int drain_timeout = 30;
  std::string sampling_policy = "open";
  bool scripted_output = false;
  EngineFlags engine;
};

// SIGINT/SIGTERM are blocked in every thread and awaited by one, which starts the drain.
void WaitForSignalsThenShutdown(http::Server* server) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int signal = 0;
  sigwait(&set, &signal);
  K3_LOG(kInfo) << "received " << (signal == SIGINT ? "SIGINT" : "SIGTERM");
  server->Shutdown();
}

base::Result<std::string> ResolveModelDir(const ServeFlags& f) {
  if (!f.model.empty()) return f.model;
  const auto dir = DefaultDemoDir();
  K3_LOG(kInfo) << "no --model: using the embedded demo checkpoint in " << dir.string();
  K3_RETURN_IF_ERROR(WriteDemoCheckpoint(dir));
  return dir.string();
}

int Serve(ServeFlags& f) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any thread starts: they inherit it

  auto fail = [](const base::Status& s) {
    K3_LOG(kError) << s.ToString();
    return 1;
  };
  if (auto s = f.engine.Finish(); !s.ok()) return fail(s);
  auto body_limit = ParseByteSize(f.body_limit);
  if (!body_limit.ok()) return fail(body_limit.status());
  if (f.sampling_policy != "open" && f.sampling_policy != "kimi") {
    return fail(base::InvalidArgument("--sampling-policy must be open or kimi"));
  }
  auto dir = ResolveModelDir(f);
  if (!dir.ok()) return fail(dir.status());

  base::ThreadPool pool(f.threads);
  auto tokenizer = text::Tokenizer::FromKimiDirectory(*dir);
  if (!tokenizer.ok()) return fail(tokenizer.status());
  auto format = serve::ChatFormat::FromCheckpoint(*dir);
  if (!format.ok()) return fail(format.status());
  auto loaded = model::Model::Load(*dir, &pool);
  if (!loaded.ok()) return fail(loaded.status());
  std::shared_ptr<const model::Model> model = std::move(loaded).value();
  auto engine =
      engine::Engine::Create(std::make_unique<engine::K3ModelRunner>(model), f.engine.config);
  if (!engine.ok()) return fail(engine.status());
  (*engine)->Start();

  serve::FrontendConfig frontend_config;
  frontend_config.model_name =
      f.served_model_name.empty()
          ? (f.model.empty() ? "k3-demo" : std::filesystem::path(*dir).filename().string())
          : f.served_model_name;
  frontend_config.max_pending_requests = f.max_pending;
  serve::Frontend frontend(std::move(tokenizer).value(), std::move(format).value(), engine->get(),
                           frontend_config);
  api::ServiceConfig service_config;
  service_config.api.model_name = frontend_config.model_name;
  service_config.api.policy =
      f.sampling_policy == "kimi" ? api::SamplingPolicy::kKimi : api::SamplingPolicy::kOpen;
  service_config.api.allow_forced_output = f.scripted_output;
  service_config.api_key = f.api_key;
  api::Service service(&frontend, service_config);

  http::ServerConfig server_config;
  server_config.host = f.host;
  server_config.port = static_cast<uint16_t>(f.port);
  server_config.body_limit = static_cast<size_t>(*body_limit);
  server_config.io_threads = f.io_threads;
  server_config.drain_timeout = std::chrono::seconds(f.drain_timeout);
  http::Server server(server_config, &service);
  if (auto s = server.Listen(); !s.ok()) return fail(s);
  std::thread signals(WaitForSignalsThenShutdown, &server);
  signals.detach();
  std::printf("k3 serve: model '%s' (%s), context %lld tokens\n",
              frontend_config.model_name.c_str(), dir->c_str(),
              static_cast<long long>(frontend.max_model_len()));
  std::printf("listening on http://%s:%u  (try: curl http://%s:%u/v1/models)\n", f.host.c_str(),
              server.port(), f.host.c_str(), server.port());
  std::fflush(stdout);
  server.Run();
  // The engine goes first: its destructor ends requests still running after the drain timeout,
  // and their last updates are posted to connections whose IO context must still exist (the
  // server's, destroyed at the end of this scope, which also frees those connections).
  engine->reset();
  K3_LOG(kInfo) << "stopped";
  return 0;
}

}  // namespace

CommandFn AddServeCommand(CLI::App& app) {
  auto f = std::make_shared<ServeFlags>();
  app.add_option("--model", f->model,
                 "HF checkpoint folder (config.json, safetensors, tiktoken.model, "
                 "tokenizer_config.json); default: the embedded demo checkpoint");
  app.add_option("--served-model-name", f->served_model_name,
                 "Model id in the API (default: the folder name, or k3-demo)");
  app.add_option("--host", f->host, "Address to listen on")->capture_default_str();
  app.add_option("--port", f->port, "Port (0 = any free port, printed at start)")
      ->capture_default_str();
  app.add_option("--api-key", f->api_key,
                 "Require 'Authorization: Bearer KEY' or 'x-api-key: KEY' (401 otherwise)");
  app.add_option("--threads", f->threads, "Model worker threads (0 = all cores)");
  app.add_option("--io-threads", f->io_threads, "HTTP threads")->capture_default_str();
  app.add_option("--max-pending", f->max_pending,
                 "Concurrent requests admitted; more get 429 at once")
      ->capture_default_str();
  app.add_option("--body-limit", f->body_limit, "Largest request body (413 above)")
      ->capture_default_str();
  app.add_option("--drain-timeout", f->drain_timeout,
                 "Seconds SIGTERM waits for running requests before exiting")
      ->capture_default_str();
  app.add_option("--sampling-policy", f->sampling_policy,
                 "open: OpenAI ranges; kimi: the Kimi Vendor Verifier's fixed sampling values")
      ->capture_default_str();
  app.add_flag("--scripted-output", f->scripted_output,
               "Accept the test-only request field k3_forced_output (the model runs, its tokens "
               "are replaced by the script); for API tests and demos");
  AddEngineFlags(app, &f->engine);
  return [f] { return Serve(*f); };
}

}  // namespace k3::app
