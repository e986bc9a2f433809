#include "apps/k3/http_flags.h"

#include <CLI/CLI.hpp>

namespace k3::app {

void AddHttpFlags(CLI::App& app, HttpFlags* flags) {
  app.add_option("--allow-origin", flags->allow_origins,
                 "Answer CORS preflights (OPTIONS) and let browser pages from this origin call "
                 "the API (e.g. http://localhost:3000; * = any); repeat for more");
  app.add_flag("--disable-access-log", flags->disable_access_log,
               "No info line per request (method, path, status, tokens, TTFT, duration)");
}

void ApplyHttpFlags(const HttpFlags& flags, http::ServerConfig* config) {
  config->allow_origins = flags.allow_origins;
  config->access_log = !flags.disable_access_log;
}

}  // namespace k3::app
