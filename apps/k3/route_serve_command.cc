// `k3 route` (no subcommand): the KV-aware router's HTTP front end. It serves the OpenAI and
// Anthropic endpoints, renders and tokenizes each prompt with the checkpoint's tokenizer and chat
// format (no weights are loaded), picks a worker with src/router from the KV events the workers
// publish (src/kvwire), and forwards the request there (src/gateway).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <thread>

#include "apps/k3/commands.h"
#include "apps/k3/http_flags.h"
#include "apps/k3/shutdown_signals.h"
#include "apps/k3/trained_demo.h"
#include "base/log.h"
#include "gateway/gateway.h"
#include "http/server.h"
#include "router/router.h"
#include "serve/chat_format.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::app {
namespace {

struct RouteServeFlags {
  std::string listen = "127.0.0.1:8080";
  std::vector<std::string> workers;
  std::string model;
  std::string policy = "kv";
  router::CostWeights weights;
  std::string session_header = "x-session-id";
  int io_threads = 2;
  int max_attempts = 3;
  HttpFlags http;
  int health_interval_ms = 1000;
  bool quiet_decisions = false;
};

base::Result<std::pair<std::string, uint16_t>> ParseListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  const std::string port = colon == std::string::npos ? "" : listen.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    return base::InvalidArgument("--listen '" + listen + "': want HOST:PORT");
  }
  return std::make_pair(listen.substr(0, colon), static_cast<uint16_t>(std::stoi(port)));
}

int RouteServe(const RouteServeFlags& f) {
  BlockShutdownSignals();  // before any thread starts: they inherit the mask
  auto fail = [](const base::Status& s) {
    K3_LOG(kError) << s.ToString();
    return 1;
  };
  auto listen = ParseListen(f.listen);
  if (!listen.ok()) return fail(listen.status());
  auto policy = router::ParsePolicy(f.policy);
  if (!policy.ok()) return fail(policy.status());
  std::string dir = f.model;
  if (dir.empty()) {
    dir = DefaultTrainedDemoDir().string();  // the replicas' default (k3 serve)
    if (auto s = WriteTrainedDemo(dir); !s.ok()) return fail(s);
  }
  auto tokenizer = text::Tokenizer::FromKimiDirectory(dir);
  if (!tokenizer.ok()) return fail(tokenizer.status());
  auto format = serve::ChatFormat::FromCheckpoint(dir);
  if (!format.ok()) return fail(format.status());

  gateway::GatewayConfig config;
  config.policy = *policy;
  config.weights = f.weights;
  config.key.tokenizer = tokenizer->get();
  config.key.format = &*format;
  config.key.api.allow_forced_output = true;  // parse what any worker may accept
  config.key.session_header = f.session_header;
  config.io_threads = f.io_threads;
  config.forward.max_attempts = f.max_attempts;
  config.backoff.interval = std::chrono::milliseconds(f.health_interval_ms);
  config.log_decisions = !f.quiet_decisions;
  gateway::Gateway gateway(config);
  if (auto s = gateway.Start(); !s.ok()) return fail(s);
  for (const std::string& url : f.workers) {
    if (auto id = gateway.AddWorker(url); !id.ok()) return fail(id.status());
  }

  http::ServerConfig server_config;
  server_config.host = listen->first;
  server_config.port = listen->second;
  server_config.io_threads = f.io_threads;
  ApplyHttpFlags(f.http, &server_config);
  http::Server server(server_config, &gateway);
  if (auto s = server.Listen(); !s.ok()) return fail(s);
  ShutdownOnSignal(&server);
  std::printf("k3 route: policy %s, %zu worker(s) given, tokenizer from %s\n",
              router::PolicyName(*policy), f.workers.size(), dir.c_str());
  std::printf(
      "listening on http://%s:%u  (workers can also register: k3 serve --register "
      "http://%s:%u)\n",
      listen->first.c_str(), server.port(), listen->first.c_str(), server.port());
  std::fflush(stdout);
  server.Run();
  gateway.Stop();
  K3_LOG(kInfo) << "stopped";
  return 0;
}

}  // namespace

CommandFn AddRouteServeOptions(CLI::App& app) {
  auto f = std::make_shared<RouteServeFlags>();
  app.add_option("--listen", f->listen, "HOST:PORT to serve on (port 0 = any, printed at start)")
      ->capture_default_str();
  app.add_option("--worker", f->workers,
                 "A worker's URL (http://HOST:PORT of a k3 serve started with --kv-events); "
                 "repeat for more. Workers may also register themselves (k3 serve --register)");
  app.add_option("--model", f->model,
                 "Checkpoint folder whose tokenizer and chat format the workers serve (no weights "
                 "are read); default: the embedded trained demo model");
  app.add_option("--policy", f->policy,
                 "kv | round-robin | random | least-loaded | session | dynamo")
      ->capture_default_str();
  app.add_option("--prefill-weight", f->weights.prefill, "kv cost: per queued/new prefill token")
      ->capture_default_str();
  app.add_option("--overlap-weight", f->weights.overlap, "kv cost: per cached prompt token")
      ->capture_default_str();
  app.add_option("--decode-weight", f->weights.decode, "kv cost: per running decode sequence")
      ->capture_default_str();
  app.add_option("--session-header", f->session_header,
                 "Header naming the session (policy session)")
      ->capture_default_str();
  AddHttpFlags(app, &f->http);
  app.add_option("--io-threads", f->io_threads, "Threads for client and worker connections")
      ->capture_default_str();
  app.add_option("--max-attempts", f->max_attempts,
                 "Workers tried per request when one fails before answering")
      ->capture_default_str();
  app.add_option("--health-interval-ms", f->health_interval_ms, "Between health checks")
      ->capture_default_str();
  app.add_flag("--quiet-decisions", f->quiet_decisions, "Do not log each routing decision");
  return [f] { return RouteServe(*f); };
}

}  // namespace k3::app
