#!/usr/bin/env python3
"""The Spindle engine vs PySpark, side by side in one run on this machine with the same cores:
word count (500 MB of text), K-Means (Python UDF with numpy; 270,000 × 500 floats, K = 12,
10 iterations), Minebench (the seed's SHA-256 proof-of-work as two chained maps), a sort of
≥ 1 GB of text lines, and two iterative jobs whose lineage grows every iteration (issue 24's
reduceByKey/union loop, 20 iterations; PageRank, 10 iterations: bench/engine/cluster_job.py's,
the same code as on the clusters). Each runs on PySpark, on the Spindle engine with Python functions, and
(when engine/cpp is built) on the Spindle engine with the driver in Python and the functions in
C++ (bench/engine/cpp/*.cpp and engine/cpp/examples, compiled against engine/cpp/include like
any user's .so); word count also runs as the seed's Figure 5 (Python tokenizer, C++ reducer).

    .venv/bin/python bench/engine/compare.py [--cores 2] [--small]
        [--only wordcount|kmeans|minebench|sort|iterative|pagerank]

Installs what it needs (bench/engine/requirements.txt: pyspark, numpy; Java 17 is on the
machine), checks that both engines give the same result, and appends one row per workload and
engine to docs/BENCHMARKS.md ("Engine vs PySpark"). --small is a quick run with small inputs.
"""
import argparse
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

HEADING = "## Engine vs PySpark (same machine, same cores, one run)"
TABLE_HEADER = ("| measured (UTC) | workload | engine | load (s) | job (s) | PySpark job / this job | same result | "
                "machine | command |\n|---|---|---|---|---|---|---|---|---|\n")


def ensure_requirements() -> None:
    try:
        import numpy  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-r", str(HERE / "requirements.txt")], check=True)


# --- the two engines, behind one small interface -----------------------------------------------
CPP_EXECUTOR = HERE.parent.parent / "engine" / "cpp" / "build" / "spindle-cpp-executor"
CPP_EXAMPLES = HERE.parent.parent / "engine" / "cpp" / "build" / "examples"


def cpp_library(data_dir: str) -> Path:
    """bench/engine/cpp/kmeans.cpp built as a user would build a function library."""
    out = Path(data_dir) / "libkmeans.so"
    subprocess.run(["g++", "-std=c++17", "-O3", "-march=native", "-fopenmp-simd", "-shared", "-fPIC",
                    "-I", str(HERE.parent.parent / "engine" / "cpp" / "include"),
                    str(HERE / "cpp" / "kmeans.cpp"), "-o", str(out)], check=True)
    return out


class SpindleEngine:
    name = "Spindle engine (Python)"
    language = "python"

    def __init__(self, cores: int, props: dict[str, str]):
        import cloudpickle
        import cluster_job
        import workloads

        from spindle_engine import Cluster, Engine, Properties, Worker
        cloudpickle.register_pickle_by_value(workloads)  # instances travel with their class's code
        cloudpickle.register_pickle_by_value(cluster_job)
        self._engine = Engine.start()
        cluster = Cluster(Properties({"executor.instances": 1, "executor.cores": cores, "executor.memory": "4GB",
                                      **props}))
        self.worker = Worker(cluster, "python")
        self.cpp = Worker(cluster, "cpp") if self.language == "cpp" else None

    def parallelize(self, data, slices):
        return self.worker.parallelize(data, slices)

    def text_file(self, path, partitions):
        return self.worker.textFile(path, partitions)

    def stop(self):
        self._engine.stop()


class SpindleCppEngine(SpindleEngine):
    name = "Spindle engine (Python driver + C++ functions)"
    language = "cpp"


class SpindleFigure5Engine(SpindleEngine):
    """Word count only: the seed's Figure 5 pipeline, a Python tokenizer handing its pairs to a
    C++ reducer (importData)."""
    name = "Spindle engine (Figure 5: Python tokenizer → importData → C++ reducer)"
    language = "cpp"


class PlainProcesses:
    """Minebench only: the same Python functions in as many plain processes as cores
    (multiprocessing), no engine at all: the floor of any engine running them in CPython."""
    name = "no engine: the same Python functions in plain processes"
    language = "python"

    def __init__(self, cores: int, props: dict[str, str]):
        import multiprocessing
        self.pool = multiprocessing.get_context("fork").Pool(cores)

    def stop(self):
        self.pool.terminate()


def _mine(job):
    from workloads import MineBlock, MineNonce
    block, bits = job
    return MineNonce(bits).call(MineBlock().call(block))


class PySparkEngine:
    name = "PySpark 3.5.3 local mode"
    language = "python"

    def __init__(self, cores: int, props: dict[str, str]):
        from pyspark import SparkConf, SparkContext
        os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers use this venv (numpy), as Spindle's do
        conf = (SparkConf().setMaster(f"local[{cores}]").setAppName("spindle-bench").set("spark.ui.enabled", "false")
                .set("spark.driver.memory", "8g"))
        self.sc = SparkContext(conf=conf)
        self.sc.setLogLevel("ERROR")
        self.sc.addPyFile(str(HERE / "workloads.py"))  # Spark's way to ship the functions' module
        self.sc.addPyFile(str(HERE / "cluster_job.py"))

    def parallelize(self, data, slices):
        return self.sc.parallelize(data, slices)

    def text_file(self, path, partitions):
        return self.sc.textFile(path, partitions)

    def stop(self):
        self.sc.stop()


def functions(engine):
    """The workloads' user functions as each engine takes them: Spindle by reference or as
    instances it pickles; PySpark through lambdas calling the same methods."""
    spindle = isinstance(engine, SpindleEngine)
    ref = lambda name: f"{HERE / 'workloads.py'}:{name}"  # noqa: E731

    def call(instance, by_ref=None):
        if spindle:
            return by_ref or instance
        return instance.call

    return spindle, ref, call


# --- workloads: each returns (load seconds, job seconds, result) --------------------------------
def kmeans(engine, args):
    import numpy as np
    from workloads import DIMENSIONS, KMeansAssign, KMeansMerge, KMeansPoints, new_centroids
    spindle, ref, call = functions(engine)
    points, partitions = args.kmeans_points, args.cores * 4
    started = time.perf_counter()
    data = engine.parallelize(range(partitions), partitions).flatMap(call(KMeansPoints(points, partitions))).cache()
    assert data.count() == points
    loaded = time.perf_counter()
    centroids = np.random.default_rng(3).normal(0, 10, (12, DIMENSIONS))
    if engine.language == "cpp":
        data = engine.cpp.importData(data).cache()  # the points move to the C++ executors once
        assert data.count() == points
        loaded = time.perf_counter()
        for _ in range(args.iterations):
            centroids.tofile(args.centroids_file)  # what the C++ tasks read in before()
            partials = (data.mapPartitions(f"{args.kmeans_so}:KMeansAssign")
                        .reduceByKey(f"{args.kmeans_so}:KMeansMerge").collect())
            centroids = new_centroids(partials, centroids)
        return loaded - started, time.perf_counter() - loaded, np.round(centroids, 6)
    merge = ref("KMeansMerge") if spindle else KMeansMerge().call
    for _ in range(args.iterations):
        assign = KMeansAssign(centroids)
        partials = data.mapPartitions(assign if spindle else assign.call).reduceByKey(merge).collect()
        centroids = new_centroids(partials, centroids)
    done = time.perf_counter()
    return loaded - started, done - loaded, np.round(centroids, 6)


def minebench(engine, args):
    from workloads import MineBlock, MineNonce
    spindle, ref, call = functions(engine)
    started = time.perf_counter()
    if isinstance(engine, PlainProcesses):
        nonces = engine.pool.map(_mine, [(b, args.bits) for b in range(args.blocks)], chunksize=8)
        return 0.0, time.perf_counter() - started, nonces
    if engine.language == "cpp":
        so = CPP_EXAMPLES / "libminebench.so"
        blocks = engine.cpp.parallelize(range(args.blocks), args.cores * 8)
        nonces = blocks.map(f"{so}:MineBlock").map(f"{so}:MineNonce").collect()
        return 0.0, time.perf_counter() - started, [tuple(n) for n in nonces]
    blocks = engine.parallelize(range(args.blocks), args.cores * 8)
    headers = blocks.map(ref("MineBlock") if spindle else MineBlock().call)
    nonces = headers.map(MineNonce(args.bits) if spindle else MineNonce(args.bits).call).collect()
    return 0.0, time.perf_counter() - started, nonces


def sort(engine, args):
    from workloads import SortKey
    spindle, ref, call = functions(engine)
    path = sort_input(args)
    out = Path(args.data_dir) / f"sorted-{'pyspark' if not spindle else engine.language}"
    subprocess.run(["rm", "-rf", str(out)], check=True)
    started = time.perf_counter()
    if engine.language == "cpp":
        lines = engine.cpp.textFile(str(path), args.cores * 8)
        key = f"{CPP_EXAMPLES / 'libbasic.so'}:Identity"
    else:
        lines = engine.text_file(str(path), args.cores * 8)
        key = ref("SortKey") if spindle else SortKey().call
    lines.sortBy(key, True, args.cores * 4).saveAsTextFile(str(out))
    done = time.perf_counter()
    lines_out, ordered = check_sorted(out)
    assert ordered and lines_out == args.sort_mb * 1_000_000 // 100, (lines_out, ordered)
    return 0.0, done - started, lines_out


def sort_input(args) -> Path:
    """≈ args.sort_mb MB of distinct lines: a random 12-letter key and a payload (TeraSort-like)."""
    import numpy as np
    path = Path(args.data_dir) / f"sort-{args.sort_mb}mb.txt"
    if path.exists():
        return path
    rng = np.random.default_rng(11)
    lines_total = args.sort_mb * 1_000_000 // 100
    with open(f"{path}.tmp", "w") as f:
        for start in range(0, lines_total, 500_000):
            n = min(500_000, lines_total - start)
            keys = rng.integers(97, 123, (n, 12), dtype=np.uint8).view("S12").ravel()
            f.writelines(f"{k.decode()} {start + i:012d} {'x' * 73}\n" for i, k in enumerate(keys))
    os.rename(f"{path}.tmp", path)
    return path


def wordcount(engine, args):
    """Python functions; C++ functions (tokenizer and reducer, read by a C++ worker); and the
    seed's Figure 5: a Python tokenizer handing its pairs to a C++ worker (importData) whose
    reducer adds the counts."""
    from gen_text import generate
    from workloads import WordJoin, WordSplit
    spindle, ref, call = functions(engine)
    path = generate(str(Path(args.data_dir) / f"words-{args.words_mb}.txt"), args.words_mb)
    started = time.perf_counter()
    lines = engine.text_file(path, args.cores * 4)
    cpp = CPP_EXAMPLES / "libwordcount.so"
    if not spindle:
        counts = lines.flatMap(WordSplit().call).reduceByKey(WordJoin().call).collect()
    elif isinstance(engine, SpindleFigure5Engine):
        pairs = engine.cpp.importData(lines.flatMap(ref("WordSplit")))
        counts = pairs.reduceByKey(f"{cpp}:Join").collect()
    elif engine.language == "cpp":
        lines = engine.cpp.textFile(path, args.cores * 4)
        counts = lines.flatMap(f"{cpp}:SplitPairs").reduceByKey(f"{cpp}:Join").collect()
    else:
        counts = lines.flatMap(ref("WordSplit")).reduceByKey(ref("WordJoin")).collect()
    return 0.0, time.perf_counter() - started, dict(counts)


def iterations_of(job):
    """A workload running one of cluster_job's iterative jobs; the result also keeps each
    iteration's seconds (`ITERATIONS[engine name]`) for the row."""
    def workload(engine, args):
        import cluster_job
        times = []
        started = time.perf_counter()
        result = getattr(cluster_job, job)(engine, times.append)
        ITERATIONS[engine.name] = times
        return 0.0, time.perf_counter() - started, result
    return workload


ITERATIONS: dict[str, list[float]] = {}


def first_result(cores: int) -> float:
    """Seconds from Engine.start() to the result of a trivial job (issue 7: within 1 s)."""
    from spindle_engine import Cluster, Engine, Properties, Worker
    started = time.perf_counter()
    with Engine.start():
        cluster = Cluster(Properties({"executor.instances": 1, "executor.cores": cores}))
        assert Worker(cluster, "python").parallelize(range(10)).map(lambda x: x + 1).count() == 10
        return time.perf_counter() - started


def check_sorted(folder: Path) -> tuple[int, bool]:
    """(lines, sorted?) over the output files in partition order."""
    files = sorted(p for p in folder.iterdir() if p.name.startswith("part-"))
    count, previous, ordered = 0, "", True
    for file in files:
        with open(file) as f:
            for line in f:
                ordered = ordered and line >= previous
                previous = line
                count += 1
    return count, ordered


WORKLOADS = {"wordcount": wordcount, "kmeans": kmeans, "minebench": minebench, "sort": sort,
             "iterative": iterations_of("iterative"), "pagerank": iterations_of("pagerank")}
PYTHON_ONLY = {"iterative", "pagerank"}  # no C++ variant
EXTRA_ENGINES = {"wordcount": [SpindleFigure5Engine], "minebench": [PlainProcesses]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--only", choices=sorted(WORKLOADS))
    parser.add_argument("--small", action="store_true", help="small inputs: a quick check, not a measurement")
    parser.add_argument("--data-dir", default="/tmp/spindle-bench")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    args.kmeans_points, args.iterations = (20_000, 3) if args.small else (270_000, 10)
    args.blocks, args.bits = (200, 10) if args.small else (2_000, 14)
    args.sort_mb = 50 if args.small else 1_000
    args.words_mb = 20 if args.small else 500
    os.makedirs(args.data_dir, exist_ok=True)
    ensure_requirements()
    from results import machine, record
    engines = [PySparkEngine, SpindleEngine]
    if CPP_EXECUTOR.exists():
        engines.append(SpindleCppEngine)
        args.kmeans_so = cpp_library(args.data_dir)
    args.centroids_file = str(Path(args.data_dir) / "centroids.bin")
    props = {"kmeans.centroids_file": args.centroids_file, "minebench.bits": str(args.bits)}

    seconds = first_result(args.cores)
    print(f"first result of a trivial job: {seconds:.2f}s after Engine.start()", flush=True)
    if not (args.no_record or args.small or args.only):
        record(HEADING, TABLE_HEADER,
               f"| {datetime.now(UTC):%Y-%m-%d %H:%M} | first result of a trivial job after `Engine.start()` "
               f"| Spindle engine (Python) | – | **{seconds:.2f}** | – | – | {machine()} | "
               "`.venv/bin/python bench/engine/compare.py` |")
    for name, workload in WORKLOADS.items():
        if args.only and args.only != name:
            continue
        rows = []
        extra = [e for e in EXTRA_ENGINES.get(name, []) if e.language == "python" or SpindleCppEngine in engines]
        for engine_class in engines + extra:
            if name in PYTHON_ONLY and engine_class.language != "python":
                continue
            engine = engine_class(args.cores, props)
            try:
                rows.append((engine_class.name, *workload(engine, args)))
            finally:
                engine.stop()
        spark_job, reference = rows[0][2], rows[0][3]
        for engine_name, load_s, job_s, result in rows:
            same = _same(result, reference)
            flat = _flatness(ITERATIONS.get(engine_name)) if name in PYTHON_ONLY else ""
            print(f"{name}: {engine_name}: load {load_s:.2f}s job {job_s:.2f}s same result: {same}{flat}", flush=True)
            if args.no_record or args.small:
                continue
            command = ".venv/bin/python bench/engine/compare.py" + (f" --cores {args.cores}" if args.cores != 2 else "")
            record(HEADING, TABLE_HEADER,
                   f"| {datetime.now(UTC):%Y-%m-%d %H:%M} | {describe(name, args)}{flat} | {engine_name} | "
                   f"{load_s:.1f} | **{job_s:.1f}** | **{spark_job / job_s:.2f}×** | {same} | {machine()} | "
                   f"`{command}` |")


def _same(result, reference) -> str:
    try:
        import numpy as np
        if isinstance(result, np.ndarray):
            return "yes" if np.allclose(result, reference, atol=1e-6) else "NO"
    except ImportError:
        pass
    return "yes" if result == reference else "NO"


def _flatness(times) -> str:
    """' (iteration n ÷ 2nd: r; per iteration a–b s)': whether the last iteration costs the second's."""
    if not times or len(times) < 2:
        return ""
    return (f" (iteration {len(times)} ÷ 2nd: {times[-1] / times[1]:.2f}; per iteration "
            f"{min(times[1:]):.3f}–{max(times[1:]):.3f} s)")


def describe(name: str, args) -> str:
    return {"wordcount": f"word count {args.words_mb:,} MB of text",
            "kmeans": f"K-Means {args.kmeans_points:,} × 500, K = 12, {args.iterations} iterations",
            "minebench": f"Minebench {args.blocks:,} blocks, {args.bits}-bit target",
            "sort": f"sort {args.sort_mb:,} MB of text lines",
            "iterative": "reduceByKey/union loop, 20,000 pairs, 20 iterations",
            "pagerank": "PageRank 20,000 vertices × 5 links, 10 iterations"}[name]


if __name__ == "__main__":
    main()
