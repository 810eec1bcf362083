"""The framework's calls to the master, recorded, and the status updates the master sends it."""


class RecordingDriver:
    """Stands in for pymesos' driver (the framework's calls to the master), recording them."""

    def __init__(self):
        self.killed: list[str] = []
        self.revived = 0

    def killTask(self, task_id):  # noqa: N802 (pymesos API names)
        self.killed.append(task_id["value"])

    def reviveOffers(self):  # noqa: N802
        self.revived += 1


def update(task_id, state, message="", reason=None):
    return {"task_id": {"value": task_id}, "state": state, "message": message, **({"reason": reason} if reason else {})}
