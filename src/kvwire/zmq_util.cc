#include "kvwire/zmq_util.h"

#include <cerrno>

namespace k3::kvwire {

base::Status ZmqStatus(const zmq::error_t& error, std::string_view what) {
  std::string message = std::string(what) + ": " + error.what();
  switch (error.num()) {
    case EINVAL:
    case EPROTONOSUPPORT:
    case ENOCOMPATPROTO:
      return base::InvalidArgument(std::move(message));
    default:
      return {base::StatusCode::kUnavailable, std::move(message)};
  }
}

zmq::socket_t MakeSocket(zmq::context_t& context, zmq::socket_type type) {
  zmq::socket_t socket(context, type);
  socket.set(zmq::sockopt::linger, 0);
  return socket;
}

base::Status BindSocket(zmq::socket_t& socket, const std::string& endpoint, std::string* bound) {
  try {
    socket.bind(endpoint);
    *bound = socket.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    return ZmqStatus(e, "binding " + endpoint);
  }
  return base::Status::Ok();
}

}  // namespace k3::kvwire
