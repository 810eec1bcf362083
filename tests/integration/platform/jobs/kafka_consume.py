"""Reads a topic from the beginning with a new consumer group, as a Spindle job of a Kafka cluster
(KAFKA_BOOTSTRAP_SERVERS and the login's KAFKA_SECURITY_PROTOCOL, KAFKA_SASL_MECHANISM and
KAFKA_SASL_USERNAME are set by the product's job runner; the password is the cluster's secret).

Usage: kafka_consume.py TOPIC EXPECTED. Prints one line ``RESULT {json}``: how many records it read,
how many distinct keys, whether every key 0..EXPECTED-1 came with its value ``record-<key>``; writes
the same to /job/output/count.json (the job's downloadable output). Exits 1 if not all came.
"""
import json
import os
import sys
import time
import uuid

from kafka import KafkaConsumer

topic, expected = sys.argv[1], int(sys.argv[2])
consumer = KafkaConsumer(topic, bootstrap_servers=os.environ["KAFKA_BOOTSTRAP_SERVERS"].split(","),
                         group_id=f"spindle-job-{uuid.uuid4().hex[:8]}", auto_offset_reset="earliest",
                         enable_auto_commit=False, consumer_timeout_ms=1000,
                         security_protocol=os.environ["KAFKA_SECURITY_PROTOCOL"],
                         sasl_mechanism=os.environ["KAFKA_SASL_MECHANISM"],
                         sasl_plain_username=os.environ["KAFKA_SASL_USERNAME"],
                         sasl_plain_password=os.environ["SPINDLE_CLUSTER_SECRET"])
records: dict[str, str] = {}
read = 0
deadline = time.monotonic() + 180
while len(records) < expected and time.monotonic() < deadline:
    for message in consumer:  # ends after a second without a record (consumer_timeout_ms)
        read += 1
        records[message.key.decode()] = message.value.decode()
consumer.close()
exact = records == {str(i): f"record-{i}" for i in range(expected)}
result = {"topic": topic, "read": read, "distinct": len(records), "exact": exact}
print("RESULT " + json.dumps(result))
if os.path.isdir("/job/output"):
    with open("/job/output/count.json", "w") as out:
        json.dump(result, out)
sys.exit(0 if exact else 1)
