#include "apps/k3/shutdown_signals.h"

#include <signal.h>

#include <thread>

#include "base/log.h"

namespace k3::app {
namespace {

sigset_t ShutdownSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void BlockShutdownSignals() {
  const sigset_t set = ShutdownSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void ShutdownOnSignal(http::Server* server) {
  std::thread([server] {
    const sigset_t set = ShutdownSet();
    int signal = 0;
    sigwait(&set, &signal);
    K3_LOG(kInfo) << "received " << (signal == SIGINT ? "SIGINT" : "SIGTERM");
    server->Shutdown();
  }).detach();
}

}  // namespace k3::app
