"""The NOTIFY listener while its database is away: it keeps trying (once a second) without flooding
the log: the first failure whole, then one line every RECONNECT_LOG_EVERY attempts."""
import logging
import socket
import time

from spindle_common import notify


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_listener_whose_database_is_away_keeps_trying_and_logs_one_line_now_and_then(monkeypatch, caplog):
    monkeypatch.setattr(notify, "RECONNECT_LOG_EVERY", 2)
    caplog.set_level(logging.INFO, logger=notify.log.name)
    url = f"postgresql+psycopg://spindle:x@127.0.0.1:{unused_port()}/gone"  # connection refused
    listener = notify.Listener(url, ["events"], lambda *_: None).start()
    deadline = time.monotonic() + 10
    while len([r for r in caplog.records if r.levelno == logging.WARNING]) < 2:
        assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
        time.sleep(0.1)
    listener.stop()
    assert not listener.thread.is_alive() and not listener.connected.is_set()
    said = [(r.levelname, r.getMessage()) for r in caplog.records]
    # attempts 1 (whole, with its traceback), 2 and 4 (a line each); not 3
    assert said[0] == ("ERROR", "listening on events failed; reconnecting") and caplog.records[0].exc_info
    assert [level for level, _ in said] == ["ERROR", "WARNING", "WARNING"], said
    assert said[1][1].startswith("listening on events: still failing after 2 attempts: ")
    assert said[2][1].startswith("listening on events: still failing after 4 attempts: ")
