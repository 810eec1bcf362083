"""Entry point the Mesos agent starts (``spindle-mesos-executor``), with the standard executor
environment (MESOS_AGENT_ENDPOINT, MESOS_FRAMEWORK_ID, MESOS_EXECUTOR_ID, …)."""
import logging
import signal
import sys

from spindle_executor.driver import ExecutorDriver
from spindle_executor.executor import DockerExecutor


def run() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("spindle.executor").info("executor process up; subscribing to the agent")
    executor = DockerExecutor()
    driver = ExecutorDriver(executor, use_addict=True)

    def stop(signum, _frame):
        # SIGTERM from the agent: take our containers with us. (After SIGKILL the scheduler's
        # reconciler removes them by their task-id label.)
        executor.shutdown(driver)
        driver.stop()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    driver.run()
