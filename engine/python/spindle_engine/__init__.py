"""Spindle engine: a Spark-like driver API over Python and C++ executors (see engine/README.md)."""

from .dataset import Dataset, StorageLevel
from .engine import Cluster, Engine, Properties, Worker
from .errors import EngineError

__all__ = ["Cluster", "Dataset", "Engine", "EngineError", "Properties", "StorageLevel", "Worker"]
