"""The JVM products' images carry a class-data sharing archive of the classes their daemons and tools
load (catalog/*/image/*-cds, made when the image is built), and their commands start every JVM with
it. Each case runs one command of an image as a member would, with ``-Xshare:on`` (a JVM that cannot
map the archive with the class path it was given refuses to start) and ``-Xlog:class+load`` (which says
where each class came from): the command's main class must come from the archive."""

from pathlib import Path

import docker
import pytest

from spindle_common.images import wait_ready

FROM_ARCHIVE = "source: shared objects file"

CASES = [
    # image, command, environment, tmpfs mounts, the class that must come from the archive
    ("spindle/hadoop:3.3", ["hdfs", "getconf", "-confKey", "dfs.replication"], {}, {},
     "org.apache.hadoop.hdfs.tools.GetConf"),
    ("spindle/hadoop:3.3", ["hdfs", "namenode", "-help"], {}, {},
     "org.apache.hadoop.hdfs.server.namenode.NameNode"),
    ("spindle/kafka:4.0", ["kafka", "storage", "random-uuid"], {}, {}, "kafka.tools.StorageTool"),
    ("spindle/cassandra:5.0", ["nodetool", "version"], {}, {}, "org.apache.cassandra.tools.NodeTool"),
    # the daemon itself, up to its configuration (there is none here, so it stops there)
    ("spindle/cassandra:5.0", ["cassandra"], {"CASSANDRA_IP": "127.0.0.1", "CASSANDRA_SEEDS": "127.0.0.1"},
     {"/data/1": ""},
     "org.apache.cassandra.service.CassandraDaemon"),
]


@pytest.mark.parametrize(("image", "command", "environment", "tmpfs", "main_class"), CASES,
                         ids=[f"{c[0].split('/')[1]}-{'-'.join(c[1][:2])}" for c in CASES])
def test_a_command_of_a_jvm_image_loads_its_classes_from_the_image_s_archive(
        platform_env, image, command, environment, tmpfs, main_class):
    wait_ready(Path(platform_env["SPINDLE_STATE_DIR"]), image)
    container = docker.from_env().containers.run(
        image, command, detach=True, network_mode="none", tmpfs=tmpfs,
        environment={**environment, "JAVA_TOOL_OPTIONS": "-Xshare:on -Xlog:class+load=info"})
    try:
        container.wait(timeout=300)  # (its exit code: the daemon without a configuration stops)
        text = container.logs(stdout=True, stderr=True).decode(errors="replace")
    finally:
        container.remove(force=True)
    assert "Unable to use shared archive" not in text, text[-2000:]
    loaded = [line for line in text.splitlines() if f" {main_class} " in line and "class,load" in line]
    assert loaded and FROM_ARCHIVE in loaded[0], (loaded, text[-2000:])
