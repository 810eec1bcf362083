"""Generate a deterministic text file of words (Zipf-like vocabulary) for the engine benches."""

import os
import random
import sys


def generate(path, megabytes, seed=7):
    """Write about `megabytes` MB of lines of words to `path` unless it already exists."""
    if os.path.exists(path) and os.path.getsize(path) >= megabytes * 1_000_000 * 0.99:
        return path
    rng = random.Random(seed)
    vocab = [f"w{i}" + "".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 6)))
             for i in range(50_000)]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    lines = []
    for _ in range(20_000):
        lines.append(" ".join(rng.choices(vocab, weights, k=rng.randint(5, 15))))
    block = ("\n".join(lines) + "\n").encode()
    target = megabytes * 1_000_000
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        written = 0
        while written < target:
            f.write(block)
            written += len(block)
    os.rename(tmp, path)
    return path


if __name__ == "__main__":
    print(generate(sys.argv[1], int(sys.argv[2])))
