"""How soon writes were acknowledged again after a loss, from when each was sent and acknowledged."""
import pytest

from tests.support.acks import longest_pause, serving_again_after


@pytest.mark.parametrize(("sent", "acked", "since", "expected"), [
    ({}, {}, 10.0, None),  # nothing written
    ({"a": 1.0, "b": 2.0}, {"a": 1.5, "b": 2.5}, 10.0, None),  # all sent before the loss
    # a write sent before the loss and acknowledged after it does not count
    ({"a": 9.0, "b": 11.0}, {"a": 12.0, "b": 14.0}, 10.0, 4.0),
    # the first acknowledgement of those sent after, not the first sent
    ({"a": 10.0, "b": 11.0}, {"a": 17.0, "b": 13.5}, 10.0, 3.5),
    ({"a": 10.0}, {}, 10.0, None),  # sent after, never acknowledged
    ({1: 10.0, 2: 10.5}, {1: 10.25}, 10.0, 0.25),  # int keys (Cassandra's rows)
])
def test_serving_again_after(sent, acked, since, expected):
    assert serving_again_after(sent, acked, since) == expected


@pytest.mark.parametrize(("acked", "since", "expected"), [
    ([], 10.0, 0.0),  # no acknowledgement after the loss: no pause measured
    ([5.0, 8.0], 10.0, 0.0),  # all before it
    ([12.0], 10.0, 2.0),  # from the loss to the first one
    ([11.0, 11.5, 19.0, 19.5], 10.0, 7.5),  # the longest gap between two
    ([19.5, 11.0, 19.0, 11.5], 10.0, 7.5),  # in any order
    ([3.0, 10.5, 11.0], 10.0, 0.5),  # the ones before the loss are left out
])
def test_longest_pause(acked, since, expected):
    assert longest_pause(acked, since) == pytest.approx(expected)
