"""Task failure kinds shared by the executor and the backend (see rpc/EXECUTOR_CLI.md)."""


class TaskFailure(Exception):
    """A task failure of a kind the backend understands; `function` is the ref at fault."""

    kind = "INTERNAL"

    def __init__(self, message, function=""):
        super().__init__(message)
        self.function = function


class FunctionNotFound(TaskFailure):
    kind = "FUNCTION_NOT_FOUND"


class FunctionFailed(TaskFailure):
    kind = "FUNCTION_FAILED"


class BadData(TaskFailure, ValueError):
    """A value or file that the format cannot represent or parse."""

    kind = "BAD_DATA"


class CacheMiss(TaskFailure):
    kind = "CACHE_MISS"


class EngineError(RuntimeError):
    """Raised in the driver: a job failed. Names the function and partition at fault."""

    def __init__(self, message, kind="ENGINE", function="", partition=None, stage=""):
        super().__init__(message)
        self.kind = kind
        self.function = function
        self.partition = partition
        self.stage = stage


class FetchFailed(TaskFailure):
    """An input on another host could not be fetched; `host` is its file server."""

    kind = "FETCH_FAILED"

    def __init__(self, message, host, function=""):
        super().__init__(message, function)
        self.host = host
