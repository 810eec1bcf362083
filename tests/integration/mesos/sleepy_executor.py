"""A minimal executor for the conformance tests, on the real pymesos MesosExecutorDriver (with the
agent's executor token, as Spindle's executor sends it):
RUNNING on launch (its message names this process' pid, so tests can tell the same executor from a
new one), KILLED on kill; ``data`` = "crash" makes it exit at once."""
import base64
import os
import sys

from pymesos import Executor

from spindle_executor.driver import ExecutorDriver


class Sleepy(Executor):
    def launchTask(self, driver, task):  # noqa: N802
        if base64.b64decode(task.get("data", "") or b"") == b"crash":
            os._exit(3)
        driver.sendStatusUpdate({"task_id": task["task_id"], "state": "TASK_RUNNING",
                                 "message": f"sleeping in pid {os.getpid()}"})

    def killTask(self, driver, task_id):  # noqa: N802
        driver.sendStatusUpdate({"task_id": task_id, "state": "TASK_KILLED", "message": "killed"})


if __name__ == "__main__":
    ExecutorDriver(Sleepy(), use_addict=True).run()
    sys.exit(0)
