// spindle-cpp-executor: serves the Executor Thrift service (engine/rpc/EXECUTOR_CLI.md).
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TServerSocket.h>
#include <thrift/transport/TSocket.h>
#include <thrift/transport/TTransportException.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <thread>

#include "auth.hpp"
#include "handler.hpp"

using namespace apache::thrift;
using spindle::ExecutorHandler;
using spindle::ExecutorState;

namespace {

std::atomic<bool> g_stopping{false};

void usage() {
  std::cerr << "usage: spindle-cpp-executor --port N --id K --cores C --memory BYTES "
               "--scratch DIR[,DIR...] [--bind ADDR] [--advertise HOST:PORT] [--work DIR[,DIR...]] "
               "[--fetch-dir DIR] [--affinity CPU[,CPU...]]\n";
  std::exit(2);
}

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

void parseArgs(int argc, char** argv, int& port, ExecutorState& ex) {
  port = 0;
  std::string fetchDir;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i], v;
    bool hasValue = false;
    size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
      hasValue = true;
    }
    auto value = [&]() -> std::string {
      if (hasValue) return v;
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--port") port = std::atoi(value().c_str());
    else if (a == "--id") ex.id = std::atoi(value().c_str());
    else if (a == "--cores") ex.cores = std::max(1, std::atoi(value().c_str()));
    else if (a == "--memory") ex.memory = std::max<long long>(1, std::atoll(value().c_str()));
    else if (a == "--scratch") ex.scratch = splitList(value());
    else if (a == "--bind") ex.bind = value();
    else if (a == "--advertise") ex.fetcher.advertise = value();
    else if (a == "--work") ex.work.dirs = splitList(value());
    else if (a == "--fetch-dir") fetchDir = value();
    else if (a == "--affinity") {
      for (const std::string& c : splitList(value())) ex.affinity.push_back(std::atoi(c.c_str()));
    }
    // unknown flags are ignored (EXECUTOR_CLI.md); their values are skipped if not flags
    else if (a.rfind("--", 0) == 0 && !hasValue && i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0)
      i++;
  }
  if (port <= 0) usage();
  if (ex.scratch.empty()) ex.scratch.push_back("/tmp");
  if (ex.work.dirs.empty()) ex.work.dirs = ex.scratch;
  ex.fetcher.id = ex.id;
  ex.fetcher.dir = fetchDir.empty() ? ex.work.dirs[0] : fetchDir;
  try {
    spindle::makeParents(ex.fetcher.dir + "/");
  } catch (const std::exception& e) {
    std::cerr << "cpp executor " << ex.id << ": " << e.what() << std::endl;
  }
}

/** --affinity: runs the calling thread (serving connection `conn`) on its cpu. */
void pinThread(const ExecutorState& ex, uint64_t conn) {
  if (ex.affinity.empty()) return;
  int cpu = ex.affinity[conn % ex.affinity.size()];
  cpu_set_t set;
  CPU_ZERO(&set);
  int rc = EINVAL;
  if (cpu >= 0 && cpu < CPU_SETSIZE) {
    CPU_SET(cpu, &set);
    rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  }
  if (rc != 0)
    std::cerr << "cpp executor " << ex.id << ": cannot pin connection " << conn << " to cpu " << cpu << ": "
              << std::strerror(rc) << std::endl;
}

/** The backend holds our stdin; EOF means it is gone, so we go too. */
void exitOnStdinEof() {
  char buf[4096];
  for (;;) {
    ssize_t n = read(0, buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EINTR)) _exit(0);
  }
}

void serveConnection(std::shared_ptr<transport::TTransport> client, ExecutorState& ex, uint64_t conn) {
  // Nothing of the Executor protocol is read before the caller proved it holds the cluster
  // secret (engine/rpc/AUTH.md; no secret: local mode, no handshake).
  auto socket = std::dynamic_pointer_cast<transport::TSocket>(client);
  try {
    if (!socket) throw spindle::auth::AuthFailed("not a socket");
    spindle::auth::serverHandshake(socket->getSocketFD(), spindle::auth::secret());
  } catch (const std::exception& e) {
    std::cerr << "cpp executor " << ex.id << ": refused a connection: " << e.what() << std::endl;
    try {
      client->close();
    } catch (...) {
    }
    return;
  }
  pinThread(ex, conn);
  auto handler = std::make_shared<ExecutorHandler>(ex, g_stopping);
  spindle::rpc::ExecutorProcessor processor(handler);
  auto trans = std::make_shared<transport::TBufferedTransport>(client, 1 << 16);
  auto proto = std::make_shared<protocol::TBinaryProtocol>(trans);
  try {
    while (processor.process(proto, proto, nullptr)) {
      if (g_stopping) {
        std::cerr << "cpp executor " << ex.id << ": shutdown" << std::endl;
        _exit(0);
      }
    }
  } catch (const transport::TTransportException&) {
    // peer closed the connection
  } catch (const std::exception& e) {
    std::cerr << "cpp executor " << ex.id << ": connection error: " << e.what() << std::endl;
  }
  try {
    trans->close();
  } catch (...) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  static ExecutorState ex;  // lives until _exit
  int port;
  parseArgs(argc, argv, port, ex);
  signal(SIGPIPE, SIG_IGN);  // a backend that hangs up must not kill us mid-reply
  std::thread(exitOnStdinEof).detach();

  transport::TServerSocket server(ex.bind, port);
  try {
    server.listen();
  } catch (const std::exception& e) {
    std::cerr << "cpp executor " << ex.id << ": cannot listen on " << ex.bind << ":" << port << ": "
              << e.what() << std::endl;
    return 1;
  }
  std::printf("READY %d\n", port);
  std::fflush(stdout);
  dup2(2, 1);  // user code printing must not fill the pipe the backend stops reading
  std::cerr << "cpp executor " << ex.id << " pid " << getpid() << " on " << ex.bind << ":" << port
            << " cores " << ex.cores << " memory " << ex.memory << std::endl;
  for (uint64_t conn = 0;; conn++) {
    std::shared_ptr<transport::TTransport> client;
    try {
      client = server.accept();
    } catch (const transport::TTransportException& e) {
      std::cerr << "cpp executor " << ex.id << ": accept: " << e.what() << std::endl;
      continue;
    }
    std::thread(serveConnection, client, std::ref(ex), conn).detach();
  }
}
