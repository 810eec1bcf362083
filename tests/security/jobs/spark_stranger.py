"""Run as a Spindle job of a Spark cluster (args: the master's URL). First a *stranger*: a PySpark
driver in a process whose environment has no cluster secret (as another tenant's job would be)
tries to run an application on the master; then this driver, which got the secret from Spindle,
runs one. Prints one line: RESULT {"stranger_exit": …, "stranger_output": …, "count": …}."""
import json
import os
import subprocess
import sys

from pyspark.sql import SparkSession

MASTER = sys.argv[1]
STRANGER = f"""
from pyspark.sql import SparkSession
spark = SparkSession.builder.master({MASTER!r}).appName("stranger").getOrCreate()
print("STRANGER COUNT", spark.sparkContext.parallelize(range(10), 2).count(), flush=True)
"""

# Only what a plain PySpark needs: no SPINDLE_CLUSTER_SECRET, no SPARK_CONF_DIR, no gateway of ours.
env = {k: os.environ[k] for k in ("PATH", "SPARK_HOME", "PYSPARK_PYTHON", "JAVA_HOME") if k in os.environ}
env["HOME"] = "/tmp"
try:
    stranger = subprocess.run([sys.executable, "-c", STRANGER], env=env, capture_output=True, text=True,
                              timeout=150)
    stranger_exit, output = stranger.returncode, stranger.stdout + stranger.stderr
except subprocess.TimeoutExpired as e:
    stranger_exit, output = None, f"timed out: {e.stdout!r} {e.stderr!r}"

# What the stranger's driver said about the master (the whole log is long: Java stack traces).
notes = [line for line in output.splitlines()
         if ("ERROR" in line or "WARN" in line or "master" in line.lower()) and not line.startswith("\tat ")]
output = "\n".join(notes[:60]) + "\n...\n" + output[-1500:]

spark = SparkSession.builder.appName("tenant").getOrCreate()
count = spark.sparkContext.parallelize(range(1000), 4).count()
spark.stop()
print("RESULT " + json.dumps({"stranger_exit": stranger_exit, "stranger_output": output[-6000:],
                              "count": count}), flush=True)
