// spindle-cpp-executor: serves the Executor Thrift service (engine/rpc/EXECUTOR_CLI.md).
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TServerSocket.h>
#include <thrift/transport/TTransportException.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <thread>

#include "handler.hpp"

using namespace apache::thrift;
using spindle::ExecutorHandler;
using spindle::ExecutorState;

namespace {

std::atomic<bool> g_stopping{false};

void usage() {
  std::cerr << "usage: spindle-cpp-executor --port N --id K --cores C --memory BYTES "
               "--scratch DIR[,DIR...]\n";
  std::exit(2);
}

void parseArgs(int argc, char** argv, int& port, ExecutorState& ex) {
  port = 0;
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
    else if (a == "--scratch") {
      std::stringstream ss(value());
      std::string d;
      while (std::getline(ss, d, ','))
        if (!d.empty()) ex.scratch.push_back(d);
    }
    // unknown flags are ignored (EXECUTOR_CLI.md); their values are skipped if not flags
    else if (a.rfind("--", 0) == 0 && !hasValue && i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0)
      i++;
  }
  if (port <= 0) usage();
  if (ex.scratch.empty()) ex.scratch.push_back("/tmp");
}

/** The backend holds our stdin; EOF means it is gone, so we go too. */
void exitOnStdinEof() {
  char buf[4096];
  for (;;) {
    ssize_t n = read(0, buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EINTR)) _exit(0);
  }
}

void serveConnection(std::shared_ptr<transport::TTransport> client, ExecutorState& ex) {
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

  transport::TServerSocket server("127.0.0.1", port);
  try {
    server.listen();
  } catch (const std::exception& e) {
    std::cerr << "cpp executor " << ex.id << ": cannot listen on port " << port << ": " << e.what()
              << std::endl;
    return 1;
  }
  std::printf("READY %d\n", port);
  std::fflush(stdout);
  dup2(2, 1);  // user code printing must not fill the pipe the backend stops reading
  std::cerr << "cpp executor " << ex.id << " pid " << getpid() << " on 127.0.0.1:" << port
            << " cores " << ex.cores << " memory " << ex.memory << std::endl;
  for (;;) {
    std::shared_ptr<transport::TTransport> client;
    try {
      client = server.accept();
    } catch (const transport::TTransportException& e) {
      std::cerr << "cpp executor " << ex.id << ": accept: " << e.what() << std::endl;
      continue;
    }
    std::thread(serveConnection, client, std::ref(ex)).detach();
  }
}
