"""RecordIO framing and Mesos resource arithmetic of the embedded master."""
from spindle_mesos_embedded import resources as res
from spindle_mesos_embedded.recordio import parse, record


def mount(root: str, mb: int = 100) -> dict:
    return {"name": "disk", "type": "SCALAR", "scalar": {"value": mb},
            "disk": {"source": {"type": "MOUNT", "mount": {"root": root}}}}


def cpus(value: float) -> dict:
    return {"name": "cpus", "type": "SCALAR", "scalar": {"value": value}}


def test_record_is_length_newline_json_in_bytes():
    framed = record({"type": "HEARTBEAT", "note": "é"})
    length, _, body = framed.partition(b"\n")
    assert int(length) == len(body) and parse(framed + record({"type": "X"})) == [{"type": "HEARTBEAT", "note": "é"},
                                                                                 {"type": "X"}]


def test_free_subtracts_scalars_and_whole_disks():
    total = [cpus(4), mount("/d1"), mount("/d2")]
    left = res.free(total, [cpus(1.5), mount("/d1")])
    assert left == [cpus(2.5), mount("/d2")]


def test_contains_names_what_does_not_fit():
    offer = [cpus(2), mount("/d1")]
    assert res.contains(offer, [cpus(1), mount("/d1")]) is None
    assert res.contains(offer, [cpus(3)]) == "cpus: asks 3, offer has 2"
    assert res.contains(offer, [mount("/d9")]) == "disk /d9 is not in the offer"
