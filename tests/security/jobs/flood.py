"""A job driver that floods its stdout, then leaves an output: ``flood.py <stdout bytes> <output MB>
[<sparse output GB>]``. Its last stdout line says what it wrote (the output's SHA-256), so a test
can check that the end of the log was kept and the output came back whole."""
import hashlib
import os
import sys

flood, output_mb = int(sys.argv[1]), int(sys.argv[2])
sparse_gb = int(sys.argv[3]) if len(sys.argv) > 3 else 0
line = b"y" * 16383 + b"\n"  # Docker's log copier cuts lines at 16 KiB anyway
out = sys.stdout.buffer
for _ in range(flood // len(line)):
    out.write(line)
out.flush()
digest = hashlib.sha256()
with open("/job/output/big.bin", "wb") as big:
    for _ in range(output_mb):
        chunk = os.urandom(1 << 20)
        digest.update(chunk)
        big.write(chunk)
if sparse_gb:  # as large as it says, with no block of it on the node's disk
    with open("/job/output/sparse.bin", "wb") as sparse:
        sparse.truncate(sparse_gb << 30)
print(f"FLOOD DONE {flood} bytes, output sha256 {digest.hexdigest()}", flush=True)
print("stderr stays small", file=sys.stderr)
