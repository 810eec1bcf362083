"""The JVM products' images share their first layer (Debian's JRE and tools): each Dockerfile's first
instruction after FROM is the same RUN, before any ARG or ENV that would change its build-cache key,
so the images built one after another (deploy/build-images) reuse it and the registry and every node
store and pull it once."""
import re
from pathlib import Path

import pytest

CATALOG = Path(__file__).resolve().parents[3] / "catalog"
JVM_PRODUCTS = ("hadoop/3.3", "cassandra/5.0", "spark/3.5", "jupyterlab/4", "kafka/4.0")


def instructions(dockerfile: Path) -> list[str]:
    """The Dockerfile's instructions, comments dropped and continued lines joined."""
    text = re.sub(r"^\s*#.*\n", "", dockerfile.read_text(), flags=re.M)
    return [" ".join(line.split()) for line in text.replace("\\\n", " ").splitlines() if line.strip()]


def first_after_from(product: str) -> str:
    steps = instructions(CATALOG / product / "Dockerfile")
    return steps[[s.split()[0] for s in steps].index("FROM") + 1]


@pytest.mark.parametrize("product", JVM_PRODUCTS)
def test_the_jre_layer_comes_first_and_installs_the_jre(product):
    step = first_after_from(product)
    assert step.startswith("RUN apt-get update") and "openjdk-17-jre-headless" in step, step


def test_every_jvm_product_has_the_same_first_layer():
    assert len({first_after_from(p) for p in JVM_PRODUCTS}) == 1, {p: first_after_from(p) for p in JVM_PRODUCTS}


def test_every_jvm_product_is_listed():
    uses_java = {f"{d.parent.name}/{d.name}" for d in CATALOG.glob("*/*") if (d / "Dockerfile").exists()
                 and "openjdk" in (d / "Dockerfile").read_text()}
    assert uses_java == set(JVM_PRODUCTS)
