"""The API's shapes as this client names them: the generated models (``models_gen.py``, made by
``scripts/gen-clients`` from ``docs/openapi.json``) under friendly names. When the API renames a
schema, only this module changes. Nothing here is written by hand but the names."""
from spindle_client.models_gen import (
                                       Capacity,
                                       ClusterMetrics,
                                       ClusterPage,
                                       ClusterState,
                                       ClusterView,
                                       CreatedToken,
                                       DatasetView,
                                       DiskClassCapacity,
                                       ErrorEnvelope,
                                       EventView,
                                       ExecRecord,
                                       HeldDisk,
                                       Job,
                                       Manifest,
                                       MemberView,
                                       Node,
                                       Plan,
                                       ProductCatalog,
                                       ProductImages,
                                       ProductSummary,
                                       Quota,
                                       QuotaAmounts,
                                       TokenOut,
                                       UserOut,
)

Cluster = ClusterView
Member = MemberView
Event = EventView
Disk = HeldDisk
User = UserOut
Product = ProductSummary
DiskCapacity = DiskClassCapacity
Token = TokenOut
Dataset = DatasetView

__all__ = ["Capacity", "Cluster", "ClusterMetrics", "ClusterPage", "ClusterState", "Disk", "DiskCapacity",
           "ErrorEnvelope", "Event", "ExecRecord", "Job", "Manifest", "Member", "Plan", "Product", "ProductCatalog",
           "ProductImages",
           "User", "CreatedToken", "Token", "Quota", "QuotaAmounts", "Dataset", "Node"]
