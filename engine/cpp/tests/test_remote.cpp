// End-to-end test of the cluster-mode features of spindle-cpp-executor: `tcp://` inputs and
// function refs fetched from the Python file server (engine/rpc/FETCH.md), FETCH_FAILED,
// `@work/` outputs, RAW_MEMORY storage and --affinity.
// Usage: test-remote BUILD_DIR PYTHON ENGINE_PYTHON_DIR
#include <dirent.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>

#include <algorithm>
#include <climits>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "harness.hpp"

static std::string g_fetch, g_remote, g_fs;  // fetch dir, served dir, file server HOST:PORT

static std::string url(const std::string& path, const std::string& host = g_fs) {
  return "tcp://" + host + path;
}

/** A listening socket on a free port of 127.0.0.1 (close it for a dead port). */
static int listenFree(int& port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd, (sockaddr*)&a, len) != 0 || listen(fd, 4) != 0 || getsockname(fd, (sockaddr*)&a, &len) != 0)
    std::abort();
  port = ntohs(a.sin_port);
  return fd;
}

/** Starts `python -m spindle_engine.fileserver` serving `roots`; returns its pid. */
static pid_t startFileServer(const std::string& python, const std::string& pythonPath,
                             const std::string& roots, int& port) {
  int out[2];
  if (pipe(out) != 0) std::abort();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    setenv("PYTHONPATH", pythonPath.c_str(), 1);
    execl(python.c_str(), python.c_str(), "-m", "spindle_engine.fileserver", "--port", "0", "--root",
          roots.c_str(), (char*)nullptr);
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  close(out[0]);
  CHECK(line.rfind("READY ", 0) == 0);
  port = line.size() > 6 ? std::atoi(line.c_str() + 6) : 0;
  return pid;
}

static std::vector<std::string> listDir(const std::string& dir, const std::string& prefix = "") {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != ".." && n.rfind(prefix, 0) == 0) out.push_back(n);
    }
    closedir(d);
  }
  return out;
}

static bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

static rpc::Sink takeAll() {
  rpc::Sink s = sinkOf(rpc::SinkKind::TAKE);
  s.__set_n(1 << 30);
  return s;
}

static rpc::Source textSource(const std::string& path, int64_t offset, int64_t length) {
  rpc::Source s;
  s.kind = rpc::SourceKind::TEXT;
  s.__set_text_path(path);
  s.__set_offset(offset);
  s.__set_length(length);
  return s;
}

static void remoteInputs(Client& cl, const std::string& advertise) {
  std::string a = g_remote + "/a.bin", b = g_remote + "/b.bin";
  writePartition(a, ints(0, 100));
  writePartition(b, ints(100, 150));
  rpc::TaskResult r;
  cl.c->run(r, task(files({url(a), url(b)}), {}, takeAll()));
  CHECK(resultValue(r) == Value(List(ints(0, 150))));
  CHECK(listDir(g_fetch, "fetch-").empty());  // fetched copies are gone after the task

  // own host: read locally, nothing listens at `advertise`
  cl.c->run(r, task(files({url(a, advertise)}), {}, sinkOf(rpc::SinkKind::COUNT)));
  CHECK_EQ(r.records, 100);

  // SHUFFLE merge (remote and local files mixed), JOIN with remote right_paths
  std::string kv1 = g_remote + "/kv1.bin", kv2 = g_remote + "/kv2.bin", local = g_tmp + "/kv-local.bin";
  writePartition(kv1, {Value::pair("a", 1), Value::pair("b", 2)});
  writePartition(kv2, {Value::pair("a", "x"), Value::pair("c", "y")});
  writePartition(local, {Value::pair("a", 10)});
  rpc::Source mv = shuffle(rpc::MergeKind::MERGE_VALUES, {url(kv1), local});
  mv.__set_fn(fn("wordcount", "Join"));
  cl.c->run(r, task(mv, {}, takeAll()));
  CHECK(resultValue(r) == Value(List{Value::pair("a", 11), Value::pair("b", 2)}));
  rpc::Source j = shuffle(rpc::MergeKind::JOIN, {local});
  j.__set_right_paths({url(kv2)});
  cl.c->run(r, task(j, {}, takeAll()));
  CHECK(resultValue(r) == Value(List{Value::pair("a", Value::pair(10, "x"))}));

  // TEXT: a remote split is fetched as exactly its bytes (aligned to line starts)
  std::string text = g_remote + "/lines.txt", body;
  std::vector<size_t> starts;
  for (int i = 0; i < 20; i++) {
    starts.push_back(body.size());
    body += "line " + std::to_string(i) + (i % 3 ? "\n" : "\r\n");
  }
  std::ofstream(text, std::ios::binary) << body;
  int64_t off = int64_t(starts[5]), len = int64_t(starts[9] - starts[5]);
  cl.c->run(r, task(textSource(url(text), off, len), {}, takeAll()));
  CHECK(resultValue(r) == Value(List{Value("line 5"), Value("line 6"), Value("line 7"), Value("line 8")}));
  rpc::TaskResult local2;
  cl.c->run(local2, task(textSource(text, off, len), {}, takeAll()));
  CHECK(resultValue(local2) == resultValue(r));
  cl.c->run(r, task(textSource(url(text), int64_t(starts[18]), 1000), {}, takeAll()));  // past the end
  CHECK(resultValue(r) == Value(List{Value("line 18"), Value("line 19")}));
  CHECK(listDir(g_fetch, "fetch-").empty());
}

/** A server answering every request with a header promising 100 bytes, then 10, then closing. */
static void shortServer(int fd) {
  int c = accept(fd, nullptr, nullptr);
  char buf[512];
  if (c >= 0 && read(c, buf, sizeof buf) > 0) {
    unsigned char head[8] = {0, 0, 0, 0, 0, 0, 0, 100};
    if (write(c, head, 8) != 8 || write(c, "0123456789", 10) != 10) std::perror("shortServer");
  }
  if (c >= 0) close(c);
}

static void fetchFailures(Client& cl) {
  int dead, shortPort;
  close(listenFree(dead));
  std::string deadHost = "127.0.0.1:" + std::to_string(dead);
  rpc::Sink count = sinkOf(rpc::SinkKind::COUNT);

  std::string u = url("/nowhere/x.bin", deadHost);
  rpc::TaskError e = taskError(cl, task(files({u}), {}, count, 7));
  CHECK_EQ(e.kind, std::string("FETCH_FAILED"));
  CHECK_EQ(e.host, deadHost);
  CHECK(contains(e.message, u));
  CHECK(e.__isset.partition && e.partition == 7);

  // a missing file after a good one: error answer, the good copy is deleted too
  u = url(g_remote + "/nothere.bin");
  e = taskError(cl, task(files({url(g_remote + "/a.bin"), u}), {}, count, 3));
  CHECK_EQ(e.kind, std::string("FETCH_FAILED"));
  CHECK_EQ(e.host, g_fs);
  CHECK(contains(e.message, u) && contains(e.message, "nothere.bin"));
  CHECK(listDir(g_fetch, "fetch-").empty());

  // outside the served dirs
  e = taskError(cl, task(files({url("/etc/hostname")}), {}, count));
  CHECK_EQ(e.kind, std::string("FETCH_FAILED"));

  // short read
  int fd = listenFree(shortPort);
  std::thread srv(shortServer, fd);
  std::string shortHost = "127.0.0.1:" + std::to_string(shortPort);
  e = taskError(cl, task(files({url("/x.bin", shortHost)}), {}, count));
  srv.join();
  close(fd);
  CHECK_EQ(e.kind, std::string("FETCH_FAILED"));
  CHECK_EQ(e.host, shortHost);
  CHECK(contains(e.message, "10 of 100"));
  CHECK(listDir(g_fetch, "fetch-").empty());

  // function refs
  rpc::Function bad;
  bad.ref = url("/nowhere/libx.so:AddOne", deadHost);
  e = taskError(cl, task(files({g_remote + "/a.bin"}), {op(rpc::OpKind::MAP, &bad)}, count));
  CHECK_EQ(e.kind, std::string("FETCH_FAILED"));
  CHECK_EQ(e.function_, bad.ref);
  CHECK_EQ(e.host, deadHost);
  CHECK(contains(e.message, bad.ref));
}

static void remoteFunctions(Client& cl, Client& cl2) {
  char real[PATH_MAX];
  CHECK(realpath((g_build + "/examples/libbasic.so").c_str(), real) != nullptr);
  rpc::Function addOne;
  addOne.ref = url(real) + ":AddOne";
  rpc::TaskResult r;
  for (Client* c : {&cl, &cl2}) {  // two connections: the library is fetched once per process
    c->c->run(r, task(files({g_remote + "/a.bin"}), {op(rpc::OpKind::MAP, &addOne)}, takeAll()));
    CHECK(resultValue(r) == Value(List(ints(1, 101))));
  }
  CHECK_EQ(listDir(g_fetch, "lib-").size(), size_t(1));  // kept
  rpc::Function missing = addOne;
  missing.ref = url(real) + ":NoSuchThing";
  std::string function;
  CHECK_EQ(errorKind(cl, task(files({g_remote + "/a.bin"}), {op(rpc::OpKind::MAP, &missing)}, takeAll()),
                     &function),
           std::string("FUNCTION_NOT_FOUND"));
  CHECK_EQ(function, missing.ref);
}

static void workDirs(Client& cl, const std::string& w1, const std::string& w2) {
  rpc::TaskResult r;
  rpc::Sink store = sinkOf(rpc::SinkKind::STORE);
  std::set<std::string> dirs;
  for (int i = 0; i < 2; i++) {
    store.__set_path("@work/st/deep/part-" + std::to_string(i) + ".bin");
    cl.c->run(r, task(files({g_remote + "/a.bin"}), {}, store));
    CHECK_EQ(r.files.size(), size_t(1));
    const std::string& f = r.files[0];
    bool inW1 = f == w1 + "/st/deep/part-" + std::to_string(i) + ".bin";
    bool inW2 = f == w2 + "/st/deep/part-" + std::to_string(i) + ".bin";
    CHECK(inW1 || inW2);
    dirs.insert(inW1 ? w1 : w2);
    CHECK(readPartition(f) == ints(0, 100));
  }
  CHECK_EQ(dirs.size(), size_t(2));                // striped
  store.__set_path(g_tmp + "/new/parents/p.bin");  // absolute: parents created too
  cl.c->run(r, task(files({g_remote + "/a.bin"}), {}, store));
  CHECK(readPartition(g_tmp + "/new/parents/p.bin") == ints(0, 100));

  rpc::Sink hs = sinkOf(rpc::SinkKind::HASH_SHUFFLE);
  hs.__set_buckets(4);
  hs.__set_key_mode(rpc::KeyMode::WHOLE);
  hs.__set_path_prefix("@work/shuffle/s1/map-0");
  cl.c->run(r, task(files({g_remote + "/a.bin"}), {}, hs));
  std::set<std::string> parents;
  size_t n = 0;
  for (auto& [b, fs] : r.buckets)
    for (auto& f : fs) {
      parents.insert(f.substr(0, f.rfind('/')));
      n += readPartition(f).size();
    }
  CHECK_EQ(n, size_t(100));
  CHECK_EQ(parents.size(), size_t(1));
  CHECK(*parents.begin() == w1 + "/shuffle/s1" || *parents.begin() == w2 + "/shuffle/s1");
}

static void rawStorage(Client& cl) {
  std::vector<Value> recs;
  size_t encoded = 0;
  for (int i = 0; i < 5000; i++) {
    recs.push_back(
        Value::pair("key-" + std::to_string(i % 10), "a fairly repetitive value " + std::to_string(i % 7)));
    encoded += encode(recs.back()).size();
  }
  std::string in = g_tmp + "/raw-in.bin";
  writePartition(in, recs);
  rpc::Source cached;
  cached.kind = rpc::SourceKind::CACHED;
  std::map<int, int64_t> stored;
  rpc::TaskResult r;
  for (int level : {0, 6}) {
    rpc::Sink store = sinkOf(rpc::SinkKind::STORE);
    std::string key = "raw" + std::to_string(level);
    store.__set_cache_key(key);
    store.__set_compression(level);
    store.__set_path(g_tmp + "/raw-out-" + std::to_string(level) + ".bin");
    cl.c->run(r, task(files({in}), {}, store));
    CHECK_EQ(r.records, 5000);
    CHECK(r.__isset.stored_bytes);
    stored[level] = r.stored_bytes;
    CHECK(readPartition(g_tmp + "/raw-out-" + std::to_string(level) + ".bin") == recs);
    cached.__set_cache_key(key);
    cl.c->run(r, task(cached, {}, takeAll()));
    CHECK(resultValue(r) == Value(List(recs)));
    rpc::Sink take = sinkOf(rpc::SinkKind::TAKE);  // stops early
    take.__set_n(2);
    cl.c->run(r, task(cached, {}, take));
    CHECK(resultValue(r) == Value(List{recs[0], recs[1]}));
  }
  CHECK_EQ(stored[0], int64_t(encoded));  // exact
  CHECK(stored[6] > 0 && stored[6] * 10 < stored[0]);
  rpc::Sink objects = sinkOf(rpc::SinkKind::STORE);
  objects.__set_cache_key("objects");
  cl.c->run(r, task(files({in}), {}, objects));
  CHECK(r.__isset.stored_bytes && r.stored_bytes > 0);
  cached.__set_cache_key("objects");
  cl.c->run(r, task(cached, {}, takeAll()));
  CHECK(resultValue(r) == Value(List(recs)));
  cl.c->uncache({"raw0", "raw6", "objects"});
  CHECK_EQ(errorKind(cl, task(cached, {}, takeAll())), std::string("CACHE_MISS"));
  rpc::Sink bad = sinkOf(rpc::SinkKind::STORE);
  bad.__set_cache_key("bad");
  bad.__set_compression(12);
  CHECK_EQ(errorKind(cl, task(files({in}), {}, bad)), std::string("BAD_DATA"));
}

/** Cpus_allowed_list of every thread of `pid`. */
static std::vector<std::string> threadCpus(pid_t pid) {
  std::vector<std::string> out;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  for (const std::string& t : listDir(dir)) {
    std::ifstream f(dir + "/" + t + "/status");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("Cpus_allowed_list:", 0) == 0) {
        std::stringstream ss(line.substr(18));
        std::string v;
        ss >> v;
        out.push_back(v);
      }
  }
  return out;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: test-remote BUILD_DIR PYTHON ENGINE_PYTHON_DIR\n");
    return 2;
  }
  char real[PATH_MAX];
  g_build = realpath(argv[1], real) ? real : argv[1];
  char tmpl[] = "/tmp/spindle-cpp-remote-XXXXXX";
  g_tmp = mkdtemp(tmpl);
  for (const char* d : {"/scratch1", "/scratch2", "/w1", "/w2", "/remote"}) mkdir((g_tmp + d).c_str(), 0777);
  g_remote = g_tmp + "/remote";
  g_fetch = g_tmp + "/fetch";  // created by the executor
  signal(SIGPIPE, SIG_IGN);

  int fsPort = 0;
  pid_t fs = startFileServer(argv[2], argv[3], g_remote + "," + g_build + "/examples", fsPort);
  g_fs = "127.0.0.1:" + std::to_string(fsPort);

  cpu_set_t mine;
  sched_getaffinity(0, sizeof mine, &mine);
  int cpu = 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &mine)) cpu = c;  // the last cpu we may use

  int deadAdvertise;
  close(listenFree(deadAdvertise));
  std::string advertise = "127.0.0.1:" + std::to_string(deadAdvertise);
  Proc ex = startExecutor(11, 1LL << 30, 2,
                          {"--bind", "127.0.0.1", "--advertise", advertise, "--work",
                           g_tmp + "/w1," + g_tmp + "/w2", "--fetch-dir", g_fetch, "--affinity",
                           std::to_string(cpu)});
  {
    Client cl(ex.port), cl2(ex.port);
    rpc::ExecutorInfo info;
    cl.c->hello(info, {});
    cl2.c->hello(info, {});
    // both connection threads run on `cpu` only; the main thread keeps all of ours
    std::vector<std::string> cpus = threadCpus(ex.pid);
    size_t pinned = size_t(std::count(cpus.begin(), cpus.end(), std::to_string(cpu)));
    CHECK(CPU_COUNT(&mine) == 1 ? pinned == cpus.size() : pinned == 2 && cpus.size() > 2);
    remoteInputs(cl, advertise);
    fetchFailures(cl2);
    remoteFunctions(cl, cl2);
    workDirs(cl, g_tmp + "/w1", g_tmp + "/w2");
    rawStorage(cl);
    cl.c->shutdown();
  }
  int status = 0;
  CHECK(waitpid(ex.pid, &status, 0) == ex.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(ex.stdinFd);
  kill(fs, SIGTERM);
  waitpid(fs, &status, 0);
  std::string rm = "rm -rf " + g_tmp;
  if (system(rm.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", g_tmp.c_str());
  return checkSummary("test-remote");
}
