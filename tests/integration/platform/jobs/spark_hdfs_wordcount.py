"""A word count over HDFS, submitted as a Spindle job to a Spark cluster bound to an HDFS cluster:
reads argv[1] and writes argv[2] as plain paths (no scheme, no host: the binding made them hdfs://),
then prints one JSON line with the file system it used and the counts it wrote."""
import json
import sys

from pyspark.sql import SparkSession

source, target = sys.argv[1], sys.argv[2]
spark = SparkSession.builder.appName("spindle-hdfs-wordcount").getOrCreate()
sc = spark.sparkContext
counts = sc.textFile(source).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(lambda a, b: a + b, 4)
counts.map(lambda kv: f"{kv[0]}\t{kv[1]}").saveAsTextFile(target)
default_fs = sc._jsc.hadoopConfiguration().get("fs.defaultFS")
partitions = sc.textFile(source).getNumPartitions()
print("RESULT " + json.dumps({"default_fs": default_fs, "input_partitions": partitions,
                              "counts": dict(counts.collect())}))
spark.stop()
