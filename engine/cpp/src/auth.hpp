// Data-plane authentication of cluster mode (engine/rpc/AUTH.md): a mutual HMAC-SHA256
// challenge-response over the cluster secret (env SPINDLE_CLUSTER_SECRET) at the start of every
// connection, before any byte of the Executor or fetch protocol. No secret: no handshake.
#pragma once

#include <stdexcept>
#include <string>

namespace spindle {
namespace auth {

/** The cluster secret (empty: local mode, no authentication). */
const std::string& secret();

struct AuthFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/** Checks that the client on `fd` holds `secret` (throws AuthFailed); no-op when it is empty. */
void serverHandshake(int fd, const std::string& secret);
/** Proves to the server on `fd` that we hold `secret` and checks it does (throws AuthFailed). */
void clientHandshake(int fd, const std::string& secret);

}  // namespace auth
}  // namespace spindle
