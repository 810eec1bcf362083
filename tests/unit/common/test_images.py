"""A product's images as the background builder reports them (spindle_common.images): what the
catalog shows and what a launch waits for."""
import json

import pytest

from spindle_common.images import file_name, image_state, images_of, product_state, wait_ready

KAFKA = {"name": "kafka", "image": "spindle/kafka:4.0", "jobs": {"image": "spindle/kafka:4.0"},
         "roles": {"broker": {"image": "spindle/kafka-broker:4.0"}},
         "options_schema": {"properties": {"image": {"type": "string"}}}}


def write(state_dir, image, body):
    (state_dir / "images").mkdir(exist_ok=True)
    (state_dir / "images" / file_name(image)).write_text(body if isinstance(body, str) else json.dumps(body))


def test_the_images_a_manifest_names():
    assert images_of(KAFKA) == ["spindle/kafka-broker:4.0", "spindle/kafka:4.0"]  # not the options schema's
    assert file_name("spindle/kafka:4.0") == "spindle_kafka_4.0.json"


@pytest.mark.parametrize("files, wanted", [
    ({}, {"state": "ready"}),  # nothing built in the background: ready
    ({"spindle/kafka:4.0": {"state": "ready"}, "spindle/kafka-broker:4.0": {"state": "ready"}}, {"state": "ready"}),
    ({"spindle/kafka:4.0": {"state": "building", "step": 3, "steps": 12}},
     {"state": "preparing", "image": "spindle/kafka:4.0", "step": 3, "steps": 12, "image_state": "building",
      "message": "image spindle/kafka:4.0 building (step 3 of 12)"}),
    ({"spindle/kafka:4.0": {"state": "queued"}},
     {"state": "preparing", "image": "spindle/kafka:4.0", "step": None, "steps": None, "image_state": "queued",
      "message": "image spindle/kafka:4.0 queued"}),
    # a failure wins over an image still building
    ({"spindle/kafka-broker:4.0": {"state": "pushing"},
      "spindle/kafka:4.0": {"state": "failed", "message": "docker build failed: see build.log"}},
     {"state": "failed", "image": "spindle/kafka:4.0", "step": None, "steps": None, "image_state": "failed",
      "message": "image spindle/kafka:4.0 failed: docker build failed: see build.log"}),
    # half-written or foreign files count as still preparing, never as ready
    ({"spindle/kafka:4.0": '{"state": "bui'},
     {"state": "preparing", "image": "spindle/kafka:4.0", "step": None, "steps": None, "image_state": "queued",
      "message": "image spindle/kafka:4.0 queued: its state is being written"}),
    ({"spindle/kafka:4.0": {"state": "done"}},
     {"state": "preparing", "image": "spindle/kafka:4.0", "step": None, "steps": None, "image_state": "queued",
      "message": "image spindle/kafka:4.0 queued: its state file is not the builder's"}),
])
def test_a_products_state_from_its_images(tmp_path, files, wanted):
    for image, body in files.items():
        write(tmp_path, image, body)
    assert product_state(tmp_path, KAFKA) == wanted


def test_an_image_state_names_its_image_whatever_the_file_says(tmp_path):
    write(tmp_path, "spindle/kafka:4.0", {"image": "other", "state": "ready"})
    assert image_state(tmp_path, "spindle/kafka:4.0") == {"image": "spindle/kafka:4.0", "state": "ready"}


def test_waiting_for_an_image_ends_when_it_is_ready_or_failed(tmp_path):
    wait_ready(tmp_path, "spindle/kafka:4.0", timeout_s=0)  # no state file: ready at once
    write(tmp_path, "spindle/kafka:4.0", {"state": "failed", "message": "see its log"})
    with pytest.raises(RuntimeError, match="image spindle/kafka:4.0 failed: see its log"):
        wait_ready(tmp_path, "spindle/kafka:4.0")
    write(tmp_path, "spindle/kafka:4.0", {"state": "building", "step": 1, "steps": 9})
    with pytest.raises(RuntimeError, match=r"building \(step 1 of 9\)"):
        wait_ready(tmp_path, "spindle/kafka:4.0", timeout_s=0)
