// SIGINT/SIGTERM for the long-running servers (k3 serve, k3 route): the signals are blocked in
// every thread and awaited by one thread, which starts the server's graceful drain.
#pragma once

#include "http/server.h"

namespace k3::app {

// Call before any thread starts (threads inherit the mask).
void BlockShutdownSignals();
// Starts a detached thread that waits for SIGINT/SIGTERM and calls server->Shutdown(); `server`
// must outlive the process's Run() (it does: the thread only touches it once).
void ShutdownOnSignal(http::Server* server);

}  // namespace k3::app
