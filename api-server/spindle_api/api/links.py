"""OpenAPI links from answers that carry a cluster to that cluster's own operations (for clients
and for stateful testing, which follows them): its address is its owner, product, version and id."""
from typing import Any

CLUSTER_PATH = "/clusters/{username}/{product}/{version}/{cluster_id}"


def _ref(path: str, method: str) -> str:
    return f"#/paths/{path.replace('~', '~0').replace('/', '~1')}/{method}"


def cluster_links(at: str = "") -> dict[str, Any]:
    """Links to the cluster at JSON pointer ``at`` of the answer (``""``: the answer is the cluster;
    ``"/items/0"``: the first of a page)."""
    address = {"username": f"$response.body#{at}/owner", "product": f"$response.body#{at}/product",
               "version": f"$response.body#{at}/version", "cluster_id": f"$response.body#{at}/id"}
    targets = {"GetCluster": (CLUSTER_PATH, "get", "the cluster"),
               "DeleteCluster": (CLUSTER_PATH, "delete", "destroy it"),
               "ClusterEvents": (CLUSTER_PATH + "/events", "get", "its timeline"),
               "ClusterJobs": (CLUSTER_PATH + "/jobs", "get", "its jobs"),
               "SubmitJob": (CLUSTER_PATH + "/jobs", "post", "run a job on it (once it is RUNNING)")}
    return {name: {"operationRef": _ref(path, method), "parameters": address, "description": description}
            for name, (path, method, description) in targets.items()}
