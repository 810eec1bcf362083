// Shared by the end-to-end test programs: starting spindle-cpp-executor and building tasks.
#pragma once

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "Executor.h"
#include "check.hpp"
#include "codec.hpp"

using namespace spindle;
using namespace apache::thrift;

inline std::string g_build, g_tmp;

struct Proc {
  pid_t pid = -1;
  int stdinFd = -1;
  int port = 0;
};

/** Starts the executor (scratch dirs g_tmp/scratch1,2) with `extra` flags; waits for READY. */
inline Proc startExecutor(int id, long long memory, int cores, const std::vector<std::string>& extra = {}) {
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) std::abort();
  Proc p;
  p.port = 20000 + int(getpid() % 20000) + id;
  p.pid = fork();
  if (p.pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[1]);
    close(out[0]);
    std::string exe = g_build + "/spindle-cpp-executor";
    std::string port = std::to_string(p.port), sid = std::to_string(id), mem = std::to_string(memory),
                c = std::to_string(cores), scratch = g_tmp + "/scratch1," + g_tmp + "/scratch2";
    std::vector<std::string> args = {exe, "--port",   port, "--id",      sid,     "--cores",
                                     c,   "--memory", mem,  "--scratch", scratch, "--future-flag",
                                     "x"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(&a[0]);
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  p.stdinFd = in[1];
  char buf[64] = {0};
  ssize_t n = read(out[0], buf, sizeof buf - 1);
  CHECK(n > 0 && std::string(buf).rfind("READY " + std::to_string(p.port), 0) == 0);
  close(out[0]);
  return p;
}

struct Client {
  std::shared_ptr<transport::TTransport> trans;
  std::unique_ptr<rpc::ExecutorClient> c;
  explicit Client(int port) {
    auto sock = std::make_shared<transport::TSocket>("127.0.0.1", port);
    trans = std::make_shared<transport::TBufferedTransport>(sock);
    auto proto = std::make_shared<protocol::TBinaryProtocol>(trans);
    c = std::make_unique<rpc::ExecutorClient>(proto);
    trans->open();
  }
};

inline rpc::Function fn(const std::string& lib, const std::string& sym) {
  rpc::Function f;
  f.ref = g_build + "/examples/lib" + lib + ".so:" + sym;
  return f;
}

inline rpc::Op op(rpc::OpKind::type kind, const rpc::Function* f = nullptr) {
  rpc::Op o;
  o.kind = kind;
  if (f) o.__set_fn(*f);
  return o;
}

inline rpc::Task task(rpc::Source src, std::vector<rpc::Op> ops, rpc::Sink sink, int partition = 0) {
  rpc::Task t;
  t.stage = "test";
  t.partition = partition;
  t.source = std::move(src);
  t.ops = std::move(ops);
  t.sink = std::move(sink);
  return t;
}

inline rpc::Source files(std::vector<std::string> paths) {
  rpc::Source s;
  s.kind = rpc::SourceKind::FILES;
  s.__set_paths(std::move(paths));
  return s;
}

inline rpc::Source shuffle(rpc::MergeKind::type merge, std::vector<std::string> paths) {
  rpc::Source s;
  s.kind = rpc::SourceKind::SHUFFLE;
  s.__set_merge(merge);
  s.__set_paths(std::move(paths));
  return s;
}

inline rpc::Sink sinkOf(rpc::SinkKind::type kind) {
  rpc::Sink s;
  s.kind = kind;
  return s;
}

inline Value resultValue(const rpc::TaskResult& r) { return decode(r.value); }

/** The error `t` fails with; kind "none" if it succeeds. */
inline rpc::TaskError taskError(Client& cl, const rpc::Task& t) {
  try {
    rpc::TaskResult r;
    cl.c->run(r, t);
  } catch (const rpc::TaskError& e) {
    return e;
  }
  rpc::TaskError none;
  none.kind = "none";
  return none;
}

inline std::string errorKind(Client& cl, const rpc::Task& t, std::string* function = nullptr) {
  rpc::TaskError e = taskError(cl, t);
  if (function) *function = e.function_;
  return e.kind;
}

inline std::vector<Value> ints(int64_t from, int64_t to) {
  std::vector<Value> v;
  for (int64_t i = from; i < to; i++) v.emplace_back((long long)i);
  return v;
}
