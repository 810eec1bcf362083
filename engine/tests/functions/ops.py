"""User functions by reference ("engine/tests/functions/ops.py:Class") for the engine tests."""


class AddOne:
    def call(self, x, context):
        return x + 1


class IsEven:
    def call(self, x, context):
        return x % 2 == 0


class Digits:
    """flatMap: the decimal digits of an int, as ints."""

    def call(self, x, context):
        return [int(c) for c in str(abs(x))]


class Mod10:
    def call(self, x, context):
        return x % 10


class Add:
    def call(self, a, b, context):
        return a + b


class Negate:
    def call(self, x, context):
        return -x


class SumPartition:
    """mapPartitions: one sum per partition."""

    def call(self, it, context):
        return [sum(it)]


class PartitionTagger:
    """before/after hooks and the context: tags each record with (partition, calls so far)."""

    def before(self, context):
        self.partition = context.partition
        self.seen = 0

    def call(self, x, context):
        self.seen += 1
        return (self.partition, x)

    def after(self, context):
        self.partition = None


class Property:
    """Reads a driver property through the context."""

    def call(self, x, context):
        return (context.props()["test.tag"], x)


class Rendezvous:
    """map, identity: a task's first record waits until `test.rendezvous_n` executor processes have
    started a task (each leaves its pid in dir `test.rendezvous`), so a stage's tasks reach every
    executor however the machine schedules the slots' threads. Gives up after 30 s."""

    def before(self, context):
        import os
        import time
        props = context.props()
        folder, want = props["test.rendezvous"], int(props["test.rendezvous_n"])
        open(os.path.join(folder, str(os.getpid())), "w").close()
        deadline = time.monotonic() + 30
        while len(os.listdir(folder)) < want and time.monotonic() < deadline:
            time.sleep(0.01)

    def call(self, x, context):
        return x
