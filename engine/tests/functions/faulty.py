"""Functions that fail on purpose, for the bad-input tests."""

import os
import signal
import time


class Raises:
    """Raises on the record 13."""

    def call(self, x, context):
        if x == 13:
            raise ValueError("thirteen is unlucky")
        return x


class KillsItsExecutor:
    """Kills the executor process running it, every time."""

    def call(self, x, context):
        os.kill(os.getpid(), signal.SIGKILL)


class SlowFirstAttempt:
    """On its first call anywhere, records its pid in the marker file and sleeps; the test
    kills that executor meanwhile. Later calls (the retry) pass through."""

    def call(self, x, context):
        marker = context.props()["test.marker"]
        if not os.path.exists(marker):
            tmp = f"{marker}.{os.getpid()}"
            with open(tmp, "w") as f:
                f.write(str(os.getpid()))
            try:
                os.link(tmp, marker)  # atomic: only the first executor gets here
            except FileExistsError:
                return x
            time.sleep(30)
        return x


class BrokenBefore:
    def before(self, context):
        raise RuntimeError("cannot open the database")

    def call(self, x, context):
        return x


class Hangs:
    """Never returns in reasonable time."""

    def call(self, x, context):
        time.sleep(3600)
        return x
