/*
 * Backend -> executor control protocol of the Spindle engine.
 *
 * Every executor (Python, C++) is a Thrift server answering `Executor` with
 * TBinaryProtocol (strict) over TBufferedTransport on a TCP socket. Partitions never travel
 * in these calls: they move between executors as files in the binary format of
 * engine/FORMAT.md (shared memory under /dev/shm on one host). Only small values
 * (action results, zero values, sort bounds) are carried here, also FORMAT-encoded.
 *
 * A task = one Source -> a fused chain of narrow Ops -> one Sink, run as a single pass.
 */

namespace py spindle_rpc
namespace cpp spindle.rpc

/** A user function, loaded by reference and cached per executor process. */
struct Function {
  /** "/abs/path/file.py:Class" (python) or "/abs/path/lib.so:symbol" (cpp). Also the name
      used in error messages. */
  1: required string ref,
  /** Python only: cloudpickle of a class, an instance or a plain callable; `ref` is then
      only a display name. A C++ executor answers FUNCTION_NOT_FOUND if this is set. */
  2: optional binary pickled,
}

/** Narrow (per-record) operations, fused into one pass. Signatures are given as
    call(...) of the user class; a plain pickled callable is called without the context. */
enum OpKind {
  MAP = 1,             // call(elem, ctx) -> elem'
  FLAT_MAP = 2,        // call(elem, ctx) -> iterable of elems
  FILTER = 3,          // call(elem, ctx) -> bool, keep when true
  KEY_BY = 4,          // call(elem, ctx) -> key ; emits (key, elem)
  KEYS = 5,            // (k, v) -> k           ; no function
  VALUES = 6,          // (k, v) -> v           ; no function
  MAP_PARTITIONS = 7,  // call(iterator, ctx) -> iterable of elems
  MAP_VALUES = 8,      // (k, v) -> (k, call(v, ctx))
}

struct Op {
  1: required OpKind kind,
  2: optional Function fn,
}

enum SourceKind {
  FILES = 1,    // the records of the partition files `paths`, file after file
  TEXT = 2,     // lines of `text_path` in the byte range [offset, offset+length), see FORMAT.md
  CACHED = 3,   // the partition kept in this executor's memory under `cache_key`
  SHUFFLE = 4,  // reduce side of a shuffle: the files `paths` combined per `merge`
}

/** How the reduce side of a shuffle combines the bucket files written for it. */
enum MergeKind {
  CONCAT = 1,       // all records of all files, in file order
  MERGE_VALUES = 2, // (k, v) pairs -> one (k, v) per key, v = fn(fn(v1, v2), v3)...; call(a, b, ctx)
  GROUP = 3,        // (k, v) pairs -> one (k, [v, ...]) per key (list in file order)
  DISTINCT = 4,     // one of each distinct record
  JOIN = 5,         // (k, v) in `paths` x (k, w) in `right_paths` -> (k, (v, w)) per matching pair
  SORTED_RUNS = 6,  // each file holds (sortkey, record) pairs already sorted per `ascending`;
                    // k-way merge of the runs (no re-sort), emit record only
}

/**
 * Paths in Source.paths, right_paths and text_path are either absolute local paths or, in
 * cluster mode, URLs `tcp://HOST:PORT/abs/path` of a file on the host whose file server listens
 * at HOST:PORT (engine/rpc/FETCH.md). An executor whose `--advertise` is HOST:PORT reads
 * /abs/path locally; any other executor fetches the file first. A remote TEXT text_path is
 * fetched as exactly the bytes [offset, offset+length), which the backend aligns to line starts.
 * Function refs may be URLs the same way (`tcp://HOST:PORT/abs/file.py:Class`).
 * A TEXT text_path may also be an HDFS file `webhdfs://USER@HOST:PORT/path` (the NameNode's
 * WebHDFS address), read from a DataNode with WebHDFS OPEN (Python executors only).
 */
struct Source {
  1: required SourceKind kind,
  2: optional list<string> paths,
  3: optional string text_path,
  4: optional i64 offset,
  5: optional i64 length,
  6: optional string cache_key,
  7: optional MergeKind merge,
  8: optional Function fn,               // MERGE_VALUES
  9: optional list<string> right_paths,  // JOIN
  10: optional bool ascending,           // SORTED_RUNS
}

/** Which key a keyed sink uses. */
enum KeyMode {
  WHOLE = 1,        // the record itself
  FIRST = 2,        // first element of a (k, v) pair
  FUNCTION = 3,     // call(elem, ctx) of `fn`
  ROUND_ROBIN = 4,  // HASH_SHUFFLE only: bucket = (partition + i) % buckets for the i-th record
}

/** Map-side combining before a hash shuffle writes its buckets. */
enum Combine {
  NONE = 1,
  MERGE_VALUES = 2,  // (k, v): per key v = fn(a, b)                   [reduceByKey]
  AGGREGATE = 3,     // (k, v): per key acc = fn(acc, v), acc from a fresh decode of `zero`
                     //                                                [aggregateByKey seqOp]
  DISTINCT = 4,      // drop duplicate records                         [distinct]
}

enum SinkKind {
  STORE = 1,         // write the partition to `path` if set, keep it in memory under `cache_key`
                     // if set; result.records = count, result.files = [path] if written
  COUNT = 2,         // result.records = count
  HASH_SHUFFLE = 3,  // bucket = crc32(key) % buckets (FORMAT.md); files named from `path_prefix`
  RANGE_SHUFFLE = 4, // bucket by `bounds` (FORMAT.md); each file = (sortkey, record) pairs sorted
  SAMPLE_KEYS = 5,   // result.value = list of at most `n` keys (uniform sample, seeded by `seed`)
  REDUCE = 6,        // result.value = [] if empty else [fn(fn(r1, r2), r3)...]
  FOLD = 7,          // result.value = acc, acc = fn(acc, r) from a fresh decode of `zero`
                     //   (fold, and aggregate's seqOp; the driver combines partials the same way)
  TAKE = 8,          // result.value = list of the first `n` records
  TOP = 9,           // result.value = list of the `n` largest records by key, largest first
  SELECT = 10,       // result.value = list of the records at `indices` (ascending, may repeat)
  TEXT_FILE = 11,    // write one line per record to `path` (FORMAT.md "Text and JSON")
  JSON_FILE = 12,    // write one JSON value per line to `path`
}

struct Sink {
  1: required SinkKind kind,
  2: optional string path,          // STORE, TEXT_FILE, JSON_FILE
  3: optional string cache_key,     // STORE
  4: optional i32 buckets,          // HASH_SHUFFLE, RANGE_SHUFFLE
  5: optional string path_prefix,   // shuffles: output files are path_prefix + "-<bucket>-<run>.bin"
  6: optional KeyMode key_mode,     // shuffles, SAMPLE_KEYS, TOP
  7: optional Function fn,          // KeyMode FUNCTION; REDUCE, FOLD, Combine MERGE_VALUES/AGGREGATE
  8: optional Combine combine,      // HASH_SHUFFLE
  9: optional binary zero,          // FOLD, Combine AGGREGATE: one FORMAT-encoded value
  10: optional binary bounds,       // RANGE_SHUFFLE: one FORMAT-encoded list of buckets-1 keys
  11: optional bool ascending,      // RANGE_SHUFFLE
  12: optional i64 n,               // SAMPLE_KEYS, TAKE, TOP
  13: optional list<i64> indices,   // SELECT
  14: optional i64 seed,            // SAMPLE_KEYS
  /** STORE with cache_key: absent = keep the records as objects (MEMORY); 0..9 = keep them
      FORMAT-encoded, zlib-compressed at this level (0 = stored uncompressed) (RAW_MEMORY). */
  15: optional i32 compression,
}

/*
 * Output paths (Sink.path, Sink.path_prefix) may start with `@work/`: the executor puts the
 * file under one of its `--work` dirs (striped: the i-th such file of a process goes to dir
 * i mod n) and reports the real absolute path in TaskResult. Executors create missing parent
 * directories of every output path. A TEXT_FILE/JSON_FILE path may be an HDFS file
 * `webhdfs://USER@HOST:PORT/path`, created with WebHDFS CREATE (Python executors only).
 */

struct Task {
  1: required string stage,         // display name, e.g. "stage 3"
  2: required i32 partition,
  3: required Source source,
  4: required list<Op> ops,
  5: required Sink sink,
  6: optional i32 attempt,
}

struct TaskResult {
  1: required i64 records,                       // records that reached the sink
  2: optional binary value,                      // one FORMAT-encoded value (see SinkKind)
  3: optional map<i32, list<string>> buckets,    // shuffles: bucket -> files written (may omit empty)
  4: optional list<string> files,                // STORE, TEXT_FILE, JSON_FILE
  5: optional i32 spill_files,                   // shuffle runs written to scratch dirs
  6: optional i64 spill_bytes,
  7: optional i64 stored_bytes,                  // STORE in memory: bytes it holds (raw: exact)
}

/** kind: FUNCTION_NOT_FOUND | FUNCTION_FAILED | BAD_DATA | CACHE_MISS | FETCH_FAILED | INTERNAL */
exception TaskError {
  1: required string kind,
  2: required string message,
  3: optional string function,   // ref of the function at fault
  4: optional i32 partition,
  5: optional string host,       // FETCH_FAILED: HOST:PORT of the file server that failed
}

struct ExecutorInfo {
  1: required string language,   // "python" | "cpp"
  2: required i32 id,
  3: required i32 pid,
  4: required i32 cores,         // tasks it runs concurrently (one per connection)
}

service Executor {
  /** First call on each connection; `properties` are the driver's, visible to user functions
      through their context. */
  ExecutorInfo hello(1: map<string, string> properties),
  TaskResult run(1: Task task) throws (1: TaskError error),
  /** Forget cached partitions (unknown keys are ignored). */
  void uncache(1: list<string> cache_keys),
  /** Reply, then exit the process. */
  void shutdown(),
}
