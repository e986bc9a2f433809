// Small ZeroMQ helpers shared by the publisher and the subscriber (internal to kvwire).
#pragma once

#include <string>
#include <string_view>
#include <zmq.hpp>

#include "base/status.h"

namespace k3::kvwire {

// A ZeroMQ error as a Status: bad endpoints are INVALID_ARGUMENT, everything else (address in
// use, no such interface, ...) UNAVAILABLE. The message reads "<what>: <zmq's reason>".
base::Status ZmqStatus(const zmq::error_t& error, std::string_view what);

// A socket of `type` with linger 0 (closing never waits for unsent messages).
zmq::socket_t MakeSocket(zmq::context_t& context, zmq::socket_type type);

// Binds and returns the bound address (ZMQ_LAST_ENDPOINT: "tcp://127.0.0.1:*" resolved).
base::Status BindSocket(zmq::socket_t& socket, const std::string& endpoint, std::string* bound);

}  // namespace k3::kvwire
