"""Run as a Spindle job of a Spark cluster (args: the master's URL). First a *stranger*: a PySpark
driver in a process whose environment has no cluster secret (as another tenant's job would be)
tries to run an application on the master; then this driver, which got the secret from Spindle,
runs one. Prints one line: RESULT {"stranger_exit": …, "stranger_output": …, "count": …}."""
import json
import os
import subprocess
import sys
import time

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
# Its first attempt at the master is refused at once (the RPC's SASL handshake), but Spark then retries
# for a minute before it gives up: once the refusal is in its output, it is stopped.
REFUSED = "Failed to connect to master"
stranger = subprocess.Popen([sys.executable, "-c", STRANGER], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
lines = []
deadline = time.monotonic() + 150
assert stranger.stdout is not None
for line in stranger.stdout:
    lines.append(line)
    if REFUSED in line or "STRANGER COUNT" in line or time.monotonic() > deadline:
        break
if stranger.poll() is None:
    stranger.kill()
stranger_exit = stranger.wait()
output = "".join(lines)

# What the stranger's driver said about the master (the whole log is long: Java stack traces).
notes = [line for line in output.splitlines()
         if ("ERROR" in line or "WARN" in line or "master" in line.lower()) and not line.startswith("\tat ")]
output = "\n".join(notes[:60]) + "\n...\n" + output[-1500:]

spark = SparkSession.builder.appName("tenant").getOrCreate()
count = spark.sparkContext.parallelize(range(1000), 4).count()
spark.stop()
print("RESULT " + json.dumps({"stranger_exit": stranger_exit, "stranger_output": output[-6000:],
                              "count": count}), flush=True)
