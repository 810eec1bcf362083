"""Word count functions of the seed's Figure 5, Python side."""


class Split:
    """Tokenize a line into (word, 1) pairs."""

    def call(self, line, context):
        return [(word, 1) for word in line.split()]


class Join:
    """Add two counts of the same word."""

    def call(self, a, b, context):
        return a + b
