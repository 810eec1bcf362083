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
env["PYSPARK_SUBMIT_ARGS"] = "--driver-memory 256m pyspark-shell"  # beside this driver in the job's memory
# The stranger tries (Spark gives up on a master after 3 × 20 s) while this driver runs its own
# application: the master must tell them apart at the same time.
stranger = subprocess.Popen([sys.executable, "-c", STRANGER], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)

spark = SparkSession.builder.appName("tenant").getOrCreate()
count = spark.sparkContext.parallelize(range(1000), 4).count()
spark.stop()

try:
    output, _ = stranger.communicate(timeout=150)
    stranger_exit = stranger.returncode
except subprocess.TimeoutExpired:
    stranger.kill()
    stranger_exit, output = None, "timed out: " + stranger.communicate()[0]

# What the stranger's driver said about the master (the whole log is long: Java stack traces).
notes = [line for line in output.splitlines()
         if ("ERROR" in line or "WARN" in line or "master" in line.lower()) and not line.startswith("\tat ")]
output = "\n".join(notes[:60]) + "\n...\n" + output[-1500:]

print("RESULT " + json.dumps({"stranger_exit": stranger_exit, "stranger_output": output[-6000:],
                              "count": count}), flush=True)
